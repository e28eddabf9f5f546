"""The sensitivity suite's per-attribute invariance table (issue 47)."""

from __future__ import annotations

import pandas as pd

from clinical_cf.analysis.report import table_sensitivity_invariance


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
