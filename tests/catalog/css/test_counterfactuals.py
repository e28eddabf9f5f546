"""Frozen counterfactual sets: scripted editors are verified, retried, rejected; tasks use the texts verbatim."""

import asyncio
import json

import pytest
from inspect_ai.model import GenerateConfig, get_model

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import (
    FrozenCounterfactual,
    _diff_rows,
    build_counterfactuals,
    load_counterfactuals,
    parse_edit,
    write_counterfactuals,
)
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import write_lock
from clinical_cf.tasks.css_task import build_css_task
from tests.helpers import HANDWRITTEN_CASES, MockModel

CATALOG = load_catalog(CATALOG_PATH)
CASE = next(c for c in load_cases(HANDWRITTEN_CASES) if c.case_id == "fx-breast-1")
A1 = CATALOG.by_id("A1_her2_positive_to_negative")

GOOD = {
    "biomarkers": "Core bx 02/20/2025: ER 0%, PgR 0%. HER-2/neu IHC 1+, not amplified by FISH (HER2/CEP17 ratio 1.1). Ki-67 45%.",
    "encounters": CASE.sections["encounters"].replace("HER2-positive", "HER2-negative"),
    "overview": "52F with resected stage IIA HER2-negative (FISH non-amplified) ER-/PR- L breast IDC, s/p lumpectomy/SLNB. For adjuvant planning.",
}
# Changes the biomarker line only: the overview and the clinic note still call the tumour HER2-positive.
INCOMPLETE = {"biomarkers": GOOD["biomarkers"]}
# A correct edit that also rewrites the vitals, which the instruction does not concern.
UNRELATED = {**GOOD, "vitals": "05/12/2025 BP 150/95, HR 101, Wt 64 kg."}


def editor(*replies: str) -> MockModel:
    """A scripted editor: the n-th call gets the n-th reply (the last one repeats)."""
    calls = []

    def respond(prompt: str) -> str:
        calls.append(prompt)
        return replies[min(len(calls), len(replies)) - 1]

    return MockModel("mockllm/model", respond)


def decision(entry, verdict: str, **extra) -> str:
    """One line of decisions.jsonl as review.html saves it: bound to the entry's content hash."""

    entry = entry if isinstance(entry, FrozenCounterfactual) else FrozenCounterfactual.model_validate(entry)
    return json.dumps({"tuple_id": entry.tuple_id, "decision": verdict, "content_sha256": entry.content_sha256, **extra}) + "\n"


def build(model: MockModel, checker=None, retries: int = 1):
    return asyncio.run(build_counterfactuals([CASE], CATALOG, model.model, checker, families="A", retries=retries))


def test_a_good_edit_is_accepted_with_the_other_sections_untouched():
    result = build(editor(json.dumps({"sections": GOOD})))
    (entry,) = [e for e in result.accepted if e.intervention_id == A1.id]
    # Accepted, but no checker role ran: not called complete (issue 35); the reviewer decides.
    assert entry.attempts == 1 and entry.verdict == "unchecked" and entry.completeness.startswith("unchecked")
    assert entry.counterfactual_sections["vitals"] == CASE.sections["vitals"]
    assert entry.counterfactual_sections["overview"] == GOOD["overview"]


def test_an_incomplete_edit_is_caught_by_the_residue_check_retried_and_dropped():
    model = editor(json.dumps({"sections": INCOMPLETE}))
    result = build(model)
    (rejected,) = [r for r in result.rejected if r.tuple_id.endswith(A1.id)]
    assert rejected.attempts == 2 and model.total_calls == 2
    assert any("residue" in r and "overview" in r for r in rejected.reasons)
    # The retry tells the editor why.
    assert any("rejected" in prompt and "residue" in prompt for prompt in model.calls)


def test_an_edit_touching_an_unrelated_section_is_rejected():
    result = build(editor(json.dumps({"sections": UNRELATED})), retries=0)
    (rejected,) = [r for r in result.rejected if r.tuple_id.endswith(A1.id)]
    assert any("vitals" in r for r in rejected.reasons)


def test_a_malformed_reply_is_rejected_and_a_good_retry_accepted():
    result = build(editor("Sure! I changed HER2 to negative.", json.dumps({"sections": GOOD})))
    (entry,) = [e for e in result.accepted if e.intervention_id == A1.id]
    assert entry.attempts == 2
    with pytest.raises(ValueError, match="unknown section"):
        parse_edit('{"sections": {"pathology": "x"}}')


