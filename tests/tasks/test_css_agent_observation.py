"""End to end: observation perturbations on a scripted agent, with process metrics."""

import json

from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.tasks.css_agent_observation.css_agent_observation import css_agent_observation
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


def careful_agent(messages, tools, tool_choice, config) -> ModelOutput:
    """Reads biomarkers then labs; re-reads a section whose read failed; then submits."""
    tool_messages = [m for m in messages if m.role == "tool"]
    plan = ["biomarkers", "labs"]
    if tool_messages and tool_messages[-1].error is not None:
        section = plan[len([m for m in tool_messages if m.error is None])]
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": section})
    elif len([m for m in tool_messages if m.error is None]) < len(plan):
        section = plan[len([m for m in tool_messages if m.error is None])]
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": section})
    else:
        out = ModelOutput.for_tool_call("mockllm/model", "submit", json.loads(recommendations_json("FOLFOX")))
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def test_tool_failures_are_requeried_and_measured():
    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 1, "critical_error": "ERROR:" not in p, "rationale": "r"}))
    log = eval(
        css_agent_observation(kinds="tool_failure", cases=str(HANDWRITTEN_CASES), samples=None),
        model=get_model("mockllm/model", custom_outputs=careful_agent),
        model_roles={"judge": judge.model},
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 8  # 4 cases x (biomarkers timeout, implausible eGFR)
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert metrics["score_tool_failure"] == 1.0
    assert metrics["requery_after_error"] == 1.0
    # The timeout costs one extra call over the unperturbed run's two: (3 - 2) / 2 on half the samples.
    assert metrics["path_efficiency_change"] == 0.25
    assert metrics["redundant_action_rate"] == 0.0
    # The judge saw the failed return marked in the trace for the timeout samples only.
    assert metrics["critical_error_rate"] == 0.5
    timeout = next(s for s in log.samples if s.id.endswith("O3_biomarkers_timeout"))
    trace = timeout.store["CSSArms:counterfactual"]["trace"]
    assert trace["errors"] == 1 and trace["requeried_after_error"] and trace["sections_read"][:2] == ["biomarkers", "biomarkers"]


def test_kinds_as_inspect_passes_an_unquoted_comma_list():
    task = css_agent_observation(kinds=["noise", "tool_failure"], samples=None)
    assert {s.metadata["kind"] for s in task.dataset} == {"noise", "tool_failure"}
