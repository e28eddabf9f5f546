"""The edit record the CSS judge's score carries for the report (issue 45): it says exactly what changed, and what it
records survives Inspect's own summary thinning, so the report never needs the full sample for it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from inspect_ai.log._util import thin_metadata

from clinical_cf.scorers.edit_record import MAX_PARTS, PIECE, edit_fields, edit_from, edit_segments

WORDS = st.sampled_from(["FOLFOX", "resected", "the", "patient", "liver", "CT", "2025-03-01", "ECOG 1", "<b>", "&", "…", "no"])
LINE = st.lists(WORDS, min_size=0, max_size=12).map(" ".join)
TEXT = st.lists(LINE, min_size=1, max_size=8).map("\n".join)


def _side(segments: list[list[str]], keep: str) -> str:
    return "".join(s[1] for s in segments if s[0] in ("=", keep))


@given(LINE, LINE)
def test_every_word_of_a_one_line_edit_is_kept_or_marked(before, after):
    segments = edit_segments(before, after, context=None)
    if before == after:
        assert segments == []
    else:
        assert _side(segments, "-") == before and _side(segments, "+") == after


LONG = st.lists(st.text(min_size=0, max_size=400), min_size=1, max_size=6).map("\n".join)


@given(st.one_of(TEXT, LONG), st.one_of(TEXT, LONG))
def test_the_record_survives_inspects_summary_thinning_and_reads_back_as_the_edit(before, after):
    fields = edit_fields(before, after)
    if fields["edit_parts"] is None:  # too large for a summary: the report reads the packets from the full sample
        return
    assert thin_metadata(fields) == fields  # Inspect's own thinning keeps every field whole
    assert edit_from(thin_metadata(fields)) == edit_segments(before, after)


def test_a_huge_edit_is_recorded_as_too_large_and_an_older_log_has_no_record():
    assert edit_fields("a", "b" * PIECE * MAX_PARTS * 4) == {"edit_parts": None}
    assert edit_from({"baseline_recommendations": "1. FOLFOX"}) is None
