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
    assert "<td>0.000</td>" in html and "<td>no data</td>" in html
    assert '<a href="#section">Section</a>' in html and '<h2 id="section">' in html
