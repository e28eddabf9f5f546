"""Elicit a probability distribution over candidate diagnoses, before and after a perturbation.

Each arm asks for a verbalised distribution as JSON (with a response schema where the provider
takes one) and, when `logprobs` is on, a second distribution from the logprobs of the first answer
token over the option letters. Providers without logprobs leave that second distribution empty
and the reason is recorded. The unperturbed arm is shared across a vignette's perturbations
through Inspect's generate cache (one generation per vignette and epoch).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ModelOutput, ResponseSchema, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, StoreModel
from inspect_ai.util import json_schema as pydantic_schema
from pydantic import BaseModel, ConfigDict, Field

from clinical_cf.replies import (
    Provenance,
    ReaderTask,
    SuiteReading,
    agreed_reading,
    conflict_reason,
    elision,
    final_answer,
    invalid_reason,
    is_conflict,
    json_objects,
    not_whole,
    number_grounded,
    number_problem,
    output_facts,
    quoted_items,
    reply_cut,
    resolve_reader,
    revision_in,
    struck_conflict,
    trailing_lines,
    verify_quote,
)
from clinical_cf.solvers.css import baseline_cache_policy, baseline_lock, cache_scope

LETTERS = "ABCDEF"

DISTRIBUTION_PROMPT = """{vignette}

Candidate diagnoses:
{options}

Give the probability that each candidate is the correct diagnosis, as a JSON object that maps each letter to a probability between 0 and 1; the probabilities sum to 1. Reply with the JSON object only."""

LETTER_PROMPT = """{vignette}

Candidate diagnoses:
{options}

Which candidate is the most likely diagnosis? Answer with its letter only."""


class SensitivityArms(StoreModel):
    """Both arms of a (vignette, perturbation) sample, in the sample store for the scorer, `inspect score` and analysis.

    Each arm is what `elicit` returns: the raw reply, the verbalised and logprob distributions, how
    the reply was read and why it was invalid, and why no logprob distribution was obtained.
    """

    baseline: dict[str, Any] | None = None
    perturbed: dict[str, Any] | None = None
    baseline_cache_scope: str | None = None
    """Which run's cache the baseline arm came from (`clinical_cf.solvers.css.cache_scope`)."""


def options_text(candidates: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(candidates))


DISTRIBUTION_PROMPT_PLAIN = """{vignette}

Candidate diagnoses:
{options}

Give the probability that each candidate is the correct diagnosis, between 0 and 1, the probabilities summing to 1. End your reply with one line per candidate: its letter, a colon and its probability."""
"""The request for providers without structured output (`json_schema=False`): the closed line grammar of step (c)."""

SUM_TOLERANCE = 0.02
"""A stated distribution must sum to 1 (or 100 when every value is a percentage) within this share; it is then
renormalised exactly. Anything further off is not a distribution and is unreadable, never rescaled."""


