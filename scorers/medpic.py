"""MedPIC scoring (seed 002, §4.1 and §4.4): exact set match, the paper's metrics, and the rationale judge.

A reply is correct only when the parsed option set equals the gold set exactly. Replies that cannot
be parsed are incorrect and counted (`unparseable`).

Metrics (all from `summarise`, which the log analysis reuses):
- accuracy, gf_accuracy, cf_accuracy: share correct overall, on GF and on CF questions, an
  unreadable reply counted as wrong (the paper's figure);
- accuracy_read: share correct among the replies an option set was read from (unreadable left out);
- gf_cf_gap: gf_accuracy - cf_accuracy (percentage points / 100);
- activation_accuracy, deactivation_accuracy: CF accuracy by reasoning operation;
- pair_accuracy: share of linked pairs (both members present) with both members correct;
- unparseable: number of replies no option set could be read from (and `unparseable_rate`).
With several epochs Inspect reduces each sample to its mean first for every metric but `pair_accuracy`
and `unparseable`, which read every epoch: a pair is its two members answered in the same epoch.

The rationale analysis asks the judge role, with the pre-registered `RATIONALE_PROMPT`, whether a
wrong deactivation reply mentions the patient information that was changed; whether the wrong
selection equals the partner's (pre-change) gold answer is computed without the judge.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.model import GenerateConfig, ResponseSchema
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    accuracy,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from clinical_cf.judging import ask_judge, resolve_judge
from clinical_cf.replies import (
    DATA_NOTICE,
    boundary,
    data_block,
    final_answer,
    normalise_for_judge,
    output_facts,
    read_by,
    read_flag,
    resolve_reader,
)
from clinical_cf.scorers.metrics import parse_quality, shown_as
from clinical_cf.solvers.medpic import format_answer, parse_answer, read_answer_with_reader

__all__ = ["RATIONALE_PROMPT", "medpic_exact_set", "parse_answer", "parse_mention", "rationale_mentions_change", "summarise"]

_to_float = value_to_float()


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The paper's aggregate metrics from rows with kind, operation, pair_id, correct (0-1) and parsed (bool).

    Rows may carry `epoch`; pairs are then formed within an epoch. NaN where a metric has no rows.
    """
    rows = list(rows)

    def mean(values: list[float]) -> float:
        return float(sum(values) / len(values)) if values else math.nan

    correct = [float(r["correct"]) for r in rows]
    gf = [float(r["correct"]) for r in rows if r.get("kind") == "gf"]
    cf = [float(r["correct"]) for r in rows if r.get("kind") == "cf"]
    act = [float(r["correct"]) for r in rows if r.get("operation") == "activation"]
    deact = [float(r["correct"]) for r in rows if r.get("operation") == "deactivation"]
    members: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        if isinstance(r.get("pair_id"), str) and r["pair_id"]:  # None or NaN (from a DataFrame): unpaired
            members[(r["pair_id"], r.get("epoch", 1))].append(float(r["correct"]))
    pairs = [math.prod(v) for v in members.values() if len(v) >= 2]
    unparsed = sum(1 for r in rows if not r.get("parsed", True))
    read = [float(r["correct"]) for r in rows if r.get("parsed", True)]
    gf_acc, cf_acc = mean(gf), mean(cf)
    return {
        "accuracy": mean(correct),
        "accuracy_read": mean(read),
        "gf_accuracy": gf_acc,
        "cf_accuracy": cf_acc,
        "gf_cf_gap": gf_acc - cf_acc,
        "activation_accuracy": mean(act),
        "deactivation_accuracy": mean(deact),
        "pair_accuracy": mean(pairs),
        "pairs": float(len(pairs)),
        "unparseable": float(unparsed),
        "unparseable_rate": unparsed / len(rows) if rows else math.nan,
    }


def _rows(scores: list[SampleScore]) -> list[dict[str, Any]]:
    rows = []
    for s in scores:
        meta = {**(s.sample_metadata or {}), **(s.score.metadata or {})}
        rows.append({
            "kind": meta.get("kind"), "operation": meta.get("operation"), "pair_id": meta.get("pair_id"),
            "correct": _to_float(s.score.value), "parsed": meta.get("parsed_ok", True), "epoch": meta.get("epoch", 1),
        })
    return rows


