"""Metrics of the reader audit: how well does a reader model read replies, and how often would a wrong
reading of it pass the verification and reach a score?

Every sample is one reply of the bundled corpus with its known reading (`truth`). The reader role reads it
(the same prompt, schema and conflict flag a suite sends), and the reading is checked two ways:

- against the truth: `accuracy` is the share of replies the reader read right (a reply that states no
  single answer is read right when the reader declines it; a conflicting reply whose last answer is marked
  as a revision, when the reader records that revision); `wrong_reading_rate` the share it read wrong;
  `decline_rate` the share it declined;
- through the verification every suite applies (`clinical_cf.replies.verify_quote` and the suites'
  `verify_*`): `lie_acceptance_rate` is the share of replies whose wrong reading the verification accepted,
  i.e. that would have been scored wrong (0 for a reader fit for use, whatever its accuracy), and
  `refused_correct_rate` the share of right readings the verification refused (counted as unreadable).

A reader to choose: high `accuracy`, `lie_acceptance_rate` 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, accuracy, metric, scorer, stderr
from inspect_ai.solver import TaskState

from clinical_cf.solvers.reader_audit import ReaderAuditRead

NOT_STATED = ("none", "conflicting", "unreadable", "invalid")


def stated(truth: Any, final: Any = None) -> Any:
    """The value a faithful reader records: the truth, or for a conflicting reply the revision it marks (`final`)."""
    if isinstance(truth, str) and truth in NOT_STATED:
        return final if truth == "conflicting" else None
    return truth


def same(suite: str, got: Any, value: Any) -> bool:
    """Whether a reading `got` states `value`. CSS: each expected name is a case-insensitive substring of
    exactly one read item of its list, none left over; sensitivity: within 0.01 per candidate."""
    if got is None or value is None:
        return got is None and value is None
    if suite in ("css", "agent"):
        if not isinstance(got, dict):
            return False

        def matches(names: list[str], read: list[str]) -> bool:
            if len(names) != len(read):
                return False
            used: set[int] = set()
            for name in names:
                hits = [i for i, text in enumerate(read) if name.lower() in str(text).lower() and i not in used]
                if not hits:
                    return False
                used.add(hits[0])
            return True

        return matches(value.get("recommended") or [], got.get("recommended") or []) and matches(
            value.get("not_recommended") or [], got.get("not_recommended") or [])
    if suite == "medpic":
        return sorted(got) == sorted(value)
    if suite == "sensitivity":
        return isinstance(got, list) and len(got) == len(value) and all(abs(a - b) < 0.011 for a, b in zip(got, value, strict=True))
    if suite == "workflow":
        return got == {"action": value["action"], "confidence": value.get("confidence")}
    if suite == "judge" and isinstance(value, dict) and isinstance(got, dict):  # a process verdict
        return got == {"score": float(value["score"]), "critical_error": value["critical_error"]}
    return got == value


def _meta(score: SampleScore) -> dict:
    return score.score.metadata or {}


def _share(scores: list[SampleScore], key: str) -> float:
    return sum(bool(_meta(s).get(key)) for s in scores) / len(scores) if scores else 0.0


@metric
def lie_acceptance_rate() -> Metric:
    """Share of replies whose wrong reading passed the verification (it would have been scored)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _share(scores, "lie_accepted")

    return compute


@metric
def wrong_reading_rate() -> Metric:
    """Share of replies the reader read into a value they do not state (before verification)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _share(scores, "wrong")

    return compute


@metric
def decline_rate() -> Metric:
    """Share of replies the reader declined (said it could not read one answer)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _share(scores, "declined")

    return compute


@metric
def refused_correct_rate() -> Metric:
    """Share of replies whose right reading the verification refused (scored as unreadable: a loss, not an error)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _share(scores, "refused_correct")

    return compute


@metric
def accuracy_by_suite() -> Metric:
    """The reader's accuracy per suite of the corpus."""

    def compute(scores: list[SampleScore]) -> Value:
        groups: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            groups[str(_meta(s).get("suite"))].append(s.score.as_float())
        return {f"accuracy_{suite}": sum(v) / len(v) for suite, v in sorted(groups.items())}

    return compute


@metric
def agreement_rate() -> Metric:
    """Share of replies (read by both readers) whose two verified readings agree: what a suite scores (issue 37)."""

    def compute(scores: list[SampleScore]) -> Value:
        pair = [s for s in scores if _meta(s).get("second_reader")]
        return sum(bool(_meta(s).get("agreed")) for s in pair) / len(pair) if pair else math.nan

    return compute


@metric
def pair_lie_rate() -> Metric:
    """Share of replies (read by both readers) where the two readers agreed on a wrong reading that passed the
    structural checks: it would have been scored. The lie rate of this reader pair; 0 for a pair fit for use."""

    def compute(scores: list[SampleScore]) -> Value:
        pair = [s for s in scores if _meta(s).get("second_reader")]
        return sum(bool(_meta(s).get("pair_lie")) for s in pair) / len(pair) if pair else math.nan

    return compute


@scorer(metrics=[accuracy(), stderr(), lie_acceptance_rate(), wrong_reading_rate(), decline_rate(), refused_correct_rate(), accuracy_by_suite(),
                 agreement_rate(), pair_lie_rate()])
def reader_accuracy() -> Scorer:
    """1 when the reader read the reply as its truth says (declined where it states no single answer), else 0."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        read = state.store_as(ReaderAuditRead)
        value = stated(meta["truth"], meta.get("final"))
        suite = meta["suite"]
        if read.error:
            return Score.unscored(reason="grader_failed", explanation=f"reader call failed: {read.error}",
                                  metadata={"suite": suite, "reader_error": read.error})
        correct = same(suite, read.raw, value) if not read.declined else value is None
        wrong = not read.declined and not correct
        accepted = read.verified is not None
        lie = accepted and not same(suite, read.verified, value)
        # Agreement (issue 37): both readers' verified readings state the same value; a lie of the pair is an
        # agreed reading that is wrong (the only reading a suite would score from step d).
        agreed = bool(read.second_model) and accepted and read.second_verified is not None and same(suite, read.verified, read.second_verified)
        pair_lie = agreed and not same(suite, read.verified, value)
        return Score(
            value=1.0 if correct else 0.0,
            answer="declined" if read.declined else str(read.raw)[:300],
            explanation=(f"truth {meta['truth']!r}; reader {'declined' if read.declined else repr(read.raw)[:300]}; "
                         f"verification: {read.verdict}"),
            metadata={"suite": suite, "cls": meta.get("cls"), "format": meta.get("format"), "declined": read.declined,
                      "wrong": wrong, "accepted": accepted, "lie_accepted": lie, "refused_correct": correct and not read.declined
                      and value is not None and not accepted, "verdict": read.verdict, "reader": read.reader_reply[:2000],
                      "reader_model": read.reader_model or None, "second_reader": read.second_model,
                      "reader_pair": f"{read.reader_model} + {read.second_model}" if read.second_model else None,
                      "second_verdict": read.second_verdict or None, "second_declined": read.second_declined,
                      "agreed": agreed, "pair_lie": pair_lie},
        )

    return score
