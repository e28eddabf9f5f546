"""The editor audit: scripted editors whose quality is known get the rates they deserve (issue 28)."""

import json

from inspect_ai import Task, eval

from clinical_cf.catalog.css.schema import SECTIONS
from clinical_cf.solvers.editor_audit import editor_edit
from clinical_cf.tasks.css_editor_audit.css_editor_audit import css_editor_audit
from tests.helpers import MockModel

TASK = css_editor_audit(tuples=6, families="ADE")
SAMPLES = {s.id: s for s in TASK.dataset}


def _sample_for(prompt: str):
    for s in SAMPLES.values():
        baseline = json.loads(s.metadata["baseline_sections"])
        if f"{s.metadata['intervention_id']})" in prompt and json.dumps(baseline, indent=1) in prompt:
            return s
    raise AssertionError("no sample matches the prompt")


def _changed(s, sections: dict) -> dict:
    baseline = json.loads(s.metadata["baseline_sections"])
    return {n: sections[n] for n in SECTIONS if sections[n] != baseline[n]}


def faithful(prompt: str) -> str:
    s = _sample_for(prompt)
    return json.dumps({"sections": _changed(s, json.loads(s.metadata["reference_sections"]))})


def lazy(prompt: str) -> str:
    """Changes only the first changed section of the correct edit: the rest still states the original fact."""
    s = _sample_for(prompt)
    changed = _changed(s, json.loads(s.metadata["reference_sections"]))
    first = next(iter(changed))
    baseline = json.loads(s.metadata["baseline_sections"])
    # The baseline's own first statement of every other changed section stays.
    return json.dumps({"sections": {first: changed[first], **{n: baseline[n] + " " for n in list(changed)[1:]}}})


def overreaching(prompt: str) -> str:
    """The correct edit, plus the demographics rewritten."""
    s = _sample_for(prompt)
    sections = _changed(s, json.loads(s.metadata["reference_sections"]))
    return json.dumps({"sections": {**sections, "demographics": "Demographics withheld."}})


def _run(respond, tmp_path):
    editor = MockModel("mockllm/editor", respond)
    (log,) = eval(TASK, model="mockllm/model", model_roles={"editor": editor.model}, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    return log, metrics


def test_the_audit_asks_the_editor_what_a_build_would_and_covers_the_families():
    assert len(SAMPLES) == 6 and {s.metadata["family"] for s in SAMPLES.values()} <= set("ADE")
    (first,) = list(SAMPLES.values())[:1]
    assert "WHAT MUST NO LONGER BE STATED" in first.input[1].text


def test_a_faithful_editor_is_complete_and_clean(tmp_path):
    _, metrics = _run(faithful, tmp_path)
    assert metrics["complete_rate"] == 1.0 and metrics["unwarranted_change_rate"] == 0.0 and metrics["unreadable"] == 0


def test_a_lazy_editor_is_incomplete_and_an_overreaching_one_makes_unwarranted_changes(tmp_path):
    log, metrics = _run(lazy, tmp_path / "lazy")
    multi = [s for s in log.samples if len(_changed(SAMPLES[s.id], json.loads(SAMPLES[s.id].metadata["reference_sections"]))) > 1]
    assert multi and all(s.scores["editor_fidelity"].metadata["complete"] == 0 for s in multi)
    assert metrics["complete_rate"] < 1.0
    _, metrics = _run(overreaching, tmp_path / "over")
    assert metrics["unwarranted_change_rate"] == 1.0 and metrics["complete_rate"] == 1.0


def test_an_unreadable_reply_is_counted_not_scored_zero(tmp_path):
    log, metrics = _run(lambda prompt: "I would change the stage.", tmp_path)
    assert metrics["unreadable"] == 6
    assert all(s.scores["editor_fidelity"].metadata["readable"] == 0 for s in log.samples)
    assert metrics["complete_rate"] != metrics["complete_rate"]  # NaN: no readable edit, no rate


def test_editor_edit_needs_its_role_bound_and_never_audits_the_model_under_test(tmp_path):
    """`editor_edit()` asks only the bound editor role: without one the run fails naming the role, no sample scored."""

    one = type(TASK.dataset)(list(TASK.dataset)[:1])
    (log,) = eval(Task(dataset=one, solver=editor_edit(role="editor")), model="mockllm/model", display="none",
                  log_dir=str(tmp_path))
    assert log.status == "error" and "editor" in str(log.error.message)
