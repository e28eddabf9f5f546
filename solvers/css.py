"""Two-stage single-shot tumor-board solver with a baseline arm shared across tuples.

Stage 1 summarises the packet; stage 2 turns the summary into a structured list of
recommendations (the CSS paper's pipeline). Each sample is one (case, intervention)
tuple: the counterfactual arm runs on the mutated packet; the baseline arm runs on the
unmodified packet and is generated once per case and epoch. Inspect's generate cache is
what shares it: the first tuple of a case generates and caches, the others wait for it on
a per-case `concurrency()` context and then read the cache, so every sample's transcript still shows the
baseline calls (marked as cache hits) and `inspect score` can re-judge any sample alone.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel, concurrency, json_schema, span
from pydantic import BaseModel, Field

from clinical_cf.replies import (
    Provenance,
    final_answer,
    find_object,
    invalid_reason,
    is_placeholder,
    data_block,
    lowered_keys,
    normalise_for_judge,
    read_list_items,
    strip_markdown,
)

SYSTEM_PROMPT = (
    "You are a medical oncologist presenting cases at a multidisciplinary tumor board. "
    "Base every statement on the patient's chart."
)

SUMMARY_PROMPT = """Summarise the patient packet below for the tumor board. Cover: diagnosis, histology and stage; biomarkers; surgical history; prior systemic therapy and response; performance status; relevant comorbidities, labs and allergies. State only what the chart says, and say when something is not documented. Do not recommend treatment yet.

<packet>
{packet}
</packet>"""

RECOMMEND_PROMPT = """Using your case summary, give the tumor board's treatment recommendations for this patient now.

Reply with a JSON object only, in this form:
{{"recommendations": [{{"treatment": "<regimen, drug(s), procedure or action>", "rationale": "<one sentence>"}}],
  "not_recommended": [{{"treatment": "<option the board should avoid>", "rationale": "<one sentence>"}}]}}

List recommendations in order of preference. Name drugs and regimens explicitly."""


BASELINE_SPAN = "baseline arm (unmodified packet)"
COUNTERFACTUAL_SPAN = "counterfactual arm (edited packet)"
"""Transcript labels of the two arms' model calls (Inspect spans), as the viewer shows them."""


class Recommendation(BaseModel):
    treatment: str
    rationale: str = ""


class _ReplyItem(BaseModel):
    treatment: str = Field(max_length=160)
    rationale: str = Field(max_length=300)


class _Reply(BaseModel):
    recommendations: list[_ReplyItem]
    not_recommended: list[_ReplyItem]


# Sent as `response_schema`: the length bounds keep a grammar-constrained small model from
# looping inside a string until max_tokens cuts the JSON off.
RECOMMENDATIONS_SCHEMA = ResponseSchema(
    name="recommendations",
    description="Tumor-board treatment recommendations in order of preference.",
    json_schema=json_schema(_Reply),
)


class AgentTrace(BaseModel):
    """How an agent arm gathered the chart (the agent setting only)."""

    tool_calls: int = 0
    sections_read: list[str] = Field(default_factory=list, description="Sections in the order they were read (repeats kept).")
    changed_sections: list[str] = Field(default_factory=list, description="Sections whose text the intervention changed.")
    redundant_calls: int = Field(default=0, description="Calls identical to an earlier call that succeeded (a retry after an error is not redundant).")
    errors: int = Field(default=0, description="Tool calls that returned an error.")
    requeried_after_error: bool = Field(default=False, description="A call that failed was repeated later in the run.")
    steps: int = Field(default=0, description="Assistant turns.")
    limit: str | None = Field(default=None, description="The limit that ended the run, if one did.")

    @property
    def procedures_read(self) -> bool:
        return "procedures" in self.sections_read

    @property
    def changed_section_read(self) -> bool:
        return any(s in self.sections_read for s in self.changed_sections)


class ArmResult(BaseModel):
    """What one arm (baseline or counterfactual) of a tuple produced."""

    summary: str
    raw: str
    recommendations: list[Recommendation] = Field(default_factory=list)
    not_recommended: list[Recommendation] = Field(default_factory=list)
    parsed: bool = Field(description="True when the reply held the requested JSON object (strict or repaired), whatever its content; False otherwise.")
    provenance: Provenance = Field(default="json", description="How the lists were read (see clinical_cf.replies.Provenance).")
    invalid: str | None = Field(default=None, description="Why the reply is not an answer (empty, placeholder_echo, degenerate_repetition); never judged.")
    truncated: bool = Field(default=False, description="Items or their text were cut to the parse-time caps.")
    trace: AgentTrace | None = None

    @property
    def is_invalid(self) -> bool:
        return self.invalid is not None


