"""Whole replies only (issue 37): a reply the provider cut for length or filtered, or JSON cut before it closed,
is unreadable with its reason and the cap that cut it; never repaired into an answer, in every suite."""

from __future__ import annotations

import anyio
import pytest
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage

from clinical_cf.replies import UNREADABLE_CODES, json_cut, json_objects, not_whole, read_flag, read_score, unreadable_code
from clinical_cf.solvers.css import read_arm, read_recommendations
from clinical_cf.solvers.medpic import read_answer
from clinical_cf.solvers.sensitivity import read_distribution_reading
from clinical_cf.solvers.workflow import parse_decision
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

CAP = 64


class CutModel(MockModel):
    """A mockllm model whose every reply ends with Inspect's stop reason `stop_reason` (a provider's token cap)."""

    def __init__(self, name: str, respond, stop_reason: str = "max_tokens") -> None:
        super().__init__(name, respond)
        self.stop_reason = stop_reason

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = super().__call__(messages, tools, tool_choice, config)
        out.choices[0].stop_reason = self.stop_reason  # type: ignore[assignment]
        out.usage = ModelUsage(input_tokens=10, output_tokens=CAP, total_tokens=10 + CAP)
        return out


@pytest.mark.parametrize("stop_reason, code", [("max_tokens", "truncated"), ("model_length", "truncated"), ("content_filter", "filtered")])
def test_every_reader_refuses_a_reply_the_provider_did_not_finish(stop_reason, code):
    options = {"A": "Warfarin", "B": "Apixaban"}
    readings = [
        read_recommendations(recommendations_json("Letrozole"), stop_reason),
        read_answer('{"rationale": "x", "answer": ["A"]}', options, stop_reason),
        read_distribution_reading('{"A": 0.7, "B": 0.3}', ["Sepsis", "Lymphoma"], stop_reason),
    ]
    assert all(r.provenance == "unreadable" and r.reason.startswith(code) and not r.needs_reader for r in readings)
    decision = parse_decision("ACTION: ESCALATE, CONFIDENCE: 0.8", stop_reason)
    assert decision.action is None and decision.unreadable == code
    assert read_score('{"score": 1, "rationale": "moved"}', (0.0, 0.5, 1.0), stop_reason=stop_reason).value is None
    assert read_flag('{"mentions": true}', "mentions", stop_reason=stop_reason).value is None


@pytest.mark.parametrize(
    "cut",
    ['{"recommendations": [{"treatment": "FOLFOX", "rationale": "stage III"}, {"treatment": "Capecitabine", "rationale": "alt',
     '{"recommendations": [{"treatment": "Osimertinib", "rationale": "EGFR"}], "not_recom',
     'Here is the plan:\n```json\n{"recommendations": [{"treatment": "Abiraterone", "rationale": "mHSPC"}], "not_recommended": [{"treatment": "Docet'],
)
def test_json_cut_before_it_closed_is_truncated_even_without_a_stop_reason(cut):
    assert json_cut(cut) and not json_objects(cut)  # never repaired into an object
    reading = read_recommendations(cut)
    assert reading.provenance == "unreadable" and unreadable_code(reading.reason) == "truncated"


def test_complete_json_is_still_repaired_and_a_brace_in_a_string_is_not_structure():
    assert json_objects('{"answer": ["A"],}')[0].provenance == "repaired"  # a trailing comma: syntax only
    assert not json_cut('{"rationale": "a { in text", "answer": ["A"]}')
    assert not_whole('{"rationale": "x", "answer": ["A"]}', "stop") is None


def test_the_cap_is_recorded_and_every_code_is_documented():
    arm = anyio.run(lambda: read_arm(recommendations_json("Letrozole"), stop_reason="max_tokens", max_tokens=CAP))
    assert arm.max_tokens == CAP and arm.unreadable_code == "truncated"
    assert {"truncated", "filtered", "empty", "conflicting answers", "pointer", "unconfirmed", "readers disagree"} <= set(UNREADABLE_CODES)


def _run(task, reply: str, stop_reason: str = "max_tokens"):
    model = CutModel("mockllm/model", lambda prompt: reply, stop_reason)
    judge = MockModel("mockllm/judge", lambda prompt: '{"score": 1, "rationale": "moved as expected"}')
    log = eval(task, model=model.model, model_roles={"judge": judge.model}, display="none", limit=2)[0]
    assert log.status == "success", log.error
    assert log.samples and not any(s.error for s in log.samples)
    return [next(iter(s.scores.values())) for s in log.samples]


@pytest.mark.slow  # four small evals
def test_a_reply_cut_at_max_tokens_is_unreadable_truncated_in_every_suite():
    css_scores = _run(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"), recommendations_json("Letrozole"))
    for s in css_scores:
        assert s.value is None or str(s.value) == "nan"  # never judged
        assert s.metadata["unreadable"] == {"baseline": "truncated", "counterfactual": "truncated"}
        assert s.metadata["max_tokens"] == {"baseline": CAP, "counterfactual": CAP}
        assert s.metadata["parse"] == {"baseline": "unreadable", "counterfactual": "unreadable"}
    medpic_scores = _run(medpic(populations="renal", reader="none"), '{"rationale": "x", "answer": ["A"]}')
    assert all(s.metadata["parse"] == "unreadable" and s.metadata["unreadable"] == "truncated" and s.metadata["max_tokens"] == CAP
               and s.metadata["parsed"] is None for s in medpic_scores)
    workflow_scores = _run(workflow(split="dev"), '{"action": "ESCALATE", "confidence": 0.8, "reason": "x"}')
    assert all(s.metadata["parse"] == "unreadable" and s.metadata["unreadable"] == "truncated" and s.metadata["max_tokens"] == CAP
               for s in workflow_scores)
    sensitivity_scores = _run(sensitivity(types="surface", logprobs=False), '{"A": 0.5, "B": 0.3, "C": 0.2}', "content_filter")
    assert all(s.metadata["unreadable"] == {"baseline": "filtered", "perturbed": "filtered"} and s.metadata["max_tokens"] is None
               for s in sensitivity_scores)