def _summary_metric(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> Value:
        return summarise(_rows(scores))[key]

    return shown_as(key, compute)


@metric
def gf_accuracy() -> Metric:
    """Accuracy on guideline-following questions."""
    return _summary_metric("gf_accuracy")


@metric
def cf_accuracy() -> Metric:
    """Accuracy on counterfactual questions."""
    return _summary_metric("cf_accuracy")


@metric
def gf_cf_gap() -> Metric:
    """GF accuracy minus CF accuracy."""
    return _summary_metric("gf_cf_gap")


@metric
def activation_accuracy() -> Metric:
    """Accuracy on CF questions whose change makes the rule apply."""
    return _summary_metric("activation_accuracy")


@metric
def deactivation_accuracy() -> Metric:
    """Accuracy on CF questions whose change withdraws the rule."""
    return _summary_metric("deactivation_accuracy")


@metric(scores="unreduced")
def pair_accuracy() -> Metric:
    """Share of complete linked pairs with both members correct, a pair being its two members answered in one epoch
    (the seed paper's pair: both questions answered correctly), over every epoch; never the product of the members'
    epoch means, which credits a pair no epoch answered right. The report computes the same."""
    return _summary_metric("pair_accuracy")


@metric
def accuracy_read() -> Metric:
    """Accuracy over the replies an option set was read from; `accuracy` counts unreadable replies as wrong."""
    return _summary_metric("accuracy_read")


@metric(scores="unreduced")
def unparseable() -> Metric:
    """Number of scored replies from which no option set could be read, over every epoch."""
    return _summary_metric("unparseable")


@scorer(metrics=[accuracy(), stderr(cluster="rule_id"), accuracy_read(), gf_accuracy(), cf_accuracy(), gf_cf_gap(), activation_accuracy(),
                 deactivation_accuracy(), pair_accuracy(), unparseable(), parse_quality()])
def medpic_exact_set(reader: str | None = "reader", json_schema: bool = True) -> Scorer:
    """CORRECT when the parsed option set equals the gold set exactly; unreadable replies are INCORRECT and flagged.

    The reply is read by contract (`read_answer`), then by the reader role (`reader`, "none" turns
    it off) when that read nothing. An unreadable reply counts as wrong in `accuracy` (the paper's
    rule) and is left out of `accuracy_read`; `unparseable` counts them. An invalid reply (empty,
    the prompt's template echoed, degenerate repetition) is not an answer: it is unscored with
    reason `invalid_output` (Inspect counts it), never marked wrong or right.
    """

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        gold = frozenset(meta["answer"])
        stop, cap = output_facts(state.output if state.output.choices else None)
        reading = await read_answer_with_reader(state.output.completion, meta["options"], resolve_reader(reader, json_schema=json_schema),
                                                stop_reason=stop, max_tokens=cap)
        parsed = reading.letters
        info = {**reading.metadata(), "read_by": read_by(reading.provenance), "kind": meta["kind"], "operation": meta.get("operation"),
                "pair_id": meta.get("pair_id"), "rule_id": meta["rule_id"],
                # The epoch, so `pair_accuracy` pairs the members answered in the same epoch (the seed paper's pair).
                "epoch": state.epoch}
        if reading.invalid is not None:
            return Score.unscored(reason="invalid_output", explanation=f"invalid output: {reading.invalid}",
                                  metadata={**info, "invalid": reading.invalid, "parsed": None, "parsed_ok": False})
        ok = parsed is not None and parsed == gold
        return Score(
            value=CORRECT if ok else INCORRECT,
            answer=format_answer(parsed) if parsed is not None else None,
            explanation=f"gold {format_answer(gold)}; parsed {format_answer(parsed) if parsed is not None else '(unparseable)'} ({reading.provenance})",
            metadata={**info, "parsed": sorted(parsed) if parsed is not None else None, "parsed_ok": parsed is not None},
        )

    return score


# ---------------------------------------------------------------- rationale analysis (seed 002, §4.4)
RATIONALE_PROMPT = """You are checking a model's written reasoning on a medication-safety question. You judge only whether the reasoning mentions one specific piece of patient information; you do not judge whether the answer is right.

The patient information in question:
{changed}

{notice}

{response}

Does the response in the data block explicitly mention or reason about that patient information (its value, its presence or its absence), in any wording? A generic remark about the drug that never refers to this patient's information does not count.

Reply with one JSON object with two fields: "mentions", true or false, and "evidence", a short quote from the response that shows it (empty when there is none)."""

RATIONALE_RETRY_PROMPT = 'Your reply could not be read. Reply with only a JSON object such as {"mentions": false, "evidence": ""}.'

RESPONSE_CHARS = 4000
"""Cap on the model response shown to the rationale judge (a MedPIC rationale is two to four sentences)."""


def parse_mention(text: str) -> bool | None:
    """The judge's verdict: {"mentions": true/false} (or a bare `mentions: yes/no`); None if unreadable or ambiguous."""
    return read_flag(text, "mentions").value


def rationale_prompt(changed: str, response: str) -> str:
    """The rationale judge's prompt, with the model's response as delimited, normalised, capped data.

    The boundary is derived from the data (`clinical_cf.replies.boundary`), so the same reply gives
    the same prompt: the judge call is cacheable and a rerun reproduces it."""
    body = normalise_for_judge(final_answer(response), RESPONSE_CHARS)
    tag = boundary(changed, body)
    return RATIONALE_PROMPT.format(
        changed=changed, notice=DATA_NOTICE.format(tag=tag),
        response=data_block("RESPONSE", body, tag),
    )


MENTION_SCHEMA = ResponseSchema(
    name="mention_verdict",
    json_schema=JSONSchema(
        type="object",
        properties={"mentions": JSONSchema(type="boolean"), "evidence": JSONSchema(type="string", maxLength=300)},
        required=["mentions", "evidence"],
    ),
)


def applies_to(meta: Mapping[str, Any], parsed: frozenset[str] | None) -> bool:
    """The analysis covers wrong answers to deactivation questions."""
    return meta.get("operation") == "deactivation" and parsed != frozenset(meta["answer"])


@metric
def mention_rate() -> Metric:
    """Among wrong deactivation replies the judge read: share that mention the changed patient information."""

    def compute(scores: list[SampleScore]) -> Value:
        values = [_to_float(s.score.value) for s in scores if not _is_nan(s.score.value)]
        return sum(values) / len(values) if values else math.nan

    return shown_as("mention_rate", compute)


@metric(scores="unreduced")
def retained_selection_rate() -> Metric:
    """Among wrong deactivation replies: share whose selection equals the partner's (pre-change) gold answer."""

    def compute(scores: list[SampleScore]) -> Value:
        flags = [(s.score.metadata or {}).get("retained_selection") for s in scores]
        flags = [f for f in flags if f is not None]
        return sum(flags) / len(flags) if flags else math.nan

    return shown_as("retained_selection_rate", compute)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


@scorer(metrics=[mention_rate(), retained_selection_rate()])
def rationale_mentions_change(
    role: str = "judge", fallback_role: str = "judge_alt", retries: int = 2, reader: str | None = "reader", json_schema: bool = True
) -> Scorer:
    """For wrong deactivation answers: 1 if the judge finds the changed patient information mentioned, else 0.

    Other samples are unscored (not applicable). The judge is the `judge` model role, falling back
    to `judge_alt` when that would be the model under test (see `clinical_cf.judging.resolve_judge`).
    """
    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        stop, cap = output_facts(state.output if state.output.choices else None)
        reading = await read_answer_with_reader(state.output.completion, meta["options"], resolve_reader(reader, json_schema=json_schema),
                                                stop_reason=stop, max_tokens=cap)
        if reading.invalid is not None:
            return Score.unscored(reason="invalid_output", explanation=f"invalid output: {reading.invalid}",
                                  metadata={**reading.metadata(), "invalid": reading.invalid})
        parsed = reading.letters
        if not applies_to(meta, parsed):
            return Score.unscored(reason="not a wrong deactivation answer", metadata=reading.metadata())
        changed = meta.get("changed_fact") or {}
        retained = parsed is not None and parsed == frozenset(meta.get("partner_answer") or [])
        judgement = await ask_judge(
            resolve_judge(role, fallback_role),
            rationale_prompt(changed.get("after", ""), state.output.completion),
            parse_mention,
            retry_prompt=RATIONALE_RETRY_PROMPT,
            retries=retries,
            config=GenerateConfig(response_schema=MENTION_SCHEMA if json_schema else None),
        )
        verdict = judgement.verdict
        info = {**reading.metadata(), "retained_selection": retained, "changed_fact": changed.get("after"), **judgement.metadata(),
                "judge_reply": judgement.replies[-1][:1000]}
        if verdict is None:
            return Score.unscored(reason="grader_failed", metadata=info)
        return Score(value=1.0 if verdict else 0.0, answer=format_answer(parsed) if parsed else None,
                     explanation=f"mentions the changed information ({changed.get('after')}): {verdict}", metadata=info)

    return score
