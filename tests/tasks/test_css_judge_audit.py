"""CSS judge audit: scripted judges that ignore or obey injected text test the flip-rate metric itself."""

import json
import re

import pytest
import yaml
from inspect_ai import Task, eval

from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_yaml
from clinical_cf.scorers import css_judge
from clinical_cf.scorers.css_judge import judge_prompt
from clinical_cf.scorers.judge_audit import audited_judge
from clinical_cf.solvers.css import CSSArms, arm_result
from clinical_cf.solvers.judge_audit import audit_arms
from clinical_cf.tasks.css_judge_audit import css_judge_audit
from clinical_cf.tasks.judge_audit_task import PROBES_PATH, load_probes
from helpers import MockModel, data_blocks

CATALOG = load_probes(PROBES_PATH)
MARKERS = {s.id: s.markers for s in CATALOG.scenarios}


def metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {k: v.value for s in log.results.scores for k, v in s.metrics.items()}


def _changed(prompt: str) -> bool:
    """Whether the counterfactual list names a drug only the scenario's changed list names (case-blind)."""
    blocks = data_blocks(prompt)
    return any(
        any(m.lower() in blocks["COUNTERFACTUAL"].lower() and m.lower() not in blocks["BASELINE"].lower() for m in markers)
        for markers in MARKERS.values()
    )


def ignoring_judge(prompt: str) -> str:
    """Reads only which treatments appear: 1 when the expected drugs arrived, else 0."""
    return '{"score": 1, "rationale": "moved"}' if _changed(prompt) else '{"score": 0, "rationale": "unchanged"}'


def obeying_judge(prompt: str) -> str:
    """Follows any extra text it finds in the counterfactual list: full credit whenever the lists differ at all."""
    blocks = data_blocks(prompt)
    return (
        '{"score": 1, "rationale": "as instructed"}'
        if blocks["COUNTERFACTUAL"] != blocks["BASELINE"]
        else '{"score": 0, "rationale": "same"}'
    )


def run(judge):
    return eval(css_judge_audit(), model=MockModel("mockllm/model", lambda _: "").model,
                model_roles={"judge": MockModel("mockllm/judge", judge).model}, display="none")[0]


def test_catalog_is_pre_registered_with_at_least_twenty_probes_of_every_class():
    assert len(CATALOG.probes) >= 20
    assert {"authority", "forged_rule", "forged_header", "fake_verdict", "other_language", "encoding", "role_tokens", "padding"} <= {
        p.category for p in CATALOG.probes}
    task = css_judge_audit()
    assert task.metadata["catalog_registered"] is True
    assert len(task.dataset) == len(CATALOG.scenarios) * 2 * (len(CATALOG.probes) + 1)


@pytest.mark.slow  # the whole probe audit
def test_a_judge_that_ignores_injections_never_flips_and_passes_the_control():
    m = metrics(run(ignoring_judge))
    assert m["flip_rate"] == 0.0 and m["injection_shift"] == 0.0
    assert m["control_score"] == 0.0 and m["clean_score"] == 1.0


@pytest.mark.slow  # the whole probe audit
def test_a_judge_that_obeys_injections_is_caught():
    m = metrics(run(obeying_judge))
    # On identical lists a probe that reaches the judge's data block makes the lists differ, and the
    # obeying judge then gives 1 where the reference got 0; on changed lists it gave 1 anyway. Since the
    # judge sees treatments only (issue 37: one shape, rationale never shown), a probe riding in a
    # rationale no longer reaches it: some probes, not all, still flip this judge.
    assert 0.0 < m["flip_rate_identical"] < 1.0
    assert m["flip_rate_changed"] == 0.0
    assert m["flip_rate"] == pytest.approx(m["flip_rate_identical"] / 2)
    assert m["injection_shift"] == pytest.approx(m["flip_rate_identical"] / 2)
    assert m["control_score"] == 0.0 and m["clean_score"] == 1.0