def _number(value: object) -> tuple[float, bool] | None:
    """(number, written as a percentage) for 0.6, "0.6", "60%"; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return (float(value), False) if math.isfinite(value) else None
    match = re.fullmatch(r"[ \t]{0,4}(\d{1,3}(?:\.\d{1,6})?|\.\d{1,6})[ \t]{0,2}(%?)[ \t]{0,4}", str(value))
    if not match:
        return None
    return float(match.group(1)), bool(match.group(2))


def _distribution(pairs: list[tuple[int, tuple[float, bool]]], n: int) -> tuple[list[float] | None, str]:
    """The distribution the pairs state, or (None, why): one value per candidate (missing ones 0),
    on one scale (shares summing to 1, or percentages summing to 100), within `SUM_TOLERANCE`."""
    seen: dict[int, tuple[float, bool]] = {}
    for index, value in pairs:
        if index in seen and seen[index] != value:
            return None, "a candidate is given two different values"
        seen[index] = value
    if not seen:
        return None, "no candidate's probability is stated"
    values = [v for v, _ in seen.values()]
    percent = any(p for _, p in seen.values()) or (max(values) > 1 and abs(sum(values) - 100) <= 100 * SUM_TOLERANCE)
    scale = 100.0 if percent else 1.0
    if any(v < 0 or v > scale for v in values):
        return None, "a probability is outside its scale"
    total = sum(values) / scale
    if abs(total - 1) > SUM_TOLERANCE:
        return None, f"the probabilities sum to {total:g}, not 1"
    probs = [0.0] * n
    for index, (value, _) in seen.items():
        probs[index] = value / scale / total
    return probs, ""


def parse_distribution(text: str, candidates: list[str]) -> list[float] | None:
    """The distribution in a reply, by letter or by candidate name; None if unreadable (see `read_distribution`)."""
    return read_distribution(text, candidates)[0]


_LINE = re.compile(
    r"^[-*•>|]?[ \t]{0,3}\(?(?P<key>[A-F])\)?[.):]?[ \t]{0,3}(?P<name>[^:=|0-9%]{0,120}?)[ \t]{0,3}[:=|\-–—][ \t]{0,3}(?P<num>\d{1,3}(?:\.\d{1,6})?|\.\d{1,6})[ \t]{0,2}(?P<pct>%?)[ \t]{0,3}\|?$"
)
_TABLE_NOISE = re.compile(r"^[|:\- \t]*$|^\|[^0-9]*\|$")


@dataclass(frozen=True)
class DistributionReading(SuiteReading):
    """The probability per candidate a reply states (`value`, None when unread) and how it was read."""

    @property
    def probs(self) -> list[float] | None:
        return self.value  # type: ignore[no-any-return]


def _index_of(key: object, candidates: list[str]) -> int | None:
    raw = str(key).strip()
    if len(raw.strip("().")) == 1 and raw.strip("().").upper() in LETTERS[: len(candidates)]:
        return LETTERS.index(raw.strip("().").upper())
    names = {" ".join(c.lower().split()): i for i, c in enumerate(candidates)}
    return names.get(" ".join(raw.lower().split()))


def read_distribution_reading(text: str, candidates: list[str], stop_reason: str | None = None, max_tokens: int | None = None) -> DistributionReading:
    """Read a distribution by contract, steps (a)-(c) of `clinical_cf.replies`.

    (a)/(b) a JSON object whose keys are all candidate letters or exact candidate names (one
    wrapping object unwrapped), values numbers or percentages; objects that disagree are left to the reader. A key that names no candidate makes it unreadable (the reply's
    names are not matched to the candidates by guess). (c) closing lines or table rows of one
    letter (optionally the candidate's exact name) and one probability. The values must sum to 1
    (or 100) within `SUM_TOLERANCE`. Prose goes to the reader role (step d).
    """
    cut = reply_cut(text)
    cut_off = not_whole(text, stop_reason)
    if cut_off:  # cut or filtered by the provider, or JSON cut before it closed: never read, never repaired
        return DistributionReading(None, "unreadable", reply_cut=cut).cut_short(cut_off, max_tokens)  # type: ignore[return-value]
    final = final_answer(text)
    if not final or not re.search(r"\w", final):
        return DistributionReading(None, "invalid", "empty", reply_cut=cut)

    def flat(data: dict) -> dict:
        if len(data) == 1 and isinstance(next(iter(data.values())), dict):
            return next(iter(data.values()))
        return data

    bad_number = number_problem(final)
    if bad_number:
        return DistributionReading(None, "unreadable", reason=f"unreadable number: {bad_number}", reply_cut=cut, bounds=True)
    elided = elision(final)
    if elided:  # JSON with items left out ([X, ...]): what it elides is in the reply for no one to read
        return DistributionReading(None, "unreadable", reason=elided, reply_cut=cut, bounds=True)
    withdrawn = struck_conflict(final)
    if withdrawn:  # part of the answer struck through: a conflict, never read with or without it
        return DistributionReading(None, "unreadable", reason=withdrawn, reply_cut=cut, conflict=(withdrawn,))
    objects = [f for f in json_objects(final) if any(_index_of(k, candidates) is not None for k in flat(f.value))]
    # Every candidate answer: each distribution object and each block of probability lines, wherever it stands.
    stated: list[tuple[int, str, str]] = []
    for f in objects:
        pairs_or_none = [(_index_of(k, candidates), _number(v)) for k, v in flat(f.value).items()]
        probs = None
        if all(i is not None and n is not None for i, n in pairs_or_none):
            probs = _distribution(pairs_or_none, len(candidates))[0]  # type: ignore[arg-type]
        stated.append((f.end, json.dumps(f.value)[:160], json.dumps([round(p, 4) for p in probs]) if probs else "?"))
    for end, lines in _line_blocks(final, candidates):
        pairs = [(LETTERS.index(m.group("key")), (float(m.group("num")), bool(m.group("pct"))))
                 for m in (_LINE.match(line) for line in lines) if m and LETTERS.index(m.group("key")) < len(candidates)]
        probs = _distribution(pairs, len(candidates))[0] if pairs else None
        stated.append((end, "; ".join(lines)[:160], json.dumps([round(p, 4) for p in probs]) if probs else "?"))
    if len({key for _, _, key in stated if key != "?"}) > 1:
        shown = tuple(text for _, text, _ in stated)
        return DistributionReading(None, "unreadable", reason=conflict_reason(shown), reply_cut=cut, conflict=shown[:4])
    if stated:
        revision = revision_in(final[max(end for end, _, _ in stated):])
        if revision:
            shown = (stated[-1][1], revision)
            return DistributionReading(None, "unreadable", reason=conflict_reason(shown), reply_cut=cut, conflict=shown)
    if objects:
        chosen = objects[-1]
        if len({json.dumps(f.value, sort_keys=True) for f in objects}) > 1:
            return DistributionReading(None, "unreadable", reason="distribution objects disagree", reply_cut=cut)
        pairs = []
        for key, value in flat(chosen.value).items():
            index, number = _index_of(key, candidates), _number(value)
            if index is None:
                return DistributionReading(None, "unreadable", reason=f"key {str(key)[:40]!r} names no candidate", reply_cut=cut)
            if number is None:
                return DistributionReading(None, "unreadable", reason=f"value for {str(key)[:40]!r} is not a probability", reply_cut=cut)
            pairs.append((index, number))
        probs, why = _distribution(pairs, len(candidates))
        return DistributionReading(probs, chosen.provenance if probs else "unreadable", reason=why, reply_cut=cut)

    def answer_line(line: str) -> bool:
        match = _LINE.match(line)
        if not match:
            return bool(_TABLE_NOISE.match(line))
        name = match.group("name").strip(" )(.-|")
        return not name or _index_of(name, candidates) == LETTERS.index(match.group("key"))

    block = trailing_lines(final, answer_line)
    if block is not None:
        pairs = []
        for line in block:
            match = _LINE.match(line)
            if match and LETTERS.index(match.group("key")) < len(candidates):
                pairs.append((LETTERS.index(match.group("key")), (float(match.group("num")), bool(match.group("pct")))))
        if pairs:
            probs, why = _distribution(pairs, len(candidates))
            return DistributionReading(probs, "field" if probs else "unreadable", reason=why, reply_cut=cut)
    invalid = invalid_reason(final)
    if invalid is not None:
        return DistributionReading(None, "invalid", invalid, reply_cut=cut)
    return DistributionReading(None, "unreadable", reason="no distribution JSON and no closing probability lines", reply_cut=cut)


def _line_blocks(final: str, candidates: list[str]) -> list[tuple[int, list[str]]]:
    """Blocks of consecutive probability lines (`A: 0.6`, table rows) anywhere in the final answer: (end offset, lines)."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    offset = end = 0
    for raw in final.splitlines(keepends=True):
        offset += len(raw)
        line = re.sub(r"\*\*|__|`+|~~", "", raw[:2000]).strip()
        if not line or _TABLE_NOISE.match(line):
            continue
        match = _LINE.match(line)
        if match and LETTERS.index(match.group("key")) < len(candidates):
            current.append(line)
            end = offset
        elif current:
            blocks.append((end, current))
            current = []
    if current:
        blocks.append((end, current))
    return blocks


def read_distribution(text: str, candidates: list[str]) -> tuple[list[float] | None, Provenance, str | None]:
    """(distribution or None, provenance, invalid reason) for one arm's reply (steps a-c)."""
    reading = read_distribution_reading(text, candidates)
    return reading.probs, reading.provenance, reading.invalid


class _QuotedProbability(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false

    candidate: str = Field(description="The candidate's letter.")
    probability: float = Field(description="The probability the reply states for it, from 0 to 1.")
    quote: str = Field(description="The exact words of the reply that state this probability for this candidate.")


class _ReaderReply(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false

    probabilities: list[_QuotedProbability] = Field(default_factory=list)
    unreadable: bool = False
    reason: str = ""


SENSITIVITY_READER = ReaderTask(
    name="sensitivity distribution",
    instructions=(
        "The reply gives probabilities for candidate diagnoses, listed by letter. Record under \"probabilities\" each "
        "candidate the reply gives a number for: its \"candidate\" letter, the \"probability\" as a number from 0 to 1 "
        "(a percentage divided by 100), and the \"quote\". Words such as likely or unlikely are not numbers: if the "
        "reply states no numbers, it is unreadable."
    ),
    schema=ResponseSchema(name="distribution_reading", json_schema=pydantic_schema(_ReaderReply)),
)


def _mentions(quote: str, candidates: list[str]) -> list[tuple[int, int, int]]:
    """(start, end, candidate index) of every mention of a candidate in a quote: its letter as a token, or its name."""
    out = []
    for index, name in enumerate(candidates):
        for match in re.finditer(rf"(?<![A-Za-z]){LETTERS[index]}(?![A-Za-z])", quote):
            out.append((match.start(), match.end(), index))
        folded, target = quote.casefold(), name.casefold()
        position = folded.find(target)
        while target and position >= 0:
            out.append((position, position + len(target), index))
            position = folded.find(target, position + 1)
    return sorted(out)


def verify_distribution_reading(data: dict[str, Any], final: str, candidates: list[str],
                                conflict: bool = False) -> tuple[list[float] | None, str]:
    """The reader's distribution checked against the reply: each quote is a whole-token span of the final answer
    (so "0.8" cannot come from "0.85"), not hedged and not followed by a revision (`verify_quote`), names the
    candidate (letter or exact name) and states the number after it, before another candidate is named; then
    the sum rule of `_distribution`."""
    entries = quoted_items(data, "probabilities")
    if entries is None:
        return None, "reader reply does not have the probabilities list"
    pairs: list[tuple[int, tuple[float, bool]]] = []
    for entry in entries:
        index = _index_of(entry.get("candidate", ""), candidates)
        value, quote = entry.get("probability"), entry.get("quote")
        if index is None:
            return None, f"reader candidate {str(entry.get('candidate'))[:20]!r} is not a candidate"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= float(value) <= 1:
            return None, "reader probability is not a number from 0 to 1"
        why = verify_quote(quote, final, None, "neutral", revision=conflict)
        if why:
            return None, f"quote for {LETTERS[index]}: {why}"
        mentions = _mentions(str(quote), candidates)
        own = [m for m in mentions if m[2] == index]
        if not own:
            return None, f"quote for {LETTERS[index]} names neither its letter nor the candidate"
        # The number must follow this candidate's mention, before the next candidate is named: a
        # quote holding the whole distribution cannot ground a number given to another candidate.
        stated = False
        for _start, end, _ in own:
            following = [m[0] for m in mentions if m[0] >= end and m[2] != index]
            stop = min(following) if following else min(len(str(quote)), end + 80)
            stated = stated or number_grounded(float(value), str(quote)[end:stop])
        if not stated:
            return None, f"quote for {LETTERS[index]} does not state {value} for it"
        pairs.append((index, (float(value), False)))
    return _distribution(pairs, len(candidates)) if pairs else (None, "reader found no probability")


async def read_distribution_with_reader(text: str, candidates: list[str], reader: Any | None, stop_reason: str | None = None,
                                        max_tokens: int | None = None) -> DistributionReading:
    """`read_distribution_reading`, then step (d) when it found no distribution: the reader's verified reading
    (told when the reply's answers conflict, and then held to the revision the reply marks)."""
    reading = read_distribution_reading(text, candidates, stop_reason, max_tokens)
    if not reading.needs_reader or reader is None:
        return reading
    final = final_answer(text)
    conflict = is_conflict(reading.reason)
    prefix = reading.reason + "; " if conflict else ""
    agreed = await agreed_reading(
        reader, SENSITIVITY_READER, final, f"Candidates: {options_text(candidates)}\n\n{final}", conflict=reading.reason if conflict else None,
        verify=lambda data: verify_distribution_reading(data, final, candidates, conflict),
        same=lambda a, b: len(a) == len(b) and all(abs(x - y) <= 0.01 for x, y in zip(a, b, strict=True)))
    if agreed.value is None:
        return replace(reading, reason=prefix + agreed.reason, reader=agreed.record)
    return DistributionReading(agreed.value, "agreement", reply_cut=reading.reply_cut, reader=agreed.record)


def letter_distribution(output: ModelOutput, n: int) -> list[float] | None:
    """Distribution over the first n option letters from the first generated token's top logprobs."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None or not choice.logprobs.content:
        return None
    first = choice.logprobs.content[0]
    probs = [0.0] * n
    for alternative in [*(first.top_logprobs or []), first]:
        token = alternative.token.strip().strip("().:").upper()
        if len(token) == 1 and token in LETTERS[:n]:
            probs[LETTERS.index(token)] = max(probs[LETTERS.index(token)], math.exp(alternative.logprob))
    total = sum(probs)
    return [p / total for p in probs] if total > 0 else None


async def elicit(model: Model, vignette: str, candidates: list[str], cache: bool | CachePolicy, json_schema: bool, logprobs: bool,
                 reader: Model | None = None) -> dict:
    letters = list(LETTERS[: len(candidates)])
    schema = ResponseSchema(
        name="distribution",
        json_schema=JSONSchema(type="object", properties={letter: JSONSchema(type="number") for letter in letters}, required=letters),
    )
    options = options_text(candidates)
    reply = await model.generate(
        (DISTRIBUTION_PROMPT if json_schema else DISTRIBUTION_PROMPT_PLAIN).format(vignette=vignette, options=options),
        config=GenerateConfig(response_schema=schema if json_schema else None),
        cache=cache,
    )
    stop, cap = output_facts(reply)
    reading = await read_distribution_with_reader(reply.completion, candidates, reader, stop_reason=stop, max_tokens=cap)
    arm: dict = {"raw": reply.completion, "verbalised": reading.probs, **reading.metadata(), "invalid": reading.invalid,
                 "logprob": None, "logprob_note": None}
    if logprobs:
        try:
            letter = await model.generate(
                LETTER_PROMPT.format(vignette=vignette, options=options),
                config=GenerateConfig(logprobs=True, top_logprobs=min(20, 2 * len(candidates) + 4), max_tokens=1),
                cache=cache,
            )
            arm["logprob"] = letter_distribution(letter, len(candidates))
            if arm["logprob"] is None:
                arm["logprob_note"] = "the provider returned no logprobs over the option letters"
        except Exception as ex:  # a provider without logprobs support: record it, keep the verbalised arm
            arm["logprob_note"] = f"{type(ex).__name__}: {ex}"
    return arm


@solver
def candidate_distributions(
    baseline_cache: bool | CachePolicy = True, json_schema: bool = True, logprobs: bool = True, reader: str | None = "reader"
) -> Solver:
    """Distributions over the candidates for the original and the perturbed vignette.

    The baseline arm is cached per run (`baseline_cache_policy`); `reader` is the model role of
    the reader (step d of `clinical_cf.replies`), "none" turns it off.
    """
    policy = baseline_cache_policy(baseline_cache)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        meta = state.metadata
        candidates: list[str] = meta["candidates"]
        digest = hashlib.sha256(meta["baseline_text"].encode()).hexdigest()
        reader_model = resolve_reader(reader, json_schema=json_schema)
        async with baseline_lock((str(model), digest, state.epoch)):
            baseline = await elicit(model, meta["baseline_text"], candidates, policy, json_schema, logprobs, reader_model)
        perturbed = await elicit(model, state.input_text, candidates, False, json_schema, logprobs, reader_model)
        arms = state.store_as(SensitivityArms)
        arms.baseline, arms.perturbed = baseline, perturbed
        arms.baseline_cache_scope = cache_scope(policy)
        state.output.completion = perturbed["raw"]
        return state

    return solve
