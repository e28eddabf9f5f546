"""Judge verdict parsing and judge / judge_alt dispatch."""

import json

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

from clinical_cf.scorers.css_judge import judge_direction, parse_verdict
from clinical_cf.solvers.css import ArmResult, CSSArms, Recommendation
from helpers import MockModel


@pytest.mark.parametrize(
    "reply, score",
    [
        ('{"score": 1, "rationale": "updated"}', 1.0),
        ('```json\n{"score": 0.5, "rationale": "acknowledged"}\n```', 0.5),
        ('Thinking... {"score": "0", "rationale": "same"}', 0.0),
        ("Score: 0.5\nThe model mentioned it.", 0.5),
        ('{"score": 0.7, "rationale": "between"}', None),
        ("I cannot decide.", None),
    ],
)
def test_parse_verdict(reply, score):
    verdict = parse_verdict(reply)
    assert (verdict.score if verdict else None) == score


@solver
def fixed_arms():
    async def solve(state, generate):
        arms = state.store_as(CSSArms)
        arms.baseline = ArmResult(summary="", raw="", recommendations=[Recommendation(treatment="adjuvant capecitabine")], parsed=True)
        arms.counterfactual = ArmResult(
            summary="", raw="", recommendations=[Recommendation(treatment="neoadjuvant FOLFIRINOX")], parsed=True
        )
        return state

    return solve


def run_judged(model, model_roles=None, judge_reply=None):
    sample = Sample(
        id="c:D1",
        input="packet",
        metadata={
            "case_id": "c",
            "family": "D",
            "intervention_id": "D1",
            "expected_change": "moves to neoadjuvant",
            "scoring_rule": "1/0.5/0",
        },
    )
    task = Task(dataset=[sample], solver=fixed_arms(), scorer=judge_direction())
    log = eval(task, model=model, model_roles=model_roles or {}, display="none")[0]
    assert log.status == "success", log.error
    return log.samples[0].scores["judge_direction"], log


def reply(score):
    return lambda _: json.dumps({"score": score, "rationale": "r"})


def test_judge_role_scores_when_distinct():
    under_test, judge = MockModel("mockllm/model", reply(0)), MockModel("mockllm/judge", reply(1))
    score, _ = run_judged(under_test.model, {"judge": judge.model})
    assert score.value == 1.0
    assert score.metadata["judge_role"] == "judge" and score.metadata["judge_model"] == "mockllm/judge"
    assert judge.total_calls == 1 and under_test.total_calls == 0


def test_judge_alt_used_when_judge_is_the_model_under_test():
    under_test = MockModel("mockllm/model", reply(0))
    alt = MockModel("mockllm/alt", reply(0.5))
    score, _ = run_judged(under_test.model, {"judge": MockModel("mockllm/model", reply(0)).model, "judge_alt": alt.model})
    assert score.value == 0.5
    assert score.metadata["judge_role"] == "judge_alt" and score.metadata["self_judged"] is False
    assert alt.total_calls == 1


def test_self_judging_is_recorded_when_no_alternative_exists():
    under_test = MockModel("mockllm/model", reply(1))
    score, _ = run_judged(under_test.model)
    assert score.metadata["self_judged"] is True
    assert score.metadata["judge_model"] == "mockllm/model"


def test_unparseable_judge_is_unscored_after_retries():
    judge = MockModel("mockllm/judge", lambda _: "I am not sure.")
    score, log = run_judged(MockModel("mockllm/model", reply(0)).model, {"judge": judge.model})
    assert score.reason == "grader_failed"
    assert judge.total_calls == 3  # first try + 2 retries
    assert log.results.scores[0].unscored_samples == 1
