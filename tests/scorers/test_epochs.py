"""Two epochs per suite: every metric uses both epochs' replies, checked against hand-computed values.

Before: a reduced score kept only the first epoch's metadata, so metrics computed from metadata
(verdict shares, parse quality, workflow utility and ECE, the sensitivity profile, MedPIC's
unparseable count) saw one epoch while `accuracy` saw both.
"""

import json

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

from clinical_cf.scorers.css_judge import judge_direction
from clinical_cf.scorers.medpic import medpic_exact_set
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.solvers.css import CSSArms, arm_result
from clinical_cf.solvers.sensitivity import SensitivityArms
from clinical_cf.solvers.workflow import workflow_decision
from helpers import MockModel, data_blocks

PLAIN = MockModel("mockllm/model", lambda _: "")


def metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {k: v.value for s in log.results.scores for k, v in s.metrics.items()}


def test_css_two_epochs():
    # One family-D tuple. Epoch 1: the counterfactual moved (JSON reply), judged 1. Epoch 2: it did
    # not (an answer-line reply, same list as the baseline), judged 0. A second tuple (family A) is judged
    # 0.5 in both epochs.
    @solver
    def arms_by_epoch():
        async def solve(state, generate):
            arms = state.store_as(CSSArms)
            arms.baseline = arm_result(json.dumps({"recommendations": ["adjuvant capecitabine"], "not_recommended": []}))
            if state.sample_id == "a:D1" and state.epoch == 1:
                arms.counterfactual = arm_result(json.dumps({"recommendations": ["neoadjuvant FOLFIRINOX"], "not_recommended": []}))
            elif state.sample_id == "a:D1":
                # Issue 21: markdown sections go to the reader role; the closed answer lines are read (step c).
                arms.counterfactual = arm_result("Unchanged.\nRECOMMENDED: adjuvant capecitabine\nNOT RECOMMENDED: none\n")
            else:
                arms.counterfactual = arm_result(json.dumps({"recommendations": ["capecitabine then FOLFOX"], "not_recommended": []}))
            return state

        return solve

    def verdict(prompt: str) -> str:
        blocks = data_blocks(prompt)
        if "FOLFOX" in blocks["COUNTERFACTUAL"]:
            return '{"score": 0.5, "rationale": "partial"}'
        return json.dumps({"score": 1 if "FOLFIRINOX" in blocks["COUNTERFACTUAL"] else 0, "rationale": "r"})

    samples = [
        Sample(id="a:D1", input="p", metadata={"case_id": "a", "family": "D", "expected_change": "e", "scoring_rule": "r"}),
        Sample(id="b:A1", input="p", metadata={"case_id": "b", "family": "A", "expected_change": "e", "scoring_rule": "r"}),
    ]
    log = eval(Task(dataset=samples, solver=arms_by_epoch(), scorer=judge_direction(), epochs=2),
               model=PLAIN.model, model_roles={"judge": MockModel("mockllm/judge", verdict).model}, display="none")[0]
    m = metrics(log)
    assert m["css"] == pytest.approx((0.5 + 0.5) / 2)  # D: mean(1, 0); A: 0.5
    assert m["family_D"] == pytest.approx(0.5) and m["family_A"] == pytest.approx(0.5)
    # Four verdicts: one 1, one 0, two 0.5 (reduced, the D tuple would have been one "partial").
    assert (m["wrong"], m["partial"], m["correct"]) == pytest.approx((0.25, 0.5, 0.25))
    # Eight arms: seven read from JSON, one from the answer lines.
    assert m["parse_json"] == pytest.approx(7 / 8) and m["parse_field"] == pytest.approx(1 / 8)


