"""Sentences, not lines (issue 22): wrapped plan sentences, tables and dated entries."""

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.mutate import neutralise_plans
from clinical_cf.catalog.css.residue import scanned_lines
from clinical_cf.catalog.css.sentences import logical_lines, statements, wrapped_groups

CATALOG = load_catalog(CATALOG_PATH)

# A transcribed dictation (a style no earlier fixture uses): hard-wrapped prose, the plan
# sentence split over two physical lines.
DICTATION = (
    "He is now on his first line of treatment and tolerating it well with a good partial response on\n"
    "the last scan. Plan: we will continue osimertinib and restage him with a CT in three\n"
    "months. His wife was present and agreed with the plan."
)


def test_a_wrapped_sentence_is_one_logical_line_and_a_table_row_a_statement():
    assert len(wrapped_groups(DICTATION)) == 1
    said = statements(DICTATION)
    assert said[1] == "Plan: we will continue osimertinib and restage him with a CT in three months."
    table = "| Stage | IIB |\n|---|---|\n| ER | 95% |"
    assert logical_lines(table) == ["Stage: IIB", "ER: 95%"]


def test_a_wrapped_plan_sentence_is_removed_whole_and_untouched_wrapping_is_kept():
    ongoing = CATALOG.implications["ongoing_line"]
    out = neutralise_plans(DICTATION, [ongoing])
    assert "continue osimertinib" not in out and "three" not in out and "months." not in out.split("present")[0][-20:]
    assert "His wife was present" in out and "partial response" in out
    untouched = "Seen with his wife, who asked about\nthe holiday they have booked in May."
    assert neutralise_plans(untouched, [ongoing]) == untouched  # no cut: physical lines kept byte for byte


def test_residue_is_seen_in_a_sentence_split_over_two_lines():
    sections = {"overview": "Plan: we will continue\nosimertinib and restage in 3 months."}
    assert scanned_lines(sections) == [("overview", "Plan: we will continue osimertinib and restage in 3 months.")]
