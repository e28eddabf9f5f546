"""CSS logs as tables: one row per tuple, traceable to samples."""

import json

import pandas as pd
import pytest
from inspect_ai import eval

from clinical_cf.analysis.css import agent_lift, css_samples, family_table
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


@pytest.mark.slow  # a CSS eval over every family
def test_rows_per_tuple_and_family_means(tmp_path):
    model = MockModel("mockllm/model", lambda p: recommendations_json("FOLFOX"))
    # Scores 1 on controls ("no change"), 0 on Family D: the model never moves.
    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 1 if "No change in substance" in p else 0, "rationale": "r"}))
    log = eval(
        css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
        model=model.model,
        model_roles={"judge": judge.model},
        display="none",
        log_dir=str(tmp_path),
    )[0]
    frame = css_samples(tmp_path)
    assert len(frame) == len(log.samples)
    assert set(frame.columns) >= {"model", "case_id", "family", "intervention_id", "css", "cms", "split"}
    table = family_table(frame)
    assert table.loc["mockllm/model", "D"] == 0.0 and table.loc["mockllm/model", "N"] == 1.0
    assert table.loc["mockllm/model", "D_n"] == 2


def test_agent_lift_is_paired_on_common_tuples():
    def rows(scores):
        return pd.DataFrame(
            [{"model": "m", "case_id": f"c{i}", "intervention_id": "D1", "family": "D", "css": s} for i, s in enumerate(scores)]
        )
    single = rows([0.0, 0.0, 0.5, 1.0])
    agent = rows([1.0, 0.5, 0.5])  # the agent ran only the first three tuples
    table = agent_lift(single, agent)
    row = table.iloc[0]
    assert row["n"] == 3
    assert row["css_single_shot"] == pytest.approx(0.5 / 3) and row["css_agent"] == pytest.approx(2.0 / 3)
    assert row["lift"] == pytest.approx(0.5)
