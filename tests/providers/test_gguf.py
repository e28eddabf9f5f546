"""The embedded llama.cpp provider: request/response conversion, and real runs on SmolLM2."""

import asyncio
import json

import pytest
from inspect_ai import eval
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ResponseSchema,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo, ToolParam, ToolParams
from inspect_ai.util import JSONSchema

from clinical_cf.providers.gguf import (
    MAX_GRAMMAR_STRING,
    UnsupportedOption,
    cap_arrays,
    completion_request,
    default_weights,
    json_item_caps,
    model_output,
    plan_contexts,
)
from clinical_cf.solvers.css import RECOMMENDATIONS_SCHEMA
from clinical_cf.solvers.sensitivity import LETTER_PROMPT, letter_distribution, options_text
from clinical_cf.tasks.css_agent.css_agent import css_agent
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic_cf.medpic_cf import medpic_cf
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import HANDWRITTEN_CASES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the bundled local model (llama.cpp): generation, agents, whole tasks

CHART_TOOL = ToolInfo(
    name="read_chart_section",
    description="Read one section of the patient's chart.",
    parameters=ToolParams(properties={"section": ToolParam(type="string", description="Section name")}, required=["section"]),
)


def test_messages_tools_and_schema_are_translated():
    call = ToolCall(id="c1", function="read_chart_section", arguments={"section": "labs"})
    request = completion_request(
        [
            ChatMessageSystem(content="sys"),
            ChatMessageUser(content=[ContentText(text="hello")]),
            ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content="Cr 1.1", tool_call_id="c1", function="read_chart_section"),
        ],
        [CHART_TOOL],
        ToolFunction(name="read_chart_section"),
        GenerateConfig(max_tokens=50, temperature=0.0, seed=3, stop_seqs=["</s>"]),
    )
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert request["messages"][1]["content"] == "hello"
    assert json.loads(request["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {"section": "labs"}
    assert request["messages"][3]["tool_call_id"] == "c1"
    assert request["tools"][0]["function"]["parameters"]["required"] == ["section"]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "read_chart_section"}}
    assert (request["max_tokens"], request["temperature"], request["stop"]) == (50, 0.0, ["</s>"])

    schema = ResponseSchema(name="v", json_schema=JSONSchema(type="object", properties={"score": JSONSchema(type="number")}))
    request = completion_request([ChatMessageUser(content="x")], [], "auto", GenerateConfig(response_schema=schema))
    assert request["response_format"] == {"type": "json_object", "schema": {"type": "object", "properties": {"score": {"type": "number"}}}}


@pytest.mark.parametrize(
    "messages, config, tools, words",
    [
        ([ChatMessageUser(content=[ContentImage(image="data:image/png;base64,AAAA")])], GenerateConfig(), [], "image"),
        ([ChatMessageUser(content="x")], GenerateConfig(num_choices=2), [], "num_choices"),
        ([ChatMessageUser(content="x")], GenerateConfig(logprobs=True), [], "logits_all"),
        ([ChatMessageUser(content="x")], GenerateConfig(reasoning_effort="high"), [], "reasoning_effort"),
        (
            [ChatMessageUser(content="x")],
            GenerateConfig(response_schema=ResponseSchema(name="v", json_schema=JSONSchema(type="object"))),
            [CHART_TOOL],
            "cannot be combined with tools",
        ),
    ],
)
def test_unsupported_options_fail_clearly(messages, config, tools, words):
    with pytest.raises(UnsupportedOption, match=words):
        completion_request(messages, tools, "auto", config)


def test_response_with_tool_calls_and_usage():
    response = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "read_chart_section", "arguments": '{"section": "procedures"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
    output = model_output("smollm2", response)
    assert output.message.tool_calls[0].arguments == {"section": "procedures"}
    assert output.stop_reason == "tool_calls"
    assert (output.usage.input_tokens, output.usage.output_tokens) == (12, 5)


def test_default_weights_are_the_bundled_smollm2():
    assert default_weights().name == "SmolLM2-135M-Instruct.Q4_1.gguf"


