"""Report tables tell a measured zero from a value nobody measured, in markdown and in HTML."""

import math

import pandas as pd

from clinical_cf.analysis.html import render_report
from clinical_cf.analysis.tables import markdown_table


def test_zero_and_no_data_read_differently():
    table = pd.DataFrame({"model": ["a", "b"], "css": [0.0, math.nan]})
    md = markdown_table(table)
    assert "| a | 0 |" in md and "| b | no data |" in md
    html = render_report([("h1", "Report"), ("h2", "Section"), ("table", table)])
    assert "<td>0</td>" in html and "<td>no data</td>" in html
    assert '<a href="#section">Section</a>' in html and '<h2 id="section">' in html


def test_integers_read_as_integers_and_fractions_without_trailing_zeros_in_both_renderings():
    table = pd.DataFrame({"rank": [2.5, 1.0], "tuples": [215.0, 3.0], "css": [0.371875, 0.5], "tiny": [0.0004, 1e-9]})
    md = markdown_table(table)
    assert "| 2.5 | 215 | 0.372 | 0.0004 |" in md and "| 1 | 3 | 0.5 | 1e-09 |" in md
    html = render_report([("h1", "Report"), ("table", table)])
    assert "<td>2.5</td>" in html and "<td>215</td>" in html and "215.000" not in html and "2.500" not in html


def test_text_cells_keep_pipes_and_line_breaks_inside_their_cell():
    md = markdown_table(pd.DataFrame({"run": ["a|b", "two\nlines"], "n": [1, 2]}))
    assert "| a\\|b | 1 |" in md and "| two lines | 2 |" in md