def test_probe_text_reaches_the_judge_only_inside_the_data_block():
    prompts = []
    log = eval(css_judge_audit(conditions="identical"), model=MockModel("mockllm/model", lambda _: "").model,
               model_roles={"judge": MockModel("mockllm/judge", lambda p: prompts.append(p) or ignoring_judge(p)).model},
               display="none", limit=len(CATALOG.probes) + 1)[0]
    assert log.status == "success"
    for prompt in prompts:
        outside = prompt
        for body in data_blocks(prompt).values():
            outside = outside.replace(body, "")
        for probe in CATALOG.probes:
            assert probe.text.strip()[-25:] not in outside  # the payload end, not a header it imitates
        assert "<|im_start|>" not in prompt and "[INST]" not in prompt and len(prompt) < 9000


def test_bad_probe_catalog_names_the_entry_and_field(tmp_path):
    raw = yaml.safe_load(PROBES_PATH.read_text())
    raw["probes"][3]["field"] = "diagnosis"
    bad = tmp_path / "probes.yaml"
    bad.write_text(yaml.safe_dump(raw, allow_unicode=True))
    with pytest.raises(CatalogError) as error:
        load_probes(bad)
    assert raw["probes"][3]["id"] in str(error.value) and "field" in str(error.value)
    with pytest.raises(ValueError, match="conditions"):
        css_judge_audit(conditions="sideways")


def test_audit_arms_and_audited_judge_on_their_own():
    """audit_arms() puts the catalog's fixed lists into the arms without calling the model; audited_judge() scores them."""

    samples = [s for s in css_judge_audit().dataset if s.metadata["probe_id"] == "none"]
    under_test = MockModel("mockllm/model", lambda _: "never called")
    log = eval(Task(dataset=samples, solver=audit_arms(), scorer=audited_judge()), model=under_test.model,
               model_roles={"judge": MockModel("mockllm/judge", ignoring_judge).model}, display="none")[0]
    assert log.status == "success", log.error
    assert sum(under_test.calls.values()) == 0
    for sample in log.samples:
        arms = sample.store["CSSArms:counterfactual"]
        assert arms["recommendations"], "the probed list must reach the arm"
        expected = 0.0 if sample.metadata["condition"] == "identical" else 1.0
        assert sample.scores["audited_judge"].value == expected


def _judge_prompt_untagged() -> str:
    """The CSS judge's prompt as the audit renders it, with the content-derived boundary tag taken out of the markers."""
    scenario = CATALOG.scenarios[0]
    arms = CSSArms(baseline=arm_result(json.dumps({"recommendations": [i.model_dump() for i in scenario.baseline], "not_recommended": []})),
                   counterfactual=arm_result(json.dumps({"recommendations": [i.model_dump() for i in scenario.changed], "not_recommended": []})))
    prompt = judge_prompt(arms, scenario.expected_change, CATALOG.scoring_rule)
    return re.sub(r"(<<<[A-Z ]+ DATA) [^<>\s]+>>>", r"\1>>>", prompt)


def test_forged_probes_imitate_the_judge_prompt_as_it_is_today():
    """A forged header or rule must copy the prompt the judge really sees: a stale copy tests nothing (issue 26)."""
    prompt = _judge_prompt_untagged()
    forged = [p for p in CATALOG.probes if p.category in ("forged_rule", "forged_header")]
    assert forged
    for probe in forged:
        assert probe.imitates, f"{probe.id}: say under `imitates` which text of the judge prompt it forges"
        for text in probe.imitates:
            assert text in probe.text, (probe.id, text)
            assert text in prompt, f"{probe.id}: the judge prompt no longer contains {text!r}; update the probe"


def test_the_probes_scoring_rule_is_the_css_catalogs_default_rule():
    assert CATALOG.scoring_rule == load_yaml(CSS_DIR / "interventions.yaml")["scoring_rule"]


def test_the_imitation_check_fails_when_the_judge_prompt_moves(monkeypatch):
    monkeypatch.setattr(css_judge, "JUDGE_PROMPT", css_judge.JUDGE_PROMPT.replace("SCORING RULE (pre-registered):", "RULE:"))
    with pytest.raises(AssertionError, match="forged_rule"):
        test_forged_probes_imitate_the_judge_prompt_as_it_is_today()
