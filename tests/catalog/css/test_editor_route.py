"""The editor route end to end, with scripted editor and checker roles (issue 28).

A faithful editor, a lazy one that changes one line, a subtle residue no pattern knows, a checker that
misses, a checker that catches, a checker that makes up a quote: each failure is caught (rejected with
its reason) or counted (accepted as unreviewed, highlighted on the review page, refused by the task until a
clinician approves that exact text), as docs/counterfactual-sets.md says.
"""

import asyncio
import json
import re

import pytest

import clinical_cf.catalog.css.counterfactuals as module
from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import (
    FrozenCounterfactual,
    build_counterfactuals,
    load_counterfactuals,
    write_counterfactuals,
)
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import write_lock
from clinical_cf.tasks.arguments import TaskInputError
from clinical_cf.tasks.css_task import build_css_task
from tests.helpers import HANDWRITTEN_CASES, MockModel

CATALOG = load_catalog(CATALOG_PATH)
A1 = CATALOG.by_id("A1_her2_positive_to_negative")
SUBTLE = "Cardio-oncology: baseline echo booked before the targeted antibody course."
"""Presupposes HER2-directed therapy in words no residue pattern lists: only a reader (checker, clinician) sees it."""


def _case():
    case = next(c for c in load_cases(HANDWRITTEN_CASES) if c.case_id == "fx-breast-1")
    sections = {**case.sections, "encounters": case.sections["encounters"] + "\n" + SUBTLE}
    return case.model_copy(update={"sections": sections})


CASE = _case()
FAITHFUL = {
    "biomarkers": "Core bx 02/20/2025: ER 0%, PgR 0%. HER-2/neu IHC 1+, not amplified by FISH (HER2/CEP17 ratio 1.1). Ki-67 45%.",
    "encounters": CASE.sections["encounters"].replace("HER2-positive", "HER2-negative").replace("\n" + SUBTLE, ""),
    "overview": "52F with resected stage IIA HER2-negative (FISH non-amplified) ER-/PR- L breast IDC, s/p lumpectomy/SLNB. For adjuvant planning.",
}
LAZY = {"biomarkers": FAITHFUL["biomarkers"]}  # one line changed: the overview and the note still say HER2-positive
SUBTLY_INCOMPLETE = {**FAITHFUL, "encounters": FAITHFUL["encounters"] + "\n" + SUBTLE}


def scripted(reply) -> MockModel:
    return MockModel("mockllm/model", reply if callable(reply) else (lambda prompt: reply))


MISSES = scripted(json.dumps({"surviving": []}))
CATCHES = scripted(lambda prompt: json.dumps({"surviving": [{"quote": SUBTLE, "why": "echo before HER2 therapy"}]}
                                             if SUBTLE in prompt.split("PACKET:")[1] else {"surviving": []}))
MAKES_UP = scripted(json.dumps({"surviving": [{"quote": "trastuzumab was started on 06/01/2025", "why": "running HER2 line"}]}))


def build(edit: dict, checker: MockModel | None, retries: int = 0):
    editor = scripted(json.dumps({"sections": edit}))
    result = asyncio.run(build_counterfactuals([CASE], CATALOG, editor.model, checker.model if checker else None, "A", retries))
    return editor, result


def _mine(result):
    accepted = [e for e in result.accepted if e.intervention_id == A1.id]
    rejected = [r for r in result.rejected if r.tuple_id.endswith(A1.id)]
    return accepted, rejected


def test_the_editor_is_asked_from_the_pre_registered_description():
    editor, _ = build(FAITHFUL, MISSES)
    (prompt,) = list(editor.calls)
    assert A1.title in prompt and "WHAT MUST NO LONGER BE STATED" in prompt
    assert all(CATALOG.implications[n].fact in prompt for n in A1.residue)
    assert A1.expected_change in prompt


def test_a_lazy_editor_is_caught_by_the_deterministic_checks_even_when_the_checker_misses():
    _, result = build(LAZY, MISSES)
    accepted, (rejected,) = _mine(result)
    assert not accepted and any(r.startswith("residue") for r in rejected.reasons)


def test_a_checker_that_catches_rejects_with_the_verified_quote_and_one_that_makes_up_a_quote_is_not_trusted():
    _, result = build(SUBTLY_INCOMPLETE, CATCHES)
    accepted, (rejected,) = _mine(result)
    assert not accepted and rejected.reasons == [f"checker: still states the original fact: '{SUBTLE}'"]
    _, result = build(FAITHFUL, MAKES_UP)
    accepted, (rejected,) = _mine(result)
    assert not accepted and "not in the packet (reply not trusted)" in rejected.reasons[0]
    # The faithful edit passes a checker that reads it right.
    _, result = build(FAITHFUL, CATCHES)
    assert _mine(result)[0]


