"""Each arm-pair solver on its own: both arms recorded, and the baseline generated once per case however many tuples share it.

The sharing is Inspect's generate cache plus a `concurrency()` context of one per (model, case, epoch):
the first tuple of a case generates, the others wait and then read the cache.
"""

import json
from collections import Counter

import pytest
from inspect_ai import Task, eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import clinical_cf.solvers.css as css_solvers
from clinical_cf.solvers.css import SUMMARY_PROMPT, baseline_lock, two_stage_recommendations
from clinical_cf.solvers.css_agent import chart_agent_recommendations, perturbed_observation_agent
from clinical_cf.solvers.sensitivity import DISTRIBUTION_PROMPT, SensitivityArms, candidate_distributions, options_text
from clinical_cf.tasks.css_agent_observation.css_agent_observation import css_agent_observation
from clinical_cf.tasks.css_task import build_css_task
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from helpers import HANDWRITTEN_CASES, MockModel, clinician, recommendations_json


def test_baseline_lock_is_one_holder_per_model_case_and_epoch(monkeypatch):
    """The project's part of the lock: which key it asks Inspect's `concurrency()` for, with a limit of one.

    (That Inspect's context admits one holder per key is Inspect's to test; that the baseline is then generated once
    per case is the test below.)"""
    asked = []
    monkeypatch.setattr(css_solvers, "concurrency", lambda name, limit, key, visible: asked.append((name, limit, key)))
    keys = [("m1", "case-a", 1), ("m1", "case-a", 1), ("m1", "case-b", 1), ("m1", "case-a", 2), ("m2", "case-a", 1)]
    for key in keys:
        baseline_lock(key)
    assert {limit for _, limit, _ in asked} == {1}
    # The same (model, case, epoch) is the same lock; any part that differs is another lock.
    assert len({key for _, _, key in asked}) == len(set(keys)) == 4
    assert asked[0] == asked[1]


def run_alone(dataset, solver, model, **eval_args):
    """The solver as a task's only step (no scorer), every sample at once."""
    log = eval(Task(dataset=dataset, solver=solver), model=model, display="none", max_samples=64, **eval_args)[0]
    assert log.status == "success", log.error
    return log


def oncologist(prompt: str) -> str:
    """Summarises, then recommends by what the summary says about HER2."""
    if "Case summary:" not in prompt:
        return "Summary: " + " ".join(prompt.split()[-60:])
    return recommendations_json("trastuzumab" if "HER2-positive" in prompt or "HER2 3+" in prompt else "endocrine therapy")


@pytest.mark.parametrize("baseline_cache, shared", [(True, True), (False, False)])
def test_two_stage_recommendations_share_the_baseline_per_case(baseline_cache, shared):
    task = build_css_task(cases=str(HANDWRITTEN_CASES), controls="per_case", unreviewed="allow")
    # Four cases' tuples: sharing is per case, so more cases add run time, not coverage.
    first_cases = list(dict.fromkeys(s.metadata["case_id"] for s in task.dataset))[:4]
    samples = [s for s in task.dataset if s.metadata["case_id"] in first_cases]
    tuples_per_case = Counter(s.metadata["case_id"] for s in samples)
    assert max(tuples_per_case.values()) > 1  # otherwise nothing would be shared
    model = MockModel("mockllm/model", oncologist)
    log = run_alone(samples, two_stage_recommendations(baseline_cache=baseline_cache), model.model)

    for sample in log.samples:
        baseline = sample.store["CSSArms:baseline"]
        counterfactual = sample.store["CSSArms:counterfactual"]
        assert baseline["parsed"] and counterfactual["parsed"]
        assert baseline["recommendations"] and counterfactual["recommendations"]
        assert sample.output.completion == counterfactual["raw"]
    # Stage 1 of a baseline arm: once per case when shared, once per tuple when not.
    for case_id, n in tuples_per_case.items():
        packet = next(s.metadata["baseline_packet"] for s in samples if s.metadata["case_id"] == case_id)
        assert model.calls[SUMMARY_PROMPT.format(packet=packet)] == (1 if shared else n)
    arms = len(tuples_per_case) if shared else len(samples)
    assert model.total_calls == 2 * len(samples) + 2 * arms


def reading_agent(messages, tools, tool_choice, config) -> ModelOutput:
    """Reads procedures, then biomarkers (again after a failed read), then submits."""
    tool_messages = [m for m in messages if m.role == "tool"]
    good_reads = [m for m in tool_messages if m.error is None]
    plan = ["procedures", "biomarkers"]
    if len(good_reads) < len(plan):
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": plan[len(good_reads)]})
    else:
        seen = " ".join(m.text for m in good_reads)
        treatment = "adjuvant chemotherapy" if "resection" in seen.lower() else "systemic therapy"
        out = ModelOutput.for_tool_call("mockllm/model", "submit", json.loads(recommendations_json(treatment)))
    out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
    return out