def test_a_checker_that_still_sees_the_original_fact_rejects_the_edit():
    checker = MockModel("mockllm/model", lambda prompt: '{"surviving": [{"quote": "For adjuvant planning.", "why": "plan"}]}')
    result = build(editor(json.dumps({"sections": GOOD})), checker=checker.model, retries=0)
    assert not [e for e in result.accepted if e.intervention_id == A1.id]
    (rejected,) = [r for r in result.rejected if r.tuple_id.endswith(A1.id)]
    assert rejected.reasons[0].startswith("checker")


def test_a_frozen_set_is_locked_reviewed_and_used_verbatim_by_the_task(tmp_path, capsys):
    result = build(editor(json.dumps({"sections": GOOD})))
    paths = write_counterfactuals(result, tmp_path)
    page = paths["review"].read_text()
    # Word-level diffs (issue 22) mark the changed words, so the phrase is split by <ins> markup.
    assert A1.id in page and "<ins>HER2-negative</ins>" in page and "<ins>non-amplified)</ins>" in page
    # Issue 22: review counts. An unapproved set is refused by the task ...
    with pytest.raises(CatalogError, match="not approved"):
        build_css_task(cases=str(HANDWRITTEN_CASES), families="A", counterfactuals=str(paths["counterfactuals"]), controls="none")
    # ... until the reviewer's decisions (saved by review.html) are recorded; the lock covers them.
    decisions = tmp_path / "decisions.jsonl"
    (entry,) = load_counterfactuals(paths["counterfactuals"])
    decisions.write_text(decision(entry, "approved", comment="ok", reviewer="Dr Q"))
    assert main(["counterfactuals", "review", str(paths["counterfactuals"]), "--decisions", str(decisions)]) == 0
    assert "1 approved" in capsys.readouterr().out
    task = build_css_task(cases=str(HANDWRITTEN_CASES), families="A", counterfactuals=str(paths["counterfactuals"]), controls="none")
    (sample,) = [s for s in task.dataset if s.id == f"{CASE.case_id}:{A1.id}"]
    assert GOOD["overview"] in sample.input
    assert sample.metadata["counterfactual_review"] == "approved"
    assert sample.metadata["counterfactual_verification"] == "deterministic checks + clinician (Dr Q)"
    # An edited frozen file no longer matches its lock and is refused.
    text = paths["counterfactuals"].read_text().replace("non-amplified", "amplified")
    paths["counterfactuals"].write_text(text)
    with pytest.raises(CatalogError, match="lock"):
        load_counterfactuals(paths["counterfactuals"])