def test_workflow_two_epochs():
    # An ESCALATE episode answered ESCALATE (0.9) in one epoch and ANSWER (0.6) in the other,
    # and a routine ANSWER episode answered ANSWER (0.8) in both.
    seen: dict[str, int] = {}

    def reply(prompt: str) -> str:
        seen[prompt] = seen.get(prompt, 0) + 1
        if "chest pain" in prompt:
            first = seen[prompt] == 1
            return json.dumps({"action": "ESCALATE" if first else "ANSWER", "confidence": 0.9 if first else 0.6, "reason": "r"})
        return '{"action": "ANSWER", "confidence": 0.8, "reason": "r"}'

    def episode(id: str, text: str, reference: str) -> Sample:
        return Sample(id=id, input=text, metadata={
            "turns": [{"content": text}], "task_class": "triage_handoff", "acceptable_actions": [reference],
            "reference_action": reference, "variant": "clean" if reference == "ANSWER" else "late_risk", "seed_id": id, "cost_ratio": 5.0})

    samples = [episode("esc", "New chest pain during handoff.", "ESCALATE"), episode("ans", "Routine handoff of stable patient.", "ANSWER")]
    log = eval(Task(dataset=samples, solver=workflow_decision(json_schema=False), scorer=workflow_action(), epochs=2),
               model=MockModel("mockllm/model", reply).model, display="none")[0]
    m = metrics(log)
    assert m["accuracy"] == pytest.approx((0.5 + 1.0) / 2)
    assert m["utility_mean"] == pytest.approx((1 - 5 + 1 + 1) / 4)
    assert m["missed_escalation_rate"] == pytest.approx(0.5) and m["escalate_sensitivity"] == pytest.approx(0.5)
    # ECE over four replies: bin [0.9, 1]: conf 0.9, correct 1 -> 0.1; bin [0.6, 0.7): 0.6, correct 0 -> 0.6;
    # bin [0.8, 0.9): 0.8 twice, correct both -> 0.2.
    assert m["ece"] == pytest.approx(0.25 * 0.1 + 0.25 * 0.6 + 0.5 * 0.2)
    assert m["accuracy_late_risk"] == pytest.approx(0.5) and m["accuracy_clean"] == pytest.approx(1.0)


def test_medpic_two_epochs():
    # One question answered right in epoch 1 and unreadably in epoch 2; another right in both.
    @solver
    def answer_by_epoch():
        async def solve(state, generate):
            right = state.sample_id == "q2" or state.epoch == 1
            state.output.completion = "Because of the renal function.\nANSWER: B" if right else "It could be several of these."
            return state

        return solve

    options = {"A": "Metformin", "B": "Nitrofurantoin", "C": "None of the above"}
    samples = [
        Sample(id=q, input="q", metadata={"answer": ["B"], "options": options, "kind": "gf", "rule_id": f"r{q}"}) for q in ("q1", "q2")
    ]
    log = eval(Task(dataset=samples, solver=answer_by_epoch(), scorer=medpic_exact_set(), epochs=2), model=PLAIN.model, display="none")[0]
    m = metrics(log)
    assert m["accuracy"] == pytest.approx(0.75) and m["gf_accuracy"] == pytest.approx(0.75)
    assert m["unparseable"] == 1.0  # one of four replies (reduced: 0, the first epoch of q1 was read)
    assert m["parse_field"] == pytest.approx(0.75) and m["parse_unreadable"] == pytest.approx(0.25)


def test_sensitivity_two_epochs():
    # An invariance perturbation: the top choice flips in epoch 2 only.
    @solver
    def arms_by_epoch():
        async def solve(state, generate):
            after = [0.6, 0.4] if state.epoch == 1 else [0.3, 0.7]
            arms = state.store_as(SensitivityArms)
            arms.baseline = {"verbalised": [0.6, 0.4], "parse": "json"}
            arms.perturbed = {"verbalised": after, "parse": "json" if state.epoch == 1 else "markdown"}
            return state

        return solve

    tolerance = {"relative_change": 0.1, "js_divergence": 0.05, "confident_flip": 0.6}
    sample = Sample(id="v1:surface", input="v", metadata={"tolerance": tolerance, "gold_index": 0, "expected": "invariant",
                                                          "type": "surface", "vignette_id": "v1"})
    log = eval(Task(dataset=[sample], solver=arms_by_epoch(), scorer=direction_consistency(), epochs=2), model=PLAIN.model, display="none")[
        0
    ]
    m = metrics(log)
    assert m["mean"] == pytest.approx(0.5)
    assert m["surface_flip_rate"] == pytest.approx(0.5) and m["surface_consistency"] == pytest.approx(0.5)
    assert m["surface_relative"] == pytest.approx((0.0 + 0.5) / 2)  # |0.3 - 0.6| / 0.6 in epoch 2
    assert m["parse_json"] == pytest.approx(3 / 4) and m["parse_markdown"] == pytest.approx(1 / 4)
