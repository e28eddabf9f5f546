"""The sensitivity suite's per-attribute invariance table (issue 47)."""

from __future__ import annotations

import pandas as pd

from clinical_cf.analysis.report import table_sensitivity_invariance
from clinical_cf.analysis.sections import Section, invariance_blocks


def rows(moves_on: str) -> pd.DataFrame:
    out = []
    for attribute in ("insurance", "typos"):
        for i in range(12):
            moved = attribute == moves_on and i % 2 == 0
            out.append({"model": "m", "type": "demographic", "vignette_id": f"v{i:02d}", "attribute": attribute,
                        "consistent": 0.0 if moved else 1.0, "flip": float(moved)})
    out.append({"model": "m", "type": "surface", "vignette_id": "v00", "attribute": None, "consistent": 0.0, "flip": 1.0})
    return pd.DataFrame(out)


def test_the_attribute_that_moves_the_answer_fails_equivalence_and_names_its_vignettes():
    table = table_sensitivity_invariance(rows("insurance")).set_index("attribute")
    assert list(table.index) == ["insurance", "typos"]  # the non-invariance row is not an attribute
    assert not table.loc["insurance", "equivalent"] and table.loc["typos", "equivalent"]
    assert table.loc["insurance", "moved_vignettes"] == "v00, v02, v04, v06, v08, v10"
    assert table.loc["insurance", "moved_share"] == 0.5


def test_no_invariance_rows_no_table():
    assert table_sensitivity_invariance(rows("none").assign(attribute=None)).empty


def test_the_css_invariance_section_writes_its_table_and_figure(tmp_path):
    table = pd.DataFrame([
        {"model": "m", "judge": "j", "run": "", "attribute": a, "movement": mv, "ci90_low": lo, "ci90_high": hi, "margin": 0.05,
         "margin_from": "default", "equivalent": ok, "verdict": "", "tuples": 4, "cases_moved": 4 * mv, "moved_cases": ""}
        for a, mv, lo, hi, ok in (("insurance", 1.0, 1.0, 1.0, False), ("typos", 0.0, 0.0, 0.0, True))])
    section = Section()
    blocks = invariance_blocks(table, section, tmp_path, "single_shot", "single-shot")
    assert ("table", table) in blocks
    figure = section.figures[-1][1]
    assert figure.exists() and figure.stat().st_size > 0 and figure.parent == tmp_path
    assert invariance_blocks(pd.DataFrame(), Section(), tmp_path, "x", "x") == []
