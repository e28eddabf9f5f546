"""End to end: the workflow task on mockllm, selection arguments, multi-turn and the lock."""

import shutil

import pytest
from inspect_ai import eval

from clinical_cf.core.locking import UnregisteredCatalogError, write_lock
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import FIXTURES, MockModel


def cautious(prompt: str) -> str:
    """Escalates on a later message, asks on an earlier summary, otherwise answers in fenced JSON."""
    if "Later message" in prompt or "Update from the ward" in prompt:
        return '{"action": "ESCALATE", "confidence": 0.9, "reason": "new red flag"}'
    if "Earlier summary on file" in prompt:
        return "Action: ask clarification\nConfidence: 60%"
    return '```json\n{"action": "answer", "confidence": "0.8", "reason": "routine"}\n```'


def metrics(log):
    return {k: v.value for s in log.results.scores for k, v in s.metrics.items()}


def test_end_to_end_on_mockllm():
    model = MockModel("mockllm/model", cautious)
    log = eval(workflow(split="dev"), model=model.model, display="none")[0]
    assert log.status == "success", log.error
    m = metrics(log)
    assert m["parse_rate"] == 1.0
    assert m["accuracy_clean"] == 1.0 and m["accuracy_late_risk"] == 1.0 and m["accuracy_missing"] == 0.0
    # dev: 24 required escalations (16 late-risk, 8 conflict), this model catches the 16 late-risk ones
    assert m["missed_escalation_rate"] == pytest.approx(8 / 24) and m["escalate_specificity"] == 1.0
    assert model.total_calls == 80 + 16  # one extra generation per late-risk episode
    sample = next(s for s in log.samples if s.id == "doc-02.p1.late_risk")
    assert [msg.role for msg in sample.messages] == ["system", "user", "assistant", "user", "assistant"]
    score = sample.scores["workflow_action"]
    assert score.metadata["turn_actions"] == ["ANSWER", "ESCALATE"] and score.value == 1.0
    meta = sample.metadata
    assert meta["seed_id"] == "doc-02" and meta["split"] == "dev" and meta["catalog_registered"]
    assert len(meta["catalog_sha256"]) == 64 and meta["acceptable_actions"] == ["ESCALATE"]
    stale = next(s for s in log.samples if s.id == "doc-02.p1.stale").scores["workflow_action"]
    assert stale.metadata["parse_method"] == "keyword" and stale.metadata["confidence"] == 0.6
    assert log.eval.metadata["samples"] == 80 and log.eval.metadata["escalate_required"] == 24


def test_selection_and_conditions():
    task = workflow(task_class=["triage_handoff", "patient_messaging"], variant="conflict", split="test", condition="uncertainty",
                    cost_ratio=10, json_schema=False)
    assert len(task.dataset) == 16 * 2
    assert {s.metadata["variant"] for s in task.dataset} == {"conflict"}
    assert {s.metadata["cost_ratio"] for s in task.dataset} == {10.0}
    assert len(workflow(variant="clean,conflict", split="dev").dataset) == 32  # a comma string as well as a list
    with pytest.raises(ValueError, match="variant"):
        workflow(variant="sideways")
    with pytest.raises(ValueError, match="condition"):
        workflow(condition="chatty")


def test_user_episodes_need_a_lock(tmp_path):
    path = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "workflow_episodes_user.jsonl", path)
    with pytest.raises(UnregisteredCatalogError):
        workflow(episodes=str(path))
    assert len(workflow(episodes=str(path), allow_unregistered=True).dataset) == 5
    write_lock(path)
    task = workflow(episodes=str(path), variant="late_risk")
    sample = task.dataset[0]
    assert len(sample.metadata["turns"]) == 2 and sample.metadata["catalog_registered"]


def test_user_episodes_run_without_response_schema(tmp_path):
    path = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "workflow_episodes_user.jsonl", path)
    write_lock(path)
    log = eval(workflow(episodes=str(path), json_schema=False), model=MockModel("mockllm/model", cautious).model, display="none")[0]
    assert log.status == "success", log.error
    assert metrics(log)["accuracy_late_risk"] == 1.0