def test_a_miss_of_both_checks_is_counted_highlighted_and_never_scored_until_approved(tmp_path, capsys):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(CASE.model_dump_json() + "\n")
    _, result = build(SUBTLY_INCOMPLETE, MISSES)
    (entry,), _ = _mine(result)
    # Counted: accepted as unreviewed, with the surviving statement highlighted for the reviewer.
    assert entry.review == "unreviewed"
    assert any(SUBTLE in s["statement"] for s in entry.suspects)
    paths = write_counterfactuals(result, tmp_path / "cf")
    page = paths["review"].read_text()

    marks = re.findall(r'<mark class="suspect"[^>]*>(.*?)</mark>', page, re.S)
    assert any("targeted antibody course" in m for m in marks)
    # Never scored by default ...
    with pytest.raises(CatalogError, match="not approved"):
        build_css_task(cases=str(cases), families="A", counterfactuals=str(paths["counterfactuals"]), controls="none")
    # ... the clinician rejects it; a rejected entry is never scored.
    decisions = tmp_path / "d.jsonl"
    decisions.write_text(json.dumps({"tuple_id": entry.tuple_id, "decision": "rejected", "content_sha256": entry.content_sha256,
                                     "comment": "echo booking presupposes trastuzumab"}) + "\n")
    assert main(["counterfactuals", "review", str(paths["counterfactuals"]), "--decisions", str(decisions)]) == 0

    with pytest.raises(TaskInputError, match="no samples"):  # its only counterfactual rejected: nothing left to score
        build_css_task(cases=str(cases), families="A", counterfactuals=str(paths["counterfactuals"]), controls="none")


def test_an_approval_is_bound_to_the_text_approved(tmp_path, capsys):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(CASE.model_dump_json() + "\n")
    _, result = build(FAITHFUL, CATCHES)
    paths = write_counterfactuals(result, tmp_path / "cf")
    path = paths["counterfactuals"]
    (entry,) = [e for e in load_counterfactuals(path) if e.intervention_id == A1.id]
    decisions = tmp_path / "d.jsonl"
    decisions.write_text(json.dumps({"tuple_id": entry.tuple_id, "decision": "approved", "content_sha256": entry.content_sha256,
                                     "reviewer": "Dr R"}) + "\n")
    assert main(["counterfactuals", "review", str(path), "--decisions", str(decisions)]) == 0
    task = build_css_task(cases=str(cases), families="A", counterfactuals=str(path), controls="none")
    (sample,) = [s for s in task.dataset if s.id == entry.tuple_id]
    assert sample.metadata["counterfactual_review"] == "approved" and "clinician (Dr R)" in sample.metadata["counterfactual_verification"]
    # Editing the approved entry and re-locking it (or deleting the lock and locking afresh) drops the approval.
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        if r["tuple_id"] == entry.tuple_id:
            r["counterfactual_sections"]["overview"] += " Trastuzumab planned."
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "cf" / "counterfactuals.jsonl.lock").unlink()
    # A set that does not match its lock is refused before any review is recorded.
    assert main(["counterfactuals", "review", str(path), "--decisions", str(decisions)]) == 2
    assert "lock" in capsys.readouterr().err
    assert main(["counterfactuals", "lock", str(path)]) == 0
    assert "dropped 1 decision(s) made on other text" in capsys.readouterr().out
    (after,) = [e for e in load_counterfactuals(path) if e.tuple_id == entry.tuple_id]
    assert after.review == "unreviewed"
    with pytest.raises(CatalogError, match="not approved"):
        build_css_task(cases=str(cases), families="A", counterfactuals=str(path), controls="none")
    # An old decision (for the text before the edit) cannot be replayed onto the new text.
    assert main(["counterfactuals", "review", str(path), "--decisions", str(decisions)]) == 2
    assert "other text" in capsys.readouterr().err


def test_a_stale_approval_is_refused_by_the_task_even_with_unreviewed_allowed(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(CASE.model_dump_json() + "\n")
    _, result = build(FAITHFUL, CATCHES)
    (entry,), _ = _mine(result)
    approved = entry.model_copy(update={"approved": True, "decision": "approved", "approved_sha256": entry.content_sha256})
    changed = approved.model_copy(update={"counterfactual_sections": {**entry.counterfactual_sections, "allergies": "Penicillin."}})
    assert isinstance(changed, FrozenCounterfactual) and changed.review == "stale"
    path = tmp_path / "counterfactuals.jsonl"
    path.write_text(changed.model_dump_json() + "\n")
    write_lock(path)
    with pytest.raises(CatalogError, match="decision made on other text"):
        build_css_task(cases=str(cases), families="A", counterfactuals=str(path), controls="none", unreviewed="allow")


def test_offline_the_editor_route_ends_with_one_line_naming_the_missing_credential(tmp_path, capsys, monkeypatch):
    for name in ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    rc = main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "openai/gpt-4o", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "OPENAI_API_KEY" in err and "Traceback" not in err


def test_an_oserror_is_reported_by_its_real_cause(tmp_path, capsys, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "counterfactuals.jsonl"))

    monkeypatch.setattr(module, "write_text_atomic", full_disk)
    rc = main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "A", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "No space left on device" in err and "cannot read" not in err