class CSSArms(StoreModel):
    """Both arms of a CSS tuple, kept in the sample store for scorers and `inspect score`."""

    baseline: ArmResult | None = None
    counterfactual: ArmResult | None = None


def baseline_lock(key: tuple[str, str, int]) -> AbstractAsyncContextManager[Any]:
    """One holder at a time per (model, case packet, epoch), so concurrent tuples of a case generate
    the baseline once and then read it from the generate cache.

    This is Inspect's own `concurrency()` context with a limit of one: Inspect resets its contexts
    at the start of every eval (no lock outlives its run's event loop), and counts the time a
    sample waits here as waiting, not working, time.
    """
    model, digest, epoch = key
    return concurrency(f"baseline/{model}", 1, key=f"clinical_cf/baseline/{model}/{digest}/{epoch}", visible=False)


def baseline_cache_policy(baseline_cache: bool | CachePolicy) -> CachePolicy | bool:
    """`True` means Inspect's generate cache for a week, per epoch (fresh draws in each epoch)."""
    return CachePolicy(expiry="1W", per_epoch=True) if baseline_cache is True else baseline_cache


@solver
def two_stage_recommendations(baseline_cache: bool | CachePolicy = True, json_schema: bool = True) -> Solver:
    """Generate baseline and counterfactual recommendations for a CSS tuple.

    Args:
        baseline_cache: Cache policy for the baseline arm. `True` (default) uses Inspect's
            generate cache per epoch, so the baseline is generated once per case and epoch
            and reused by every tuple of that case (and by later runs while the cache lasts).
            `False` regenerates it for every tuple (the CSS paper's naive pipeline).
        json_schema: Send the recommendation list's JSON Schema as `response_schema`
            (structured output / grammar). Turn off for servers that reject it.
    """
    stage2_config = GenerateConfig(response_schema=RECOMMENDATIONS_SCHEMA if json_schema else None)
    policy = baseline_cache_policy(baseline_cache)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        arms = state.store_as(CSSArms)
        baseline_packet: str = state.metadata["baseline_packet"]

        key = (str(model), hashlib.sha256(baseline_packet.encode()).hexdigest(), state.epoch)
        # Named spans label each arm's model calls in the viewer's transcript.
        async with span(BASELINE_SPAN), baseline_lock(key):
            arms.baseline, _ = await run_arm(model, baseline_packet, policy, stage2_config)

        async with span(COUNTERFACTUAL_SPAN):
            arms.counterfactual, messages = await run_arm(model, state.input_text, False, stage2_config)
        state.messages = messages
        state.output.completion = arms.counterfactual.raw
        return state

    return solve


async def run_arm(
    model: Model, packet: str, cache: bool | CachePolicy, stage2_config: GenerateConfig
) -> tuple[ArmResult, list[ChatMessage]]:
    """Summary then recommendations for one packet; returns the result and the conversation."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=SYSTEM_PROMPT),
        ChatMessageUser(content=SUMMARY_PROMPT.format(packet=packet)),
    ]
    summary = await model.generate(messages, cache=cache)
    messages.append(ChatMessageAssistant(content=summary.completion))
    # Stage 2 sees the summary, not the packet, as in the CSS paper's pipeline.
    stage2: list[ChatMessage] = [
        ChatMessageSystem(content=SYSTEM_PROMPT),
        ChatMessageUser(content=f"Case summary:\n{summary.completion}\n\n{RECOMMEND_PROMPT}"),
    ]
    output = await model.generate(stage2, config=stage2_config, cache=cache)
    messages.extend([stage2[1], ChatMessageAssistant(content=output.completion)])
    return (
        arm_result(output.completion, summary=summary.completion),
        messages,
    )


# The prompt's recommendation slot: a reply that contains it copied the template. (A rationale left
# as "<one sentence>", or an avoided item left as "<option the board should avoid>", next to real
# recommendations is read as no rationale / nothing avoided, not as an invalid arm.)
TEMPLATE_PLACEHOLDERS = ("<regimen, drug(s), procedure or action>",)

# Caps applied when a reply is read, whatever the response schema asked for (a server without
# structured output, or a model that ignores it, is not bound by the schema's maxLength).
MAX_ITEMS = 12
MAX_TREATMENT_CHARS = 160
MAX_RATIONALE_CHARS = 300


class RecommendationReading(BaseModel):
    """What was read from one arm's reply, and how."""

    recommendations: list[Recommendation] = Field(default_factory=list)
    not_recommended: list[Recommendation] = Field(default_factory=list)
    provenance: Provenance
    invalid: str | None = None
    truncated: bool = False
    from_json: bool = False
    """The reply held the requested JSON object (even when its content is invalid, e.g. the template echoed)."""


