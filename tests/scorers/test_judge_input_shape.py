"""One shape for the judge (issue 37, item 2): the judge's data block is the same for the same treatments whatever
format the reply stated them in, so a control whose arms were read in two formats cannot look "moved"."""

from __future__ import annotations

import json

import anyio
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.util import Store

from clinical_cf.scorers.css_judge import judge_prompt
from clinical_cf.solvers.css import CSSArms, judge_block, read_arm

AS_JSON = json.dumps({
    "recommendations": [{"treatment": "Carboplatin plus pemetrexed", "rationale": "Non-squamous, no driver."},
                        {"treatment": "Pembrolizumab", "rationale": "PD-L1 60%."}],
    "not_recommended": [{"treatment": "Osimertinib", "rationale": "EGFR wild-type."}],
})
AS_LINES = "After review:\nRECOMMENDED: Carboplatin plus pemetrexed; Pembrolizumab.\nNOT RECOMMENDED: **Osimertinib**"
AS_LIST = ("The board recommends:\n- Carboplatin plus pemetrexed (non-squamous)\n- Pembrolizumab, given PD-L1 60%\n\n"
           "The board advises against:\n- Osimertinib")


def _readers():
    reading = {"recommendations": [
        {"treatment": "Carboplatin plus pemetrexed", "quote": "Carboplatin plus pemetrexed", "rationale": "non-squamous"},
        {"treatment": "Pembrolizumab", "quote": "Pembrolizumab, given PD-L1 60%", "rationale": "given PD-L1 60%"}],
        "not_recommended": [{"treatment": "Osimertinib", "quote": "Osimertinib"}]}

    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/model", json.dumps(reading))
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    return (get_model("mockllm/reader", custom_outputs=respond, memoize=False),
            get_model("mockllm/second_reader", custom_outputs=respond, memoize=False))


def _arm(reply: str):
    return anyio.run(lambda: read_arm(reply, reader=_readers()))


def test_the_judges_data_block_is_identical_for_the_same_content_in_json_an_answer_line_and_a_list():
    arms = [_arm(AS_JSON), _arm(AS_LINES), _arm(AS_LIST)]
    assert [a.provenance for a in arms] == ["json", "field", "agreement"]
    assert arms[0].recommendations[0].rationale  # the JSON's rationale is read (the viewer shows it) ...
    blocks = {judge_block(a, "BASELINE", "T") for a in arms}
    assert len(blocks) == 1, blocks  # ... but never reaches the judge: one shape
    assert "rationale" not in blocks.pop()


def test_a_control_read_in_two_formats_gives_the_judge_two_identical_blocks():
    # A store of its own: a StoreModel built outside a sample shares Inspect's default store with other tests.
    arms = CSSArms(store=Store(), baseline=_arm(AS_JSON), counterfactual=_arm(AS_LINES))
    prompt = judge_prompt(arms, "No change expected.", "1 if unchanged.")
    baseline = prompt.split("<<<BASELINE DATA")[1].split("<<<END BASELINE DATA")[0].split(">>>", 1)[1]
    counterfactual = prompt.split("<<<COUNTERFACTUAL DATA")[1].split("<<<END COUNTERFACTUAL DATA")[0].split(">>>", 1)[1]
    assert baseline == counterfactual
