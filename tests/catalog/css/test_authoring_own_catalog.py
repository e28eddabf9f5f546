"""Issue 43, authoring: a user's catalog extends the bundled one, a negative-statement residue term is not cancelled by
its own words, and a drop names the line and the term (each failed before)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import answer_leak
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.importer import answer_case, import_packet, pending_record
from clinical_cf.catalog.css.interventions import ResidueTerm, extend_catalog, intervention_template, load_catalog, scope_audit
from clinical_cf.catalog.css.residue import ResidueHit, term_matches
from clinical_cf.catalog.css.template_families import catalog_template
from clinical_cf.cli import _user_catalog, build_parser
from tests.catalog.css.roundtrip_corpus import corpus, render
from tests.catalog.css.test_import_what_the_packet_says import GLIOBLASTOMA_FR

BUNDLED = load_catalog(CATALOG_PATH)


def test_a_negative_statement_term_is_residue_in_its_own_words():
    term = ResidueTerm(kind="history", pattern=r"(?i)NOT STARTED YET")
    assert term_matches(term, "Temozolomide: NOT STARTED YET") == ["NOT STARTED YET"]  # was cancelled by its own "NOT"
    positive = ResidueTerm(kind="status", pattern=r"(?i)MGMT[^.;]{0,20}methylated")
    assert term_matches(positive, "MGMT promoter is not methylated") == []  # a cue inside the match still cancels
    assert term_matches(positive, "no MGMT methylated clone") == []


def test_a_drop_names_the_line_and_the_term():
    hit = ResidueHit("overview", "Plan: temozolomide after radiotherapy", "mgmt_methylated", "agent", "temozolomide")
    said = hit.describe()
    assert "Plan: temozolomide after radiotherapy" in said and "'temozolomide'" in said and "[overview]" in said


def _own_catalog(tmp_path):
    text = intervention_template("glioblastoma", "MGMT", ["temozolomide"])
    path = tmp_path / "mgmt.yaml"
    path.write_text(re.sub(r"<TODO[^>]*>", "filled in by the clinician (test)", text))
    return path


def test_a_user_catalog_extends_the_bundled_one_by_default(tmp_path):
    own = _own_catalog(tmp_path)
    parser = build_parser()
    args = parser.parse_args(["cases", "import", "x.txt", "--out", str(tmp_path / "c.jsonl"), "--catalog", str(own)])
    ids = [i.id for i in _user_catalog(args).interventions]
    assert ids[: len(BUNDLED.interventions)] == [i.id for i in BUNDLED.interventions]  # was: the user's catalog alone
    assert ids[-1].startswith("U_mgmt") and len(ids) == len(BUNDLED.interventions) + 1
    only = parser.parse_args([*["cases", "import", "x.txt", "--out", str(tmp_path / "c.jsonl")], "--catalog", str(own), "--catalog-only"])
    assert [i.id for i in _user_catalog(only).interventions] == [ids[-1]]
    assert extend_catalog(BUNDLED, BUNDLED, CATALOG_PATH).interventions == BUNDLED.interventions  # the same entries: once


def test_a_draft_that_writes_the_expected_answer_is_caught():
    b2 = BUNDLED.by_id("B2_progression_on_current_line")
    baseline = "Medical oncology f/u: on FOLFOX, ongoing, stable disease."
    leaked = baseline + "\nRestaging CT: progressive disease. Stops the regimen now running and moves to a later-line option."
    honest = baseline + "\nRestaging CT: progressive disease on current systemic therapy (RECIST 1.1)."
    assert answer_leak(baseline, leaked, b2) is not None  # a user's draft leaked it before; nothing checked
    assert answer_leak(baseline, honest, b2) is None


def _gbm_catalog(tmp_path):
    text = catalog_template("glioblastoma", "MGMT", ["temozolomide"], sites=["the spine"], positive_word="methylated",
                            negative_word="unmethylated")
    path = tmp_path / "gbm.yaml"
    path.write_text(re.sub(r"<TODO[^>]*>", "filled in by the clinician (test)", text))
    return load_catalog(path)


def test_catalog_template_writes_every_family_for_a_users_type(tmp_path):
    own = _gbm_catalog(tmp_path)
    assert sorted({i.family for i in own.interventions}) == list("ABCDE") and scope_audit(own) == []
    flip = own.interventions[0]
    assert any("méthylé" in op.pattern for op in flip.mutation if op.op == "replace")  # the languages' result words


@pytest.mark.slow  # imports a packet and expands six interventions on it (about 10 s)
def test_every_template_family_drafts_a_french_glioblastoma(tmp_path):
    own = _gbm_catalog(tmp_path)
    # A French glioblastoma, imported: the flip reads "méthylé", E writes no carcinoma, every draft is checked for residue.
    report = import_packet(GLIOBLASTOMA_FR, "gbm-fr", own)
    _record, case, still_open = answer_case(pending_record(report), {"stage": "none", "metastatic": "false", "age": "58",
                                                                     "prior_lines": "0"}, {"*"})
    assert case is not None, still_open
    drafts = {t.intervention.family: t.counterfactual.text for t in expand_tuples([case], own, "regex").tuples}
    assert "MGMT unmethylated" in drafts["A"] and "méthylé" not in drafts["A"].split("MGMT")[1][:15]
    assert "new metastases in the spine" in drafts["E"] and "carcinoma" not in drafts["E"].lower()
    assert "MGMT" not in drafts["C"] and "IDH1" in drafts["C"]  # the strip takes the MGMT statement only


def test_a_typeless_metastatic_filter_does_not_reach_a_glioblastoma():
    report = import_packet(GLIOBLASTOMA_FR, "gbm-fr", BUNDLED)
    _record, case, still_open = answer_case(pending_record(report), {"stage": "none", "metastatic": "false", "age": "58",
                                                                     "prior_lines": "0"}, {"*"})
    assert case is not None and case.staging_system == "who_cns", still_open
    assert not BUNDLED.by_id("E1_upstage_to_metastatic").applies_to.matches(case)  # was: "metastatic carcinoma" inserted


def test_a_draft_of_a_fhir_packet_edits_its_statements_and_keeps_every_other_resource():
    truth = next(t for t in corpus() if t.structure == "fhir" and t.lang == "en" and t.cancer_type == "breast")
    truth = dataclasses.replace(truth, resected=True, stage_dx="IIA", stage_now="IIA")
    report = import_packet(render(truth), truth.case_id, BUNDLED)
    pending = {k: "not_tested" for k, q in report.questions.items() if k.startswith("biomarkers.") and q["value"] is None}
    _record, case, still_open = answer_case(pending_record(report), {"age": "60", "prior_lines": "0", **pending}, {"*"})
    assert case is not None, still_open
    (d1,) = [t for t in expand_tuples([case], BUNDLED, "regex", families="D").tuples if t.intervention.id == "D1_remove_resection"]
    before, after = d1.baseline.text.splitlines(), d1.counterfactual.text.splitlines()
    removed = [line for line in before if line not in after]
    assert removed and all("mastectomy" in line for line in removed), removed  # the operation's statement, nothing else
