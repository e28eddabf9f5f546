"""Issue 44: the same answer reads the same in any format, a changed answer never reads to the old value, and the
judge sees one block per plan. Replies come from the seeded generator in `tests/reply_formats.py`."""

from __future__ import annotations

import random

import pytest
import reply_formats as rf
from hypothesis import given
from hypothesis import strategies as st

from clinical_cf.replies import canonical_text, decode_serialised, final_answer, plain_text, read_score

SEEDS = st.integers(min_value=0, max_value=100_000)
SUITES = st.sampled_from(rf.SUITES)


def _plan(suite: str, seed: int) -> tuple[dict, dict]:
    d = rf.decision(suite, random.Random(f"{suite}-{seed}"))
    return d, rf.entry_context(suite, d)


def _entry(suite: str, seed: int, fmt: str, reply: str) -> dict:
    d, ctx = _plan(suite, seed)
    return {"id": f"{suite}-{seed}-{fmt}", "plan": f"{suite}-{seed}", "suite": suite, "format": fmt, "reply": reply,
            "truth": rf.truth_of(suite, d), **ctx}


@given(seed=SEEDS, suite=SUITES, data=st.data())
def test_one_decision_reads_the_same_in_every_format(seed, suite, data):
    """A decision in any format, through any chain of meaning-keeping transformations (serialisation, content blocks,
    full-width, zero-width, entities, CRLF, preambles), reads to that decision or is unreadable with a reason: never
    another value; and a lying reader never gets its lie past an honest second reader."""
    d, _ = _plan(suite, seed)
    formats = rf.FORMATTERS[suite](d)
    fmt = data.draw(st.sampled_from(sorted(formats)), label="format")
    chain = data.draw(st.lists(st.sampled_from(sorted(rf.TRANSFORMS)), max_size=3, unique=True), label="transformations")
    entry = _entry(suite, seed, f"{fmt}+{'+'.join(chain)}", rf.compose(formats[fmt], chain))
    counts = rf.Counts()
    rf.read_format(entry, counts)
    assert counts.silent == 0 and counts.crash == 0, dict(counts.examples)
    if counts.unreadable or counts.refused:
        assert any(text.split(": ", 1)[1].strip() for texts in counts.examples.values() for text in texts)  # a reason, counted
    assert counts.lie == 0, counts.examples["lie"]


@given(seed=SEEDS, suite=SUITES, data=st.data())
def test_a_changed_answer_never_reads_to_the_old_value(seed, suite, data):
    """A negation added (English, Japanese, French, German), an item struck, or a value changed after the answer (a JSON
    Patch, a second object, "on reflection", a revised score or confidence in prose, `...` elisions): the reply never
    reads to the value it took away, neither by contract nor from two readers that both read the old value."""
    d, ctx = _plan(suite, seed)
    mutants = rf.MUTATORS[suite](d)
    name = data.draw(st.sampled_from(sorted(mutants)), label="mutation")
    reply, forbidden = mutants[name]
    counts = rf.Counts()
    rf.read_mutant({"id": f"{suite}-{seed}-{name}", "suite": suite, "format": name, "reply": reply, "truth": "conflicting",
                    "forbidden": forbidden, **ctx}, counts)
    assert counts.silent == 0 and counts.both == 0 and counts.crash == 0, dict(counts.examples)


@pytest.mark.parametrize("named", rf.NAMED, ids=[n["id"] for n in rf.NAMED])
def test_the_named_cases_of_issue_44_never_read_to_the_unstated_value(named):
    counts = rf.Counts()
    rf.read_mutant({**named, "format": named["id"], "truth": "conflicting"}, counts)
    assert counts.silent == 0 and counts.both == 0 and counts.crash == 0, dict(counts.examples)


@given(seed=SEEDS)
def test_the_judge_sees_one_block_for_every_format_of_a_plan(seed):
    """The CSS judge's data block is byte-identical across every readable format of one plan."""
    d, _ = _plan("css", seed)
    blocks = {}
    for fmt, reply in rf.css_formats(d).items():
        body = rf.judge_body(_entry("css", seed, fmt, reply))
        if body is not None:
            blocks[fmt] = body
    assert len(blocks) == len(rf.css_formats(d))  # every format is read (none refused)
    assert len(set(blocks.values())) == 1, {f: b.splitlines()[1:3] for f, b in blocks.items()}


@given(text=st.text(max_size=200), chain=st.lists(st.sampled_from(sorted(rf.TRANSFORMS)), max_size=3))
def test_canonical_text_is_idempotent_and_final_answer_sees_through_serialisation(text, chain):
    once = canonical_text(text)
    assert canonical_text(once) == once
    serialised = rf.compose("ANSWER: B, D\nreason: " + text.replace("\n", " "), [c for c in chain if c not in ("preamble", "think_block")])
    assert final_answer(serialised).startswith("ANSWER: B, D")


@pytest.mark.parametrize("item", [
    "**Carboplatin + pemetrexed**", "Carboplatin &#43; pemetrexed", "Carboplatin&nbsp;+ pemetrexed", "$\\text{Carboplatin + pemetrexed}$",
    "✅ Carboplatin + pemetrexed", "Carboplatin + pemetrexed [1]", "Carboplatin + pemetrexed【4:0†source】", "<b>Carboplatin + pemetrexed</b>",
    "`Carboplatin + pemetrexed`", "Ｃａｒｂｏｐｌａｔｉｎ + pemetrexed", "Carbo\u200bplatin + pemetrexed",
])
def test_an_item_in_any_markup_is_one_plain_text(item):
    assert plain_text(item) == "Carboplatin + pemetrexed"


def test_the_readers_are_shown_the_canonical_reply_not_the_serialised_one():
    """Both readers get the reply in its canonical shape (decoded, entities folded), never the first reader's reading."""
    d, _ = _plan("css", 3)
    reply = rf.compose(rf.css_formats(d)["french"], ["colon_entities", "python_repr"])
    entry = _entry("css", 3, "french+colon_entities+python_repr", reply)
    first, second = rf._pair(entry, "faithful")
    rf.bench.read_entry(entry, (first, second))
    assert first.calls and first.calls == second.calls
    shown = first.calls[0]
    assert "\\n" not in shown and "&#58;" not in shown and "Recommandé :\n" in shown
    assert shown == decode_serialised(shown)


@pytest.mark.parametrize("value, read", [
    ('{"score": 1, "max_score": 2, "rationale": "one of two changes"}', 0.5),
    ('{"score": 2, "max_score": 2, "rationale": "both changes"}', 1.0),
    ('{"score": 1, "max_score": 0}', None),
])
def test_a_judge_score_is_read_on_the_scale_its_object_states(value, read):
    assert read_score(value, (0.0, 0.5, 1.0)).value == read


def test_generated_corpus_counts():
    """Seeds 0-1 of the generated corpus (formats and mutations, lies tried): nothing read into an unstated value, no
    lie accepted from one honest reader or from two, under 5 % of stated values lost, one judge block per plan."""
    result = rf.evaluate(range(2))
    formats, mutants = result["formats"].values(), result["mutants"].values()
    n_formats = sum(c.right + c.unreadable + c.refused + c.silent for c in formats)
    assert sum(c.silent + c.crash + c.lie + c.both for c in formats) == 0
    assert sum(c.silent + c.crash + c.both for c in mutants) == 0
    assert sum(c.unreadable + c.refused for c in formats) < 0.05 * n_formats
    same, plans, _ = result["judge_identity"]
    assert same == plans == 2