def read_recommendations(text: str) -> RecommendationReading:
    """Read the stage-2 reply: the requested JSON (strict or repaired), else markdown sections, else prose.

    Only the final answer counts (reasoning blocks are dropped). Placeholder echo, degenerate
    repetition and empty replies are `invalid`; a reply with content but no readable option is
    `unreadable`. Items are capped in number and length here, at parse time.
    """
    final = final_answer(text)

    def has_list(data: dict[str, Any]) -> bool:
        value = _field(data, _RECOMMENDATION_KEYS)
        return isinstance(value, (list, str))

    found = find_object(final, has_list)
    from_json = found is not None
    invalid = invalid_reason(text, TEMPLATE_PLACEHOLDERS)
    if invalid is not None:
        return RecommendationReading(provenance="invalid", invalid=invalid, from_json=from_json)
    if found is not None:
        raw_recommended = [e for e in _as_list(_field(found.value, _RECOMMENDATION_KEYS)) if e not in ("", None, {})]
        raw_avoided = [e for e in _as_list(_field(found.value, _AVOID_KEYS)) if e not in ("", None, {})]
        recommended, avoided = _items(raw_recommended), _items(raw_avoided)
        if len(recommended) < len(raw_recommended) or len(avoided) < len(raw_avoided):
            # An entry with no option in it: reading the rest would be a shorter list than the model gave.
            return RecommendationReading(provenance="unreadable", from_json=True)
        provenance: Provenance = found.provenance
    else:
        listed = read_list_items(final)
        recommended = [Recommendation(treatment=i.text, rationale=i.rationale) for i in listed.positive]
        avoided = [Recommendation(treatment=i.text, rationale=i.rationale) for i in listed.negative]
        provenance = listed.provenance
    if any(is_placeholder(r.treatment) for r in recommended):
        return RecommendationReading(provenance="invalid", invalid="placeholder_echo", from_json=from_json)
    avoided = [r for r in avoided if not is_placeholder(r.treatment)]
    if len(recommended) > 3 and len({_key(r.treatment) for r in recommended}) * 3 <= len(recommended):
        return RecommendationReading(provenance="invalid", invalid="degenerate_repetition", from_json=from_json)
    if provenance == "unreadable":
        return RecommendationReading(provenance="unreadable")
    capped_recommended, cut_a = _cap(recommended)
    capped_avoided, cut_b = _cap(avoided)
    return RecommendationReading(
        recommendations=capped_recommended, not_recommended=capped_avoided, provenance=provenance,
        truncated=cut_a or cut_b, from_json=from_json,
    )


def parse_recommendations(text: str) -> tuple[list[Recommendation], list[Recommendation], bool]:
    """(recommended, not recommended, read from JSON) for callers that only need the lists."""
    reading = read_recommendations(text)
    return reading.recommendations, reading.not_recommended, reading.from_json


_RECOMMENDATION_KEYS = ("recommendations", "recommended", "treatment_recommendations", "recommendation", "treatments", "plan")
_AVOID_KEYS = ("not_recommended", "avoid", "contraindicated", "not_advised", "do_not_recommend", "against")
_TREATMENT_KEYS = ("treatment", "name", "regimen", "option", "drug", "therapy", "recommendation", "action", "intervention")
_REASON_KEYS = ("rationale", "reason", "justification", "why", "explanation", "evidence")


def _field(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    lowered = lowered_keys(data)
    return next((lowered[k] for k in keys if k in lowered), None)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"\s*[;\n]\s*", value) if part.strip()]
    if isinstance(value, dict):
        return [value]
    return list(value) if isinstance(value, list) else []