async def test_real_generation_honours_schema_tools_and_seed():
    model = get_model("gguf/smollm2")
    schema = ResponseSchema(
        name="answer",
        json_schema=JSONSchema(type="object", properties={"drug": JSONSchema(type="string", maxLength=30)}, required=["drug"]),
    )
    config = GenerateConfig(response_schema=schema, max_tokens=60, temperature=0.8, seed=7)
    first = await model.generate("Name a drug for HER2-positive breast cancer.", config=config)
    again = await model.generate("Name a drug for HER2-positive breast cancer.", config=config)
    assert "drug" in json.loads(first.completion)
    assert first.completion == again.completion  # same seed, same sample
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0

    tools_out = await model.generate(
        "Use the tool to read the biomarkers section.",
        tools=[CHART_TOOL],
        tool_choice=ToolFunction(name="read_chart_section"),
        config=GenerateConfig(max_tokens=60),
    )
    assert tools_out.message.tool_calls and tools_out.message.tool_calls[0].function == "read_chart_section"


def test_css_family_d_end_to_end_on_the_embedded_model():
    log = eval(
        css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
        model="gguf/smollm2",
        model_roles={"judge": "gguf/smollm2"},
        # As `make css-demo`: the 135M model writes its one treatment into both lists (a conflict, never read).
        model_args={"max_json_items": {"not_recommended": 0}},
        limit=2,
        max_tokens=700,
        time_limit=600,
        fail_on_error=True,
        display="none",
    )[0]
    assert log.status == "success", log.error
    for sample in log.samples:
        for arm in ("baseline", "counterfactual"):
            assert sample.store[f"CSSArms:{arm}"]["parsed"], f"{sample.id} {arm} reply was not JSON"
        score = sample.scores["judge_direction"]
        # A 135M model may fill the schema with the prompt's template (invalid output) or state what cannot be
        # read (unreadable): never judged, the reason counted.
        assert score.value in (0.0, 0.5, 1.0) or score.reason in ("invalid_output", "unreadable"), score.explanation
        assert score.metadata["self_judged"] is True


def test_chart_agent_runs_on_the_embedded_model():
    log = eval(
        # Small caps keep this CPU run to about a minute: short tool returns, few turns.
        css_agent(families="D", cases=str(HANDWRITTEN_CASES), controls="none", max_messages=6, section_cap_bytes=1500, unreviewed="allow",
                  self_judging="allow"),
        model="gguf/smollm2",
        limit=1,
        max_tokens=150,
        time_limit=900,
        fail_on_error=True,
        display="none",
    )[0]
    assert log.status == "success", log.error
    sample = log.samples[0]
    traces = [sample.store[f"CSSArms:{arm}"]["trace"] for arm in ("baseline", "counterfactual")]
    # Not that it is right: that it completes, calls the chart tool, and the trace records it.
    assert sum(t["tool_calls"] for t in traces) > 0
    assert any(m.role == "tool" for m in sample.messages)
    assert "agent_judge_direction" in sample.scores


async def test_logprobs_give_a_letter_distribution():
    model = get_model("gguf/smollm2", logits_all=True, n_ctx=2048)
    prompt = LETTER_PROMPT.format(vignette="A 30-year-old with fever and cough.", options=options_text(["Pneumonia", "Migraine", "Gout"]))
    output = await model.generate(prompt, config=GenerateConfig(logprobs=True, top_logprobs=20, max_tokens=1))
    distribution = letter_distribution(output, 3)
    assert distribution is not None and sum(distribution) == pytest.approx(1.0)