def test_the_review_page_escapes_packet_text(tmp_path):
    hostile = {**GOOD, "overview": GOOD["overview"] + " <script>alert(1)</script>"}
    paths = write_counterfactuals(build(editor(json.dumps({"sections": hostile}))), tmp_path)
    page = paths["review"].read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_regex_mode_writes_the_same_frozen_format_from_the_cli(tmp_path, capsys):
    assert (
        main(
            [
                "counterfactuals",
                "build",
                "--cases",
                str(HANDWRITTEN_CASES),
                "--editor",
                "regex",
                "--families",
                "ABCDEN",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    entries = load_counterfactuals(tmp_path / "counterfactuals.jsonl")
    assert entries and {e.editor for e in entries} == {"regex"}
    assert "accepted" in capsys.readouterr().out


@pytest.mark.slow  # the bundled local model as editor
def test_the_bundled_model_can_act_as_editor(tmp_path):
    """Plumbing only: SmolLM2-135M rarely makes a valid edit; the run must finish and account for every pair."""
    pytest.importorskip("llama_cpp")
    model = get_model("gguf/smollm2", role="editor", config=GenerateConfig(max_tokens=200, temperature=0.0))
    result = asyncio.run(build_counterfactuals([CASE], CATALOG, model, families="A", retries=0, max_tokens=200, limit=1))
    assert len(result.accepted) + len(result.rejected) == 1
    paths = write_counterfactuals(result, tmp_path)
    assert paths["counterfactuals"].exists() and paths["review"].exists()


def _frozen_set(tmp_path, mutate=None):
    """A regex-built frozen set of the handwritten cases (families A and D), optionally edited and re-locked."""

    assert (
        main(
            ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "AD", "--out", str(tmp_path)]
        )
        == 0
    )
    path = tmp_path / "counterfactuals.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    if mutate:
        mutate(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_lock(path)  # a tampered set that was re-locked: the lock alone cannot catch it
    return path, rows


def test_unreviewed_entries_are_scored_only_when_allowed_and_then_say_so(tmp_path):
    path, rows = _frozen_set(tmp_path)
    task = build_css_task(cases=str(HANDWRITTEN_CASES), families="AD", counterfactuals=str(path), controls="none", unreviewed="allow")
    assert len(task.dataset) == len(rows)
    # The handwritten cases have no structured record: their regex edits are drafts, and every sample says so.
    assert {s.metadata["counterfactual_review"] for s in task.dataset} == {"unreviewed regex draft (scored with -T unreviewed=allow)"}
    assert task.metadata["counterfactuals_review"] == {"approved": 0, "rejected": 0, "unreviewed": len(rows), "stale": 0}
    assert task.metadata["unreviewed_scored"] == len(rows)
    # A rejected entry is never scored; the rest, approved, run without the flag.
    decisions = tmp_path / "d.jsonl"
    decisions.write_text("".join(decision(r, "rejected" if i == 0 else "approved") for i, r in enumerate(rows)))
    assert main(["counterfactuals", "review", str(path), "--decisions", str(decisions)]) == 0
    task = build_css_task(cases=str(HANDWRITTEN_CASES), families="AD", counterfactuals=str(path), controls="none")
    assert rows[0]["tuple_id"] not in {s.id for s in task.dataset} and len(task.dataset) == len(rows) - 1
    # A generated (not frozen) run of cases without a record: regex drafts, refused by default (issue 28) ...
    with pytest.raises(CatalogError, match="drafts, never scored as verified"):
        build_css_task(cases=str(HANDWRITTEN_CASES), families="A", controls="none")
    # ... and scored only by consent, each sample saying so.
    generated = build_css_task(cases=str(HANDWRITTEN_CASES), families="A", controls="none", unreviewed="allow")
    assert {s.metadata["counterfactual_verification"] for s in generated.dataset} == {"regex draft: deterministic checks"}
    assert generated.metadata["unreviewed_scored"] == len(generated.dataset)


def test_a_decision_for_an_unknown_entry_is_refused_and_nothing_written(tmp_path, capsys):
    path, _ = _frozen_set(tmp_path)
    before = path.read_text()
    decisions = tmp_path / "d.jsonl"
    decisions.write_text(json.dumps({"tuple_id": "nope:A1", "decision": "approved"}) + "\n")
    assert main(["counterfactuals", "review", str(path), "--decisions", str(decisions)]) != 0
    err = capsys.readouterr().err
    assert "d.jsonl" in err and "name no entry" in err and "nope:A1" in err
    assert path.read_text() == before


def _first(rows, prefix):
    return next(r for r in rows if r["intervention_id"].startswith(prefix))


@pytest.mark.parametrize(
    "tamper, words",
    [
        (lambda r: r.update(counterfactual_sections=dict(r["baseline_sections"])), "no-op"),
        (
            lambda r: r.update(
                counterfactual_sections={k: (v if k == "overview" else "") for k, v in r["counterfactual_sections"].items()}
            ),
            "truncated",
        ),
        (lambda r: r["counterfactual_sections"].pop("labs"), "lacks 1 of the ten sections"),
        (lambda r: r.update(family="D"), "labelled family D"),
        (lambda r: r["baseline_sections"].update(overview=r["baseline_sections"]["overview"] + " Edited."), "not this case's own packet"),
    ],
)
def test_a_tampered_frozen_entry_is_refused_at_load_with_its_id(tmp_path, tamper, words):
    def mutate(rows):
        tamper(_first(rows, "A1"))
        for r in rows:
            # A forger who re-approves and re-hashes the tampered text: the load-time checks still refuse it.
            r["approved"], r["decision"] = True, "approved"
            r["approved_sha256"] = FrozenCounterfactual.model_validate(r).content_sha256

    path, rows = _frozen_set(tmp_path, mutate)
    with pytest.raises(CatalogError, match=words) as info:
        build_css_task(cases=str(HANDWRITTEN_CASES), families="AD", counterfactuals=str(path), controls="none")
    assert info.value.entry == _first(rows, "A1")["tuple_id"]


def test_the_review_page_shows_a_one_word_change_as_that_word(tmp_path):
    long_line = "Assessment: " + "stable findings, " * 20 + "HER2 positive on core biopsy."
    ((_tag, old, new),) = _diff_rows(long_line, long_line.replace("positive", "negative"))
    assert ("del", "positive") in old and ("ins", "negative") in new
    page = write_counterfactuals(build(editor(json.dumps({"sections": GOOD}))), tmp_path)["review"].read_text()
    assert "<del>" in page and "<ins>" in page and 'value="approved"' in page and "decisions.jsonl" in page


def test_the_build_counts_rejections_only_for_the_pairs_asked_for():
    cases = load_cases(HANDWRITTEN_CASES)
    everything = asyncio.run(build_counterfactuals(cases, CATALOG, "regex", families="ABCDE"))
    limited = asyncio.run(build_counterfactuals(cases, CATALOG, "regex", families="ABCDE", limit=3))
    assert len(limited.accepted) + len(limited.rejected) == 3
    assert len(everything.accepted) + len(everything.rejected) > 3
