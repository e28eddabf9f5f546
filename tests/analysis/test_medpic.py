"""MedPIC log analysis on the hand-computed fixture (see tests/scorers/test_medpic.py for the arithmetic)."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval

from clinical_cf.analysis.medpic import (
    dimension_accuracy,
    joint_outcomes,
    medpic_rows,
    medpic_summary,
    rationale_summary,
)
from clinical_cf.tasks.medpic_gf.medpic_gf import medpic_gf
from helpers import MockModel

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


def test_invalid_replies_are_left_out_of_the_rows_as_the_log_metrics_leave_them_out(tmp_path):
    task = medpic_gf(populations="pregnancy")
    ids = [s.id for s in task.dataset][:4]
    first = {}

    def reply(prompt: str) -> str:
        # The first two questions get an empty reply (invalid output), the others a readable one.
        first.setdefault(prompt, len(first))
        return "" if first[prompt] < 2 else "ANSWER: A"

    log = eval(task, model=MockModel("mockllm/model", reply).model, sample_id=ids, display="none", log_dir=str(tmp_path))[0]
    value = lambda s: s.scores["medpic_exact_set"].value  # noqa: E731
    unscored = [s for s in log.samples if isinstance(value(s), float) and math.isnan(value(s))]
    assert len(unscored) == 2
    rows = medpic_rows(log.location)
    assert len(rows) == 2 and set(rows["sample_id"]) == {str(s.id) for s in log.samples} - {str(s.id) for s in unscored}