def test_medpic_and_workflow_end_to_end_on_the_embedded_model():
    """Both new suites complete on the bundled model: its letters and decisions are read, or counted as unreadable."""

    medpic_log, workflow_log = eval(
        [medpic_cf(), workflow(variant="late_risk", split="dev")],
        model="gguf/smollm2",
        limit=2,
        max_tokens=160,
        time_limit=600,
        fail_on_error=True,
        display="none",
    )
    for log in (medpic_log, workflow_log):
        assert log.status == "success", log.error
        assert len(log.samples) == 2
    metrics = {k: v.value for s in medpic_log.results.scores for k, v in s.metrics.items()}
    assert 0 <= metrics["unparseable"] <= 2 and 0.0 <= metrics["accuracy"] <= 1.0
    for sample in workflow_log.samples:
        score = sample.scores["workflow_action"]
        # The grammar-constrained decision JSON is read, or, when the 160-token cap cut it (the provider's stop reason),
        # it is unreadable as truncated with the cap named, never repaired; late-risk episodes get a second turn.
        md = score.metadata
        assert md["parse_ok"] is True or (md["unreadable"] == "truncated" and md["max_tokens"] == 160), md
        assert [m.role for m in sample.messages].count("assistant") == 2


def test_contexts_follow_cores_and_max_connections():
    assert plan_contexts(2, None, None, None) == (2, 1)  # one context per core, the cores split between them
    assert plan_contexts(8, None, 3, None) == (3, 2)  # never more contexts than Inspect may send requests
    assert plan_contexts(2, 1, None, None) == (1, 2)  # -M parallel=1: the previous single context
    assert plan_contexts(4, 2, None, 1) == (2, 1)  # -M n_threads fixes threads per context
    assert plan_contexts(1, None, None, None) == (1, 1)


async def test_concurrent_requests_decode_in_separate_contexts():
    prompts = ["Name one antiemetic.", "Name one statin.", "Name one loop diuretic."]
    config = GenerateConfig(max_tokens=12, temperature=0.0)
    parallel = get_model("gguf/smollm2", parallel=2, config=GenerateConfig(max_connections=2))
    assert parallel.api.contexts == 2 and parallel.api.max_connections() == 2
    together = await asyncio.gather(*(parallel.generate(p, config=config) for p in prompts))
    single = get_model("gguf/smollm2", parallel=1)
    assert single.api.contexts == 1
    one_by_one = [await single.generate(p, config=config) for p in prompts]
    # Greedy decoding gives each prompt the same reply whichever context served it: no state leaks between requests.
    assert [o.completion for o in together] == [o.completion for o in one_by_one]
    with pytest.raises(UnsupportedOption, match="parallel must be at least 1"):
        get_model("gguf/smollm2", parallel=0)


def test_grammar_string_bounds_stay_below_what_llama_cpp_can_match():
    # A 1,200-character bound crashed llama.cpp's grammar sampler (a MedPIC rationale); tighter bounds are kept.
    schema = {"type": "object", "properties": {"long": {"type": "string", "maxLength": 1200}, "short": {"type": "string", "maxLength": 160},
                                               "items": {"type": "array", "items": {"type": "string", "maxLength": 5000}}}}
    capped = cap_arrays(schema, 3)
    assert capped["properties"]["long"]["maxLength"] == MAX_GRAMMAR_STRING
    assert capped["properties"]["short"]["maxLength"] == 160
    assert capped["properties"]["items"]["items"]["maxLength"] == MAX_GRAMMAR_STRING and capped["properties"]["items"]["maxItems"] == 3


def test_a_list_named_in_max_json_items_gets_its_own_cap_and_the_others_keep_the_default():
    # `-M max_json_items={not_recommended: 0}`: the CSS demo's reply schema with its avoid-list closed.
    default, named = json_item_caps({"not_recommended": 0}, 1)
    request = completion_request([], [], "auto", GenerateConfig(response_schema=RECOMMENDATIONS_SCHEMA), max_json_items=(default, named))
    properties = request["response_format"]["schema"]["properties"]
    assert properties["not_recommended"]["maxItems"] == 0 and properties["recommendations"]["maxItems"] == 1
    assert json_item_caps(None, 3) == (3, {}) and json_item_caps(2, 3) == (2, {})
    for bad in (-1, "two", {"not_recommended": "none"}, True):
        with pytest.raises(UnsupportedOption, match="max_json_items must be a whole number"):
            json_item_caps(bad, 1)