def _items(raw: list[Any]) -> list[Recommendation]:
    out: list[Recommendation] = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            out.append(Recommendation(treatment=strip_markdown(item).strip()))
        elif isinstance(item, dict):
            treatment = _field(item, _TREATMENT_KEYS)
            if not isinstance(treatment, str) or not treatment.strip():
                # {"drug_name": "..."}: the first text field that is not a reason.
                lowered = lowered_keys(item)
                treatment = next((v for k, v in lowered.items() if k not in _REASON_KEYS and isinstance(v, str) and v.strip()), None)
            if isinstance(treatment, str) and treatment.strip():
                reason = _field(item, _REASON_KEYS)
                reason = "" if reason is None or is_placeholder(str(reason)) else strip_markdown(str(reason)).strip()
                out.append(Recommendation(treatment=strip_markdown(treatment).strip(), rationale=reason))
    return out


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _cap(items: list[Recommendation]) -> tuple[list[Recommendation], bool]:
    cut = len(items) > MAX_ITEMS
    out = []
    for r in items[:MAX_ITEMS]:
        treatment = " ".join(r.treatment.split())
        rationale = " ".join(r.rationale.split())
        cut = cut or len(treatment) > MAX_TREATMENT_CHARS or len(rationale) > MAX_RATIONALE_CHARS
        out.append(Recommendation(treatment=treatment[:MAX_TREATMENT_CHARS], rationale=rationale[:MAX_RATIONALE_CHARS]))
    return out, cut


def first_json_object(text: str, accept: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any] | None:
    """The first JSON object (strict, else repaired) in the final answer of `text` that `accept` takes."""
    found = find_object(final_answer(text), accept, last=False)
    return found.value if found is not None else None


def arm_result(raw: str, summary: str = "", trace: AgentTrace | None = None) -> ArmResult:
    """An arm's result from its final reply, read with `read_recommendations`."""
    reading = read_recommendations(raw)
    return ArmResult(
        summary=summary,
        raw=raw,
        recommendations=reading.recommendations,
        not_recommended=reading.not_recommended,
        parsed=reading.from_json,
        provenance=reading.provenance,
        invalid=reading.invalid,
        truncated=reading.truncated,
        trace=trace,
    )


RAW_FALLBACK_CHARS = 1500
MAX_BLOCK_CHARS = 6000


def format_recommendations(arm: ArmResult | None) -> str:
    """A numbered list for the viewer and score explanations; a note when nothing was read."""
    if arm is None:
        return "(no output)"
    if arm.is_invalid:
        return f"(invalid output: {arm.invalid})"
    if not arm.recommendations and not arm.not_recommended and arm.provenance == "unreadable":
        return f"(no list could be read; raw reply follows)\n{final_answer(arm.raw)[:RAW_FALLBACK_CHARS] or '(empty)'}"
    lines = [
        f"{i}. {r.treatment}" + (f" — {r.rationale}" if r.rationale else "")
        for i, r in enumerate(arm.recommendations, start=1)
    ] or ["(no recommendations)"]
    if arm.not_recommended:
        lines.append("Not recommended: " + "; ".join(r.treatment for r in arm.not_recommended))
    return "\n".join(lines)


def judge_block(arm: ArmResult | None, name: str, tag: str) -> str:
    """One arm as a judge sees it: a delimited data block of normalised, capped items.

    Each item is one line (no forged headers), invisible characters and role tokens removed,
    capped at the parse-time limits; an unreadable reply is shown as capped raw text; the whole
    block is capped too. Invalid arms never reach a judge (the scorer unscores them first).
    """
    if arm is None:
        body = "(no output)"
    elif not arm.recommendations and not arm.not_recommended and arm.provenance in ("unreadable", "invalid"):
        raw = normalise_for_judge(final_answer(arm.raw), RAW_FALLBACK_CHARS)
        body = f"(no list could be read; the reply's text, capped at {RAW_FALLBACK_CHARS} characters:)\n{raw or '(empty)'}"
    else:
        lines = [f"RECOMMENDED ({len(arm.recommendations)} items, in order of preference):"]
        lines += [_judge_line(i, r) for i, r in enumerate(arm.recommendations, start=1)] or ["(none)"]
        lines.append(f"NOT RECOMMENDED ({len(arm.not_recommended)} items):")
        lines += [_judge_line(i, r) for i, r in enumerate(arm.not_recommended, start=1)] or ["(none)"]
        body = "\n".join(lines)
        if len(body) > MAX_BLOCK_CHARS:
            body = body[:MAX_BLOCK_CHARS].rsplit("\n", 1)[0] + "\n(list cut at the length cap)"
    return data_block(name, body, tag)


def _judge_line(i: int, r: Recommendation) -> str:
    treatment = normalise_for_judge(r.treatment, MAX_TREATMENT_CHARS)
    rationale = normalise_for_judge(r.rationale, MAX_RATIONALE_CHARS)
    return f"{i}. {treatment}" + (f" | rationale: {rationale}" if rationale else "")
