"""The per-model parse table, built from real mock-model logs read with inspect_ai.analysis.samples_df."""

import json

import pandas as pd
import pytest
from inspect_ai import Task, eval
from inspect_ai.analysis import EvalModel, EvalTask, SampleScores, SampleSummary, samples_df
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

from clinical_cf.analysis.parse_quality import parse_table
from clinical_cf.scorers.css_judge import judge_direction
from clinical_cf.scorers.medpic import medpic_exact_set
from clinical_cf.solvers.css import CSSArms, arm_result
from helpers import MockModel

OPTIONS = {"A": "Metformin", "B": "Nitrofurantoin", "C": "None of the above"}
REPLIES = {"q1": "ANSWER: B", "q2": '{"answer": ["B"]}', "q3": "", "q4": "Perhaps."}


@solver
def medpic_replies():
    async def solve(state, generate):
        state.output.completion = REPLIES[state.sample_id]
        return state

    return solve


@solver
def css_replies():
    async def solve(state, generate):
        arms = state.store_as(CSSArms)
        arms.baseline = arm_result(json.dumps({"recommendations": ["FOLFOX"], "not_recommended": []}))
        arms.counterfactual = arm_result("RECOMMENDED: FOLFIRI; bevacizumab")  # issue 21: markdown goes to the reader role
        return state

    return solve


def test_parse_table_from_logs(tmp_path):
    model = MockModel("mockllm/model", lambda _: "").model
    medpic_samples = [
        Sample(id=q, input="q", metadata={"answer": ["B"], "options": OPTIONS, "kind": "gf", "rule_id": "r"}) for q in REPLIES
    ]
    css_sample = Sample(id="c:D1", input="p", metadata={"case_id": "c", "family": "D", "expected_change": "e", "scoring_rule": "r"})
    logs = eval(
        [Task(name="medpic", dataset=medpic_samples, solver=medpic_replies(), scorer=medpic_exact_set()),
         Task(name="css_family_d", dataset=[css_sample], solver=css_replies(), scorer=judge_direction())],
        model=model, model_roles={"judge": MockModel("mockllm/judge", lambda _: '{"score": 1, "rationale": "r"}').model},
        log_dir=str(tmp_path), display="none",
    )
    assert all(log.status == "success" for log in logs)
    frame = samples_df(str(tmp_path), columns=SampleSummary + SampleScores + EvalModel + EvalTask)
    table = parse_table(frame).set_index("suite")
    medpic = table.loc["medpic"]
    assert medpic["model"] == "mockllm/model" and medpic["replies"] == 4
    assert (medpic["field"], medpic["json"], medpic["invalid"], medpic["unreadable"]) == pytest.approx((0.25, 0.25, 0.25, 0.25))
    css = table.loc["css"]
    assert css["replies"] == 2 and css["json"] == pytest.approx(0.5) and css["field"] == pytest.approx(0.5)


@pytest.mark.parametrize("suite_values", [[1.0, float("nan"), 0.0], [float("nan")] * 3, [1.0] * 3, [float("nan"), 0.5, 1.0]])
def test_a_suite_without_parse_records_counts_scored_from_its_own_score_never_the_registration_check(suite_values):
    """A suite whose scores record no `parse` (the docs' recipe) is scored where its own score has a value; the
    registration check every sample gets (value 1) never makes an unreadable reply scored (blind round b41)."""
    frame = pd.DataFrame({
        "suite": "toy", "task_name": "toy", "model": "m", "error": "", "limit": "",
        "score_registration_check": 1.0, "score_registration_check_metadata": "{}",
        "score_toy_match": suite_values, "score_toy_match_metadata": ['{"reason": "r"}'] * len(suite_values),
    })
    row = parse_table(frame).iloc[0]
    assert row["samples"] == len(suite_values)
    assert row["scored"] == sum(v == v for v in suite_values)


def test_empty_frame_gives_an_empty_table():
    assert parse_table(pd.DataFrame()).empty
