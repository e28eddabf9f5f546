"""Blind round for issue 44: the corpus of tests/replies/blind_i44.py, one test per reply and per judge-block format.

Each reply must read to the value a careful human reads (or be unreadable when it states none), no lie may pass
with one honest reader, and (stated, not required by the issue) the same lie told by both readers is listed.
What fails today is xfail (strict=False), named by class; `python tests/replies/blind_i44.py --show` prints the table.
"""
from __future__ import annotations

import anyio
import pytest

from tests.replies.blind_i44 import CORPUS, PLAN_FORMATS, judge_blocks, run_entry

# Inspect loads its entry points on the first mockllm model (about 15 s per worker), and the corpus runs four reader
# set-ups per reply: a measurement round, run by `make test`, not by `make test-fast`.
pytestmark = pytest.mark.slow

SILENT = "read into a value the reply does not state"
REFUSED = "correct reading refused"
LOST = "unreadable, counted (a stated value lost)"

# id -> (class, what) for every reply that does not read to its truth today
FAILING = {
    "css-streamed-duplicate": (SILENT, "a duplicated stream chunk read as the item 'OsimertinibRECOMMENDED: Osimertinib'"),
    "css-json-conditional-item": (SILENT, "an item made conditional only by its rationale reaches the judge unconditional"),
    "css-superscript-cite": (SILENT, "superscript footnote markers NFKC-folded into the item: 'Osimertinib1'"),
    "judge-lower-unlisted": (SILENT, "'I'd lower this to 0.5' after 'Score: 1' is no revision cue: read 1.0"),
    "flag-unlisted-revision": (SILENT, "'that is a critical error after all' after 'critical_error: no': read no"),
    "flag-yes-no": (SILENT, "'critical error: yes/no' read as yes"),
    "css-conditional": (REFUSED, "'trastuzumab should be added' (conditional) taken as a revision: conflicting"),
    "css-not-x-sentence": (REFUSED, "'not tamoxifen.' on the answer's line refuses 'RECOMMENDED: Letrozole'"),
    "css-korean-negated-item": (REFUSED, "a hangul particle glued to the drug (펨브롤리주맙은): quote lacks its value"),
    "mcq-cyrillic-B": (REFUSED, "Cyrillic look-alike letter (В for B) is not folded"),
    "mcq-cyrillic-AC": (REFUSED, "Cyrillic look-alike letters (А, С) are not folded"),
    "mcq-lowercase-prose": (REFUSED, "a lower-case letter in prose ('i'd go with b')"),
    "mcq-all-except": (REFUSED, "'all except B' names no selected letter"),
    "mcq-ps-conditional": (REFUSED, "a hypothetical P.S. ('the answer would be C') makes the answer conflicting"),
    "wf-cyrillic-E": (REFUSED, "Cyrillic Е in ESCALATE"),
    "wf-portuguese-verb": (REFUSED, "Portuguese verb 'escalar' not taken as the action's word"),
    "wf-hindi-neg": (REFUSED, "'ESCALATE नहीं करना चाहिए' on the line of 'ACTION: ANSWER'"),
    "wf-json-alternative": (REFUSED, "an 'alternative_action' field refuses the action"),
    "sens-cyrillic": (REFUSED, "Cyrillic look-alike candidate letters"),
    "sens-hindi": (REFUSED, "'60 प्रतिशत' (Hindi 'percent') is no stated scale"),
    "sens-korean-pct": (REFUSED, "'60퍼센트' (Korean 'percent') is no stated scale"),
    "mcq-dup-json-cut": (LOST, "a stream chunk duplicated after a whole object is read as truncated"),
    "judge-xml": (LOST, "<score>1</score>"),
    "judge-percent": (LOST, "'Score: 100%'"),
    "judge-fifty-percent": (LOST, "'Score: 50%'"),
    "judge-portuguese": (LOST, "'Pontuação: 0,5'"),
    "judge-korean": (LOST, "'점수: 1'"),
    "judge-streamed-dup": (LOST, "'Score: 1Score: 1'"),
    "judge-cyrillic-label": (LOST, "'Сcore: 1' with Cyrillic С"),
    "flag-korean": (LOST, "'치명적 오류: 예'"),
    "flag-xml": (LOST, "<critical_error>yes</critical_error>"),
    "flag-portuguese": (LOST, "'erro crítico: sim'"),
}

# the same lie told by both readers passes the structural refusers (the limit of agreement; the issue asks for the
# count, not for 0)
SAME_LIE = {
    "css-yaml", "css-xml", "css-numbered-subbullets", "css-rst", "css-portuguese", "css-korean", "css-hindi",
    "css-hindi-lie-both", "css-toolcall-parameters", "css-two-options", "css-disclaimer-after",
    "css-yaml-flow-negated", "css-rst-field-list", "css-plan-b-fallback", "css-revision-favour", "mcq-hindi-neg",
    "mcq-refusal", "mcq-revision-unlisted", "mcq-or", "mcq-arrow", "wf-two-options", "wf-hindi-neg",
    "wf-lower-unlisted", "wf-arrow-conf", "wf-ps-conditional", "sens-two-options", "sens-arrow",
    "sens-revision-unlisted",
}

BLOCK_DIFFERS = {
    "cyrillic-homoglyph": "Cyrillic а inside the treatment names is not folded",
    "superscript-footnotes": "superscript footnote markers become digits glued to the item",
    "dagger-footnotes": "dagger footnote markers stay in the item",
    "inline-rationale": "a parenthesised rationale on an answer line stays in the item (JSON's rationale does not)",
}


_OUTCOMES: dict[str, dict] = {}


def _outcome(entry) -> dict:
    """One run of the entry's reader set-ups per worker, shared by the three tests of the entry."""
    if entry.id not in _OUTCOMES:
        _OUTCOMES[entry.id] = anyio.run(run_entry, entry)
    return _OUTCOMES[entry.id]


def _params(ids: dict | set, reason: str | None = None):
    out = []
    for e in CORPUS:
        if e.id in ids:
            why = ids[e.id][0] + ": " + ids[e.id][1] if isinstance(ids, dict) else reason
            out.append(pytest.param(e, id=e.id, marks=pytest.mark.xfail(strict=False, reason=why)))
        else:
            out.append(pytest.param(e, id=e.id))
    return out


@pytest.mark.parametrize("entry", _params(FAILING))
def test_the_reply_reads_to_what_a_careful_human_reads(entry):
    outcome = _outcome(entry)
    assert outcome["class"] == "right", (entry.truth, outcome)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.id) for e in CORPUS if e.suite not in ("score", "flag")])
def test_a_lie_never_passes_one_honest_reader(entry):
    outcome = _outcome(entry)
    assert not outcome["lie_one"], outcome


@pytest.mark.parametrize("entry", [p for p in _params(SAME_LIE, "same lie by both readers passes the refusers")
                                   if p.values[0].suite not in ("score", "flag")])
def test_the_same_lie_by_both_readers_is_refused(entry):
    outcome = _outcome(entry)
    assert not outcome["lie_both"], outcome


@pytest.fixture(scope="module")
def blocks():
    return judge_blocks()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=BLOCK_DIFFERS[n]))
                                  if n in BLOCK_DIFFERS else n for n in PLAN_FORMATS])
def test_the_judges_data_block_is_identical_for_one_plan_in_every_format(blocks, name):
    assert blocks[name] == blocks["answer-lines"]