def test_chart_agent_recommendations_trace_both_arms_and_share_the_baseline_run():
    task = build_css_task(families="D", cases=str(HANDWRITTEN_CASES), controls="per_case", setting="agent", unreviewed="allow")
    samples = list(task.dataset)
    cases = {s.metadata["case_id"] for s in samples}
    assert len(samples) > len(cases)
    calls = []

    def agent(messages, tools, tool_choice, config):
        calls.append(1)
        return reading_agent(messages, tools, tool_choice, config)

    log = run_alone(samples, chart_agent_recommendations(), get_model("mockllm/model", custom_outputs=agent))
    for sample in log.samples:
        for arm in ("baseline", "counterfactual"):
            trace = sample.store[f"CSSArms:{arm}"]["trace"]
            assert trace["sections_read"] == ["procedures", "biomarkers"]
            assert trace["tool_calls"] == 2 and trace["errors"] == 0
        assert any(m.role == "tool" for m in sample.messages)
    # Three generations per agent run: one baseline run per case, one counterfactual run per tuple.
    assert len(calls) == 3 * len(cases) + 3 * len(samples)


def test_perturbed_observation_agent_perturbs_only_the_counterfactual_run():
    task = css_agent_observation(kinds="tool_failure", cases=str(HANDWRITTEN_CASES), samples=None)
    samples = [s for s in task.dataset if s.metadata["perturbation"]["section"] == "biomarkers"]
    assert samples
    log = run_alone(samples, perturbed_observation_agent(), get_model("mockllm/model", custom_outputs=reading_agent))
    for sample in log.samples:
        baseline = sample.store["CSSArms:baseline"]["trace"]
        counterfactual = sample.store["CSSArms:counterfactual"]["trace"]
        assert baseline["errors"] == 0
        # The failing return reached the agent in the perturbed run only, and it asked again.
        kind = sample.metadata["perturbation"]["id"]
        if counterfactual["errors"]:
            assert counterfactual["requeried_after_error"], kind
            assert counterfactual["tool_calls"] > baseline["tool_calls"], kind
    assert any(s.store["CSSArms:counterfactual"]["trace"]["errors"] for s in log.samples)


def test_candidate_distributions_record_both_arms_and_elicit_the_vignette_once():
    samples = list(sensitivity(types="surface").dataset)[:12]
    per_vignette = Counter(s.metadata["vignette_id"] for s in samples)
    model = MockModel("mockllm/model", clinician)
    log = run_alone(samples, candidate_distributions(logprobs=False), model.model)
    for sample in log.samples:
        store = sample.store_as(SensitivityArms)
        arms = {"baseline": store.baseline, "perturbed": store.perturbed}
        for arm in ("baseline", "perturbed"):
            distribution = arms[arm]["verbalised"]
            assert len(distribution) == len(sample.metadata["candidates"])
            assert sum(distribution) == pytest.approx(1.0)
            assert arms[arm]["logprob"] is None  # not asked for
        assert sample.output.completion == arms["perturbed"]["raw"]
    for vignette_id in per_vignette:
        sample = next(s for s in samples if s.metadata["vignette_id"] == vignette_id)
        prompt = DISTRIBUTION_PROMPT.format(
            vignette=sample.metadata["baseline_text"], options=options_text(sample.metadata["candidates"])
        )
        assert model.calls[prompt] == 1
    assert model.total_calls == len(samples) + len(per_vignette)


def test_candidate_distributions_record_why_a_provider_gave_no_logprobs():
    samples = list(sensitivity(types="timeline").dataset)[:2]
    log = run_alone(samples, candidate_distributions(logprobs=True), MockModel("mockllm/model", clinician).model)
    for sample in log.samples:
        arm = sample.store_as(SensitivityArms).perturbed
        assert arm["logprob"] is None and arm["logprob_note"]
        assert json.loads(arm["raw"])  # the verbalised arm still answered


@pytest.mark.slow
def test_the_shared_baseline_is_never_reused_by_a_later_run():
    # Issue 21: a second run (a different model served under the same name) must generate its own
    # baseline, not read the first run's from the cache; each run records its cache scope.
    task = build_css_task(cases=str(HANDWRITTEN_CASES), controls="per_case", unreviewed="allow")
    samples = list(task.dataset)[:3]
    packet = samples[0].metadata["baseline_packet"]
    scopes = []
    for treatment in ("first model", "second model"):
        model = MockModel("mockllm/model", lambda p, t=treatment: "Summary: x" if "Case summary:" not in p else recommendations_json(t))
        log = run_alone(samples, two_stage_recommendations(baseline_cache=True), model.model)
        assert model.calls[SUMMARY_PROMPT.format(packet=packet)] == 1  # generated in this run, shared within it
        run_scopes = {s.store["CSSArms:baseline_cache_scope"] for s in log.samples}
        assert len(run_scopes) == 1 and None not in run_scopes
        scopes.append(run_scopes.pop())
        for sample in log.samples:
            assert sample.store["CSSArms:baseline"]["recommendations"][0]["treatment"] == treatment
    assert scopes[0] != scopes[1]
