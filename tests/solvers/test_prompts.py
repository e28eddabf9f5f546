"""Every prompt of every suite (the scoring contract's list), rendered as a model receives it: no doubled braces, no unfilled
`{field}`, no `<placeholder>` slot a model can copy (issue 21: the CSS stage-2 prompt reached every
model as `{{"recommendations": ...}}`, and the bundled model copied the `<...>` slots)."""

import re

import pytest

from clinical_cf.suites import SUITES


def all_prompts() -> dict[str, str]:
    """Every suite's prompts as a model receives them: the list the suite fingerprint hashes (clinical_cf.scoring_contract)."""
    return {name: prompt for suite in SUITES.values() for name, prompt in suite.prompts().items()}


def test_every_suite_has_its_prompts():
    names = all_prompts()
    for part in ("css/judge", "css/summary", "css/reader", "medpic/rationale_judge", "medpic/reader", "sensitivity/json", "workflow/reader"):
        assert f"rendered/{part}" in names, part


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
