"""MedPIC log analysis on the hand-computed fixture (see tests/scorers/test_medpic.py for the arithmetic)."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from clinical_cf.analysis.medpic import (
    dimension_accuracy,
    joint_outcomes,
    medpic_summary,
    rationale_summary,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "medpic_scored_rows.jsonl"
ROWS = pd.DataFrame([json.loads(line) for line in FIXTURE.read_text().splitlines()])


def test_summary_point_estimates_and_rule_clustered_intervals():
    table = medpic_summary(ROWS, n_resamples=300)
    row = table.iloc[0]
    assert row["questions"] == 13 and row["pairs"] == 4 and row["unparseable"] == 2
    assert row["accuracy"] == pytest.approx(8 / 13) and row["gf_cf_gap"] == pytest.approx(0.5 - 6 / 9)
    assert row["pair_accuracy"] == pytest.approx(0.5) and row["deactivation_accuracy"] == pytest.approx(0.5)
    for key in ("accuracy", "cf_accuracy", "pair_accuracy"):
        assert row[f"{key}_lo"] <= row[key] <= row[f"{key}_hi"]
    assert medpic_summary(ROWS, n_resamples=300).equals(table)  # seeded


def test_per_dimension_accuracy():
    table = dimension_accuracy(ROWS, "organ_system", n_resamples=200).set_index("organ_system")
    assert table.loc["cardiovascular", "accuracy"] == pytest.approx(5 / 6) and table.loc["cardiovascular", "n"] == 6
    assert table.loc["renal", "accuracy"] == pytest.approx(3 / 7) and table.loc["renal", "rules"] == 2
    with pytest.raises(ValueError):
        dimension_accuracy(ROWS, "colour")


def test_joint_outcomes_and_rationale_rates():
    joint = joint_outcomes(ROWS).iloc[0]
    assert (joint["both"], joint["trigger_only"], joint["control_only"], joint["neither"]) == (2, 1, 0, 1)
    rationale = rationale_summary(ROWS).iloc[0]
    assert rationale["wrong_deactivation"] == 2 and rationale["mention_rate"] == 0.5
    assert rationale["retained_selection_rate"] == 0.5
    assert math.isnan(rationale_summary(ROWS.assign(mentions=None)).iloc[0]["mention_rate"])
