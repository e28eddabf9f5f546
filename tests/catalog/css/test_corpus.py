"""Counterfactuals on hand-written packets in four styles the generator does not use."""

from pathlib import Path

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.completeness import evaluate_corpus, load_corpus
from clinical_cf.catalog.css.interventions import load_catalog

PACKETS = Path(__file__).parents[2] / "fixtures" / "packets"
CORPUS = load_corpus(PACKETS / "corpus.yaml")
SECOND = load_corpus(PACKETS / "heldout.yaml")
CATALOG = load_catalog(CATALOG_PATH)


def test_corpus_covers_four_styles_and_twelve_packets():
    assert len(CORPUS) >= 12
    assert {e.style for e in CORPUS} >= {"terse", "letter", "ehr", "handover"}


def test_most_must_apply_counterfactuals_are_correct_and_complete():
    report = evaluate_corpus(CORPUS, CATALOG)
    assert report.must_apply >= 24
    # Issue 22: imported packets get the coherence check too. Three must-apply B1 tuples ask for a
    # 170-day first line in patients diagnosed 1-5 months before the board: impossible histories,
    # dropped as incoherent (counted), not scored. The bar holds for every other tuple.
    incoherent = [g for g in report.graded if g.outcome == "incoherent"]
    assert len(incoherent) <= 3 and all(
        g.intervention_id == "B1_first_line_progression" and "before the packet's diagnosis" in g.detail for g in incoherent
    )
    # Catalog v4 (issue 27): a must-apply tuple falls outside its intervention's scope, where the expected direction
    # does not hold (stage IV ovarian cancer is still cytoreduced). C3 on resected stage III colon is back in scope
    # since catalog v5 (issue 34: universal MMR testing, ATOMIC).
    out_of_scope = {(g.case_id, g.intervention_id) for g in report.graded if g.outcome == "out_of_scope"}
    assert out_of_scope == {("corpus-ehr-ovarian", "E1_upstage_to_metastatic")}
    possible = report.must_apply - len(incoherent) - len(out_of_scope)
    assert report.complete / possible >= 0.9, [(g.case_id, g.intervention_id, g.outcome, g.detail) for g in report.graded]
    # Every must-apply tuple is at least applied: none is silently filtered out or a no-op.
    assert not {"not_applicable", "noop"} & set(report.outcomes())


def test_an_edit_the_history_contradicts_is_dropped_not_scored():
    report = evaluate_corpus(CORPUS, CATALOG)
    assert report.flagged and all(f.outcome == "flagged" for f in report.flagged)


def test_a_second_corpus_in_four_more_styles_is_complete_too():
    report = evaluate_corpus(SECOND, CATALOG)
    assert {e.style for e in SECOND} == {"soap", "proforma", "discharge", "problem"}
    # Catalog v5 (issue 34): E1 on resected EGFR-mutant NSCLC is out of scope (adjuvant and metastatic osimertinib are
    # the same drug); the bar holds for the tuples in scope.
    out_of_scope = {(g.case_id, g.intervention_id) for g in report.graded if g.outcome == "out_of_scope"}
    assert out_of_scope == {("heldout-discharge-lung", "E1_upstage_to_metastatic")}
    in_scope = [g for g in report.graded if g.outcome != "out_of_scope"]
    assert sum(g.outcome == "complete" for g in in_scope) / len(in_scope) >= 0.9, [(g.case_id, g.intervention_id, g.outcome, g.detail) for g in in_scope]
