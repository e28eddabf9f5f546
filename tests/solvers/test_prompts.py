"""Every prompt of every suite, rendered as a model receives it: no doubled braces, no unfilled
`{field}`, no `<placeholder>` slot a model can copy (issue 21: the CSS stage-2 prompt reached every
model as `{{"recommendations": ...}}`, and the bundled model copied the `<...>` slots)."""

import json
import re

import pytest

from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.replies import reader_prompt
from clinical_cf.scorers.cms import MATCH_PROMPT
from clinical_cf.scorers.css_judge import RETRY_PROMPT, judge_prompt
from clinical_cf.scorers.css_process import PROCESS_PROMPT, PROCESS_RETRY_PROMPT
from clinical_cf.scorers.medpic import RATIONALE_RETRY_PROMPT, rationale_prompt
from clinical_cf.solvers.css import CSS_READER, SUMMARY_PROMPT, SYSTEM_PROMPT, CSSArms, arm_result, stage2_prompt
from clinical_cf.solvers.css_agent import AGENT_INSTRUCTIONS, AGENT_REQUEST
from clinical_cf.solvers.medpic import INSTRUCTION_JSON, INSTRUCTION_PLAIN, MEDPIC_READER, render_prompt
from clinical_cf.solvers.sensitivity import DISTRIBUTION_PROMPT, DISTRIBUTION_PROMPT_PLAIN, LETTER_PROMPT, SENSITIVITY_READER, options_text
from clinical_cf.solvers.workflow import CLASS_SEMANTICS, CONDITIONS, WORKFLOW_READER, system_prompt

REPLY = json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "RAS mutant"}], "not_recommended": []})


def all_prompts() -> dict[str, str]:
    arms = CSSArms(baseline=arm_result(REPLY), counterfactual=arm_result(REPLY))
    question = load_questions()[0]
    medpic_plain = render_prompt(question)
    prompts = {
        "css/system": SYSTEM_PROMPT,
        "css/summary": SUMMARY_PROMPT.format(packet="Patient packet."),
        "css/stage2_json": stage2_prompt("A summary.", json_schema=True),
        "css/stage2_plain": stage2_prompt("A summary.", json_schema=False),
        "css/agent_instructions": AGENT_INSTRUCTIONS,
        "css/agent_request": AGENT_REQUEST.format(case_id="c1"),
        "css/judge": judge_prompt(arms, "The list should change.", "1 if it changed."),
        "css/judge_retry": RETRY_PROMPT,
        "css/process_judge": PROCESS_PROMPT.format(
            kind="noise", title="t", section="labs", expected="e", rule="r", notice="n", trace="t", recommendations="r", baseline="b"
        ),
        "css/process_retry": PROCESS_RETRY_PROMPT,
        "css/cms_match": MATCH_PROMPT.format(consensus="1. FOLFOX", notice="n", recommendations="1. FOLFOX"),
        "medpic/plain": medpic_plain,
        "medpic/json": medpic_plain[: -len(INSTRUCTION_PLAIN)] + INSTRUCTION_JSON,
        "medpic/rationale_judge": rationale_prompt("CrCl 28 mL/min", "ANSWER: A"),
        "medpic/rationale_retry": RATIONALE_RETRY_PROMPT,
        "sensitivity/json": DISTRIBUTION_PROMPT.format(vignette="v", options=options_text(["a", "b"])),
        "sensitivity/plain": DISTRIBUTION_PROMPT_PLAIN.format(vignette="v", options=options_text(["a", "b"])),
        "sensitivity/letter": LETTER_PROMPT.format(vignette="v", options=options_text(["a", "b"])),
    }
    for condition in CONDITIONS:
        for task_class in CLASS_SEMANTICS:
            for schema in (True, False):
                prompts[f"workflow/{condition}/{task_class}/{schema}"] = system_prompt(condition, task_class, schema)
    for task in (CSS_READER, MEDPIC_READER, WORKFLOW_READER, SENSITIVITY_READER):
        prompts[f"reader/{task.name}"] = reader_prompt(task, "Some reply.")
    return prompts


# Data-block markers (<<<NAME DATA TAG>>>) and the XML-style tags around the packet are not slots.
_MARKERS = re.compile(r"<<<[^<>\n]{0,80}>>>|</?[a-z_]{1,20}>")
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,80}>")
_UNFILLED = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@pytest.mark.parametrize("name, prompt", sorted(all_prompts().items()))
def test_prompt_has_no_doubled_braces_unfilled_fields_or_placeholders(name, prompt):
    assert "{{" not in prompt and "}}" not in prompt, name
    assert not _UNFILLED.search(prompt), (name, _UNFILLED.search(prompt))
    assert not _PLACEHOLDER.search(_MARKERS.sub("", prompt)), (name, _PLACEHOLDER.search(_MARKERS.sub("", prompt)))


def test_the_check_catches_what_it_is_for():
    bad = ['{{"score": 1}}', "Reply: {answer}", 'ANSWER: <letter or letters, comma-separated>']
    for text in bad:
        with pytest.raises(AssertionError):
            test_prompt_has_no_doubled_braces_unfilled_fields_or_placeholders("bad", text)
