"""Frozen counterfactual sets: scripted editors are verified, retried, rejected; tasks use the texts verbatim."""

import asyncio
import json

import pytest
from inspect_ai.model import GenerateConfig, get_model

from clinical_cf.catalog.css.counterfactuals import (
    build_counterfactuals,
    load_counterfactuals,
    parse_edit,
    write_counterfactuals,
)
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.core.errors import CatalogError
from clinical_cf.cli import main
from clinical_cf.catalog.css import CATALOG_PATH
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


def build(model: MockModel, checker=None, retries: int = 1):
    return asyncio.run(build_counterfactuals([CASE], CATALOG, model.model, checker, families="A", retries=retries))


def test_a_good_edit_is_accepted_with_the_other_sections_untouched():
    result = build(editor(json.dumps({"sections": GOOD})))
    (entry,) = [e for e in result.accepted if e.intervention_id == A1.id]
    assert entry.attempts == 1 and entry.verdict == "complete"
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
    checker = MockModel("mockllm/model", lambda prompt: '{"still_implied": true, "lines": ["For adjuvant planning."]}')
    result = build(editor(json.dumps({"sections": GOOD})), checker=checker.model, retries=0)
    assert not [e for e in result.accepted if e.intervention_id == A1.id]
    (rejected,) = [r for r in result.rejected if r.tuple_id.endswith(A1.id)]
    assert rejected.reasons[0].startswith("checker")


def test_a_frozen_set_is_locked_reviewed_and_used_verbatim_by_the_task(tmp_path):
    result = build(editor(json.dumps({"sections": GOOD})))
    paths = write_counterfactuals(result, tmp_path)
    page = paths["review"].read_text()
    assert A1.id in page and "HER2-negative (FISH non-amplified)" in page
    task = build_css_task(cases=str(HANDWRITTEN_CASES), families="A", counterfactuals=str(paths["counterfactuals"]), controls="none")
    (sample,) = [s for s in task.dataset if s.id == f"{CASE.case_id}:{A1.id}"]
    assert GOOD["overview"] in sample.input
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
    assert main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "ABCDEN", "--out", str(tmp_path)]) == 0
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
