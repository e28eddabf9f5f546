"""Recommendation parsing: the requested JSON, and lists recovered from prose."""

from clinical_cf.solvers.css import ArmResult, format_recommendations, parse_recommendations


def test_json_reply_with_fence_and_prose():
    reply = 'Here you go:\n```json\n{"recommendations": [{"treatment": "FOLFOX", "rationale": "RAS mutant"}, "bevacizumab"], "not_recommended": [{"treatment": "cetuximab", "reason": "RAS"}]}\n```'
    recs, avoid, parsed = parse_recommendations(reply)
    assert parsed
    assert [r.treatment for r in recs] == ["FOLFOX", "bevacizumab"]
    assert recs[0].rationale == "RAS mutant"
    assert [r.treatment for r in avoid] == ["cetuximab"]


def test_prose_list_is_recovered_and_negations_are_separated():
    reply = """Recommendations:
1. Adjuvant mFOLFIRINOX - fit patient after R0 resection
2) Gemcitabine + capecitabine: if mFOLFIRINOX not tolerated
- Avoid olaparib: no germline BRCA
Discussion follows."""
    recs, avoid, parsed = parse_recommendations(reply)
    assert not parsed
    assert [r.treatment for r in recs] == ["Adjuvant mFOLFIRINOX", "Gemcitabine + capecitabine"]
    assert recs[0].rationale == "fit patient after R0 resection"
    assert [r.treatment for r in avoid] == ["olaparib"]  # the avoided option, without the verb


def test_unparseable_reply_is_shown_raw_to_the_judge():
    arm = ArmResult(summary="", raw="I would discuss with the patient.", parsed=False, provenance="unreadable")
    assert "raw reply follows" in format_recommendations(arm)
    assert "I would discuss with the patient." in format_recommendations(arm)
