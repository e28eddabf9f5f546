"""The chart tool, agent traces, and an end-to-end agent run on scripted mock models."""

import json

import pytest
from inspect_ai import eval
from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall, ToolError

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.solvers.css_agent import chart_tool, trace_of
from clinical_cf.tasks.css_agent.css_agent import css_agent
from helpers import HANDWRITTEN_CASES, MockModel, data_blocks, recommendations_json

SECTIONS = {"procedures": "2025-01-14 Whipple, R0.", "labs": "x" * 100}


async def test_tool_returns_sections_and_lists_valid_ones_on_error():
    read = chart_tool(SECTIONS)
    assert await read(section="Procedures ") == SECTIONS["procedures"]
    with pytest.raises(ToolError, match="Valid sections: demographics, diagnoses, biomarkers"):
        await read(section="imaging")


async def test_tool_caps_each_return():
    text = await chart_tool(SECTIONS, cap_bytes=40)(section="labs")
    assert text.startswith("x" * 40) and "truncated at 40 bytes of 100" in text


async def test_intervention_reaches_the_agent_only_through_the_tool():
    case = next(c for c in load_cases(HANDWRITTEN_CASES) if c.case_id == "fx-pancreas-1")
    t = next(t for t in expand_tuples([case], load_catalog(CATALOG_PATH), families="D").tuples)
    baseline = await chart_tool(t.baseline.sections)(section="procedures")
    counterfactual = await chart_tool(t.counterfactual.sections)(section="procedures")
    assert "Pancreaticoduodenectomy" in baseline
    assert "No oncologic resection to date" in counterfactual


def test_trace_counts_reads_repeats_and_changed_sections():
    def call(section, i):
        return ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id=str(i), function="read_chart_section", arguments={"section": section})]
        )

    messages = [call("overview", 1), call("procedures", 2), call("procedures", 3), ChatMessageAssistant(content="done")]
    trace = trace_of(messages, changed=["procedures"], limit=None)
    assert trace.tool_calls == 3 and trace.redundant_calls == 1 and trace.steps == 4
    assert trace.procedures_read and trace.changed_section_read


def scripted_agent(messages, tools, tool_choice, config) -> ModelOutput:
    """Reads procedures then diagnoses, then submits; notices a missing resection only in pancreatic cases."""
    seen = "\n".join(m.text for m in messages if m.role == "tool")
    reads = sum(1 for m in messages if m.role == "tool")
    if reads < 2:
        section = ["procedures", "diagnoses"][reads]
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": section})
    else:
        unresected = "No oncologic resection" in seen and "Pancreatic" in seen
        answer = recommendations_json("neoadjuvant FOLFIRINOX") if unresected else recommendations_json("modified FOLFIRINOX")
        out = ModelOutput.for_tool_call("mockllm/model", "submit", json.loads(answer))
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def test_agent_run_records_traces_and_retrieved_not_updated():
    calls = []

    def agent(messages, tools, tool_choice, config):
        calls.append(len(messages))
        return scripted_agent(messages, tools, tool_choice, config)

    judge = MockModel(
        "mockllm/judge",
        lambda p: json.dumps({"score": 1 if data_blocks(p)["BASELINE"] != data_blocks(p)["COUNTERFACTUAL"] else 0, "rationale": "r"}),
    )
    log = eval(
        css_agent(families="D", cases=str(HANDWRITTEN_CASES), controls="none", unreviewed="allow"),
        model=get_model("mockllm/model", custom_outputs=agent),
        model_roles={"judge": judge.model},
        display="none",
    )[0]
    assert log.status == "success", log.error
    metrics = {k: v.value for s in log.results.scores if s.name == "agent_judge_direction" for k, v in s.metrics.items()}
    # Both agents read the changed procedures section; only the pancreatic one updated.
    assert metrics["css"] == 0.5
    assert metrics["tool_calls"] == 2 and metrics["sections_read"] == 2
    assert metrics["procedures_read"] == 1.0 and metrics["changed_section_read"] == 1.0
    assert metrics["retrieved_not_updated"] == 0.5
    assert metrics["redundant_call_rate"] == 0.0 and metrics["limit_hit"] == 0.0
    # Baseline arms replay from the generate cache: 3 calls per case, 3 per counterfactual run.
    assert len(calls) == 2 * 3 + 2 * 3
    sample = log.samples[0]
    assert sample.store["CSSArms:counterfactual"]["trace"]["sections_read"] == ["procedures", "diagnoses"]
    assert any(m.role == "tool" for m in sample.messages)


def test_looping_agent_is_stopped_and_the_limit_recorded():
    def looping(messages, tools, tool_choice, config):
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": "labs"})
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 0, "rationale": "r"}))
    log = eval(
        css_agent(families="D", cases=str(HANDWRITTEN_CASES), controls="none", max_messages=8, unreviewed="allow"),
        model=get_model("mockllm/model", custom_outputs=looping),
        model_roles={"judge": judge.model},
        limit=1,
        display="none",
    )[0]
    assert log.status == "success", log.error
    trace = log.samples[0].store["CSSArms:counterfactual"]["trace"]
    assert trace["limit"] == "message" and trace["redundant_calls"] > 0
