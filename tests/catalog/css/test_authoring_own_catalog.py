"""Issue 43, authoring: a user's catalog extends the bundled one, a negative-statement residue term is not cancelled by
its own words, and a drop names the line and the term (each failed before)."""

from __future__ import annotations

import re

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import answer_leak
from clinical_cf.catalog.css.interventions import ResidueTerm, extend_catalog, intervention_template, load_catalog
from clinical_cf.catalog.css.residue import ResidueHit, term_matches
from clinical_cf.cli import _user_catalog, build_parser

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
