"""Elicit a probability distribution over candidate diagnoses, before and after a perturbation.

Each arm asks for a verbalised distribution as JSON (with a response schema where the provider
takes one) and, when `logprobs` is on, a second distribution from the logprobs of the first answer
token over the option letters. Providers without logprobs leave that second distribution empty
and the reason is recorded. The unperturbed arm is shared across a vignette's perturbations
through Inspect's generate cache (one generation per vignette and epoch).
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ModelOutput, ResponseSchema, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, StoreModel

from clinical_cf.replies import Provenance, final_answer, find_object, invalid_reason, strip_markdown
from clinical_cf.solvers.css import baseline_cache_policy, baseline_lock

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


def options_text(candidates: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(candidates))


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", str(value))
    if not match:
        return None
    number = float(match.group(1))
    return number / 100 if match.group(2) else number


def parse_distribution(text: str, candidates: list[str]) -> list[float] | None:
    """The distribution in a reply, by letter or by candidate name; renormalised; None if unreadable."""
    return read_distribution(text, candidates)[0]


_PAIR = re.compile(r"^[\s*\-•>|]*\(?(?P<key>[A-F])\)?(?:[.):\]|\s]|\s*[-–—]\s*)[^\n0-9%]{0,80}?[:=\-–—|]?\s*(?P<num>[0-9]*\.?[0-9]+\s*%?)\s*\|?\s*$", re.MULTILINE)


def read_distribution(text: str, candidates: list[str]) -> tuple[list[float] | None, Provenance, str | None]:
    """(distribution or None, provenance, invalid reason) for one arm's reply.

    Only the final answer counts. JSON (strict, else repaired) by letter or candidate name, a
    single wrapping object unwrapped; else markdown lines or table rows of one letter and one
    probability ("B) Pneumonia: 0.6", "| B | 60% |"). A letter given twice with different values
    is unreadable.
    """
    invalid = invalid_reason(text)
    if invalid is not None:
        return None, "invalid", invalid
    final = final_answer(text)
    letters = {LETTERS[i]: i for i in range(len(candidates))}
    names = {c.lower(): i for i, c in enumerate(candidates)}

    def index_of(key: object) -> int | None:
        raw = str(key).strip()
        return letters.get(raw.upper().strip("()."), names.get(raw.lower()))

    def readable(data: dict) -> bool:
        if len(data) == 1 and isinstance(next(iter(data.values())), dict):
            data = next(iter(data.values()))
        return any(index_of(k) is not None for k in data)

    found = find_object(final, readable)
    pairs: list[tuple[int, float]] = []
    provenance: Provenance
    if found is not None:
        data = found.value
        if len(data) == 1 and isinstance(next(iter(data.values())), dict):
            data = next(iter(data.values()))
        for key, value in data.items():
            index, number = index_of(key), _number(value)
            if index is not None and number is not None:
                pairs.append((index, number))
        provenance = found.provenance
    else:
        for match in _PAIR.finditer(strip_markdown(final)):
            index, number = index_of(match.group("key")), _number(match.group("num"))
            if index is not None and number is not None:
                pairs.append((index, number))
        provenance = "markdown"
    seen: dict[int, float] = {}
    for index, number in pairs:
        if index in seen and seen[index] != number:
            return None, "unreadable", None
        seen[index] = number
    probs = [0.0] * len(candidates)
    for index, number in seen.items():
        probs[index] = max(number, 0.0)
    total = sum(probs)
    if total <= 0:
        return None, "unreadable", None
    return [p / total for p in probs], provenance, None


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


async def elicit(model: Model, vignette: str, candidates: list[str], cache: bool | CachePolicy, json_schema: bool, logprobs: bool) -> dict:
    letters = list(LETTERS[: len(candidates)])
    schema = ResponseSchema(
        name="distribution",
        json_schema=JSONSchema(type="object", properties={l: JSONSchema(type="number") for l in letters}, required=letters),
    )
    options = options_text(candidates)
    reply = await model.generate(
        DISTRIBUTION_PROMPT.format(vignette=vignette, options=options),
        config=GenerateConfig(response_schema=schema if json_schema else None),
        cache=cache,
    )
    verbalised, provenance, invalid = read_distribution(reply.completion, candidates)
    arm: dict = {"raw": reply.completion, "verbalised": verbalised, "parse": provenance, "invalid": invalid,
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
def candidate_distributions(baseline_cache: bool | CachePolicy = True, json_schema: bool = True, logprobs: bool = True) -> Solver:
    """Distributions over the candidates for the original and the perturbed vignette."""
    policy = baseline_cache_policy(baseline_cache)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        meta = state.metadata
        candidates: list[str] = meta["candidates"]
        digest = hashlib.sha256(meta["baseline_text"].encode()).hexdigest()
        async with baseline_lock((str(model), digest, state.epoch)):
            baseline = await elicit(model, meta["baseline_text"], candidates, policy, json_schema, logprobs)
        perturbed = await elicit(model, state.input_text, candidates, False, json_schema, logprobs)
        arms = state.store_as(SensitivityArms)
        arms.baseline, arms.perturbed = baseline, perturbed
        state.output.completion = perturbed["raw"]
        return state

    return solve
