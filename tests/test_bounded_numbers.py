"""A 5,000-digit integer in a reply never ends an eval: in every suite the sample is unscored (or counted
unreadable) with a reason, and the eval completes (issue 29; Python's int-string limit raised before)."""

from __future__ import annotations

import pytest
from inspect_ai import eval

from clinical_cf.replies import number_problem
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

HUGE = "7" * 5000


def _run(task, reply: str, judge_reply: str = '{"score": 1, "rationale": "moved as expected"}'):
    model = MockModel("mockllm/model", lambda prompt: reply)
    judge = MockModel("mockllm/judge", lambda prompt: judge_reply)
    log = eval(task, model=model.model, model_roles={"judge": judge.model}, display="none", limit=2)[0]
    assert log.status == "success", log.error
    assert log.samples and not any(s.error for s in log.samples)
    return [next(iter(s.scores.values())) for s in log.samples]


@pytest.mark.parametrize(
    "text, why",
    [(HUGE, "5000 digits"), ('{"score": 1e-400}', "finite normal"), ('{"a": NaN}', "non-finite"), ('{"a": 1e400}', "finite normal"),
     ("confidence: -Infinity", "non-finite"), ("7" * 31, "31 digits")],
)
def test_out_of_bound_numbers_have_a_reason(text, why):
    assert why in (number_problem(text) or "")


def test_numbers_in_bounds_are_not_flagged():
    assert number_problem('{"A": 0.6, "B": 4e-1, "dose": 1200, "id": ' + "1" * 30 + "}") is None


@pytest.mark.slow  # four small evals
def test_a_5000_digit_integer_in_any_suite_leaves_the_sample_unscored_and_the_eval_complete():
    css_scores = _run(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"), recommendations_json("Letrozole")[:-1] + f', "n": {HUGE}}}')
    assert all(s.value is None or str(s.value) == "nan" or s.metadata.get("unreadable") for s in css_scores)
    assert all("digits" in str(s.metadata.get("unreadable_reason")) for s in css_scores)
    assert all(set(s.metadata["unreadable"].values()) == {"number out of bounds"} for s in css_scores)
    # the judge's verdict with a huge integer: no verdict (grader_failed), never an exception
    judged = _run(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"), recommendations_json("Letrozole"), judge_reply=f'{{"score": {HUGE}}}')
    assert all(s.metadata.get("judge_attempts") == 3 for s in judged)
    medpic_scores = _run(medpic(populations="renal", reader="none"), f'{{"rationale": "x", "answer": ["A"], "ref": {HUGE}}}')
    assert all(s.metadata["parse"] == "unreadable" and s.metadata["parsed"] is None for s in medpic_scores)
    workflow_scores = _run(workflow(split="dev"), f'{{"action": "ESCALATE", "confidence": {HUGE}, "reason": "x"}}')
    assert all(s.metadata["parse"] == "unreadable" and "digits" in s.metadata["unreadable_reason"] for s in workflow_scores)
    sensitivity_scores = _run(sensitivity(types="surface", logprobs=False), f'{{"A": 0.5, "B": 0.5, "C": {HUGE}}}')
    assert all("digits" in str(s.metadata.get("unreadable_reason")) for s in sensitivity_scores)
    assert all(set(s.metadata["unreadable"].values()) == {"number out of bounds"} for s in sensitivity_scores)
