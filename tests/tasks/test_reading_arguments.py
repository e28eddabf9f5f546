"""Task arguments of issue 21: the reader role (`reader`), MedPIC's `json_schema`, CSS per-stage token caps."""

import json

import pytest
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.solvers.medpic import INSTRUCTION_JSON
from clinical_cf.tasks.arguments import TaskInputError
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic_gf.medpic_gf import medpic_gf
from helpers import HANDWRITTEN_CASES


@pytest.mark.slow
def test_css_stage_caps_are_checked_numbers():
    css_family_d(cases=str(HANDWRITTEN_CASES), summary_max_tokens=64, recommend_max_tokens=128, unreviewed="allow")
    with pytest.raises(TaskInputError, match="summary_max_tokens"):
        css_family_d(cases=str(HANDWRITTEN_CASES), summary_max_tokens=0)
    with pytest.raises(TaskInputError, match="recommend_max_tokens"):
        css_family_d(cases=str(HANDWRITTEN_CASES), recommend_max_tokens="many")


@pytest.mark.slow
# The reader is the bound `reader` role (else the judge role, else off): never the model under test reading itself.
@pytest.mark.parametrize("reader, bound, reader_calls", [("reader", True, 1), ("reader", False, 0), ("none", True, 0)])
def test_medpic_requests_structured_output_and_the_reader_can_be_turned_off(reader, bound, reader_calls):
    calls = {"answer": 0, "reader": 0}
    schemas = []

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        prompt = messages[-1].text
        if "REPLY DATA" in prompt:  # the reader role's prompt
            calls["reader"] += 1
            text = json.dumps({"unreadable": True, "reason": "no answer stated"})
        else:
            calls["answer"] += 1
            schemas.append(config.response_schema)
            assert prompt.endswith(INSTRUCTION_JSON)
            text = "I would rather not say."
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
        return out

    task = medpic_gf(populations="renal", reader=reader)
    [sample] = list(task.dataset)[:1]
    task.dataset = type(task.dataset)([sample])
    roles = {"reader": get_model("mockllm/reader", custom_outputs=model)} if bound else None  # another model than the one under test
    log = eval(task, model=get_model("mockllm/model", custom_outputs=model), model_roles=roles, display="none")[0]
    assert log.status == "success", log.error
    assert calls == {"answer": 1, "reader": reader_calls}
    assert schemas and schemas[0].name == "medpic_answer"
    score = log.samples[0].scores["medpic_exact_set"]
    assert score.metadata["parse"] == "unreadable" and score.metadata["unreadable_reason"]
    assert (score.metadata["reader"] is not None) == (reader_calls == 1)
