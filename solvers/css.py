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
import json
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
from inspect_ai.util import StoreModel, concurrency, json_schema
from pydantic import BaseModel, Field

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
    parsed: bool = Field(description="True when the reply was the requested JSON; False when list items were recovered from text.")
    trace: AgentTrace | None = None


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
        async with baseline_lock(key):
            arms.baseline, _ = await run_arm(model, baseline_packet, policy, stage2_config)

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
    recommendations, not_recommended, parsed = parse_recommendations(output.completion)
    return (
        ArmResult(
            summary=summary.completion,
            raw=output.completion,
            recommendations=recommendations,
            not_recommended=not_recommended,
            parsed=parsed,
        ),
        messages,
    )


_NEGATED = re.compile(r"^\s*(?:avoid|do not|don't|not recommended|no\b|against|contraindicated)", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)]|[a-z][.)])\s+(.*\S)", re.IGNORECASE)


def parse_recommendations(text: str) -> tuple[list[Recommendation], list[Recommendation], bool]:
    """Parse the stage-2 reply: the requested JSON, or list items recovered from prose."""
    data = first_json_object(text, lambda d: isinstance(d.get("recommendations"), list))
    if data is not None:
        return _items(data["recommendations"]), _items(data.get("not_recommended") or []), True
    recommended: list[Recommendation] = []
    avoided: list[Recommendation] = []
    for line in text.splitlines():
        match = _ITEM.match(line)
        if not match:
            continue
        item = match.group(1).strip().strip("*").strip()
        parts = re.split(r"\s+[-–—]\s+|:\s+", item, maxsplit=1)
        treatment, rationale = parts[0], (parts[1] if len(parts) > 1 else "")
        target = avoided if _NEGATED.match(item) else recommended
        target.append(Recommendation(treatment=treatment.strip(), rationale=rationale.strip()))
    return recommended, avoided, False


def _items(raw: list[Any]) -> list[Recommendation]:
    out: list[Recommendation] = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            out.append(Recommendation(treatment=item.strip()))
        elif isinstance(item, dict):
            treatment = item.get("treatment") or item.get("name") or item.get("regimen")
            if treatment:
                reason = item.get("rationale") or item.get("reason") or ""
                out.append(Recommendation(treatment=str(treatment), rationale=str(reason)))
    return out


def first_json_object(text: str, accept: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any] | None:
    """The first JSON object in `text` that `accept` takes, tolerating code fences and prose around it."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and accept(value):
            return value
    return None


def format_recommendations(arm: ArmResult | None) -> str:
    """A numbered list for the judge and the viewer; the raw reply when nothing parsed."""
    if arm is None:
        return "(no output)"
    if not arm.recommendations:
        return f"(no list could be parsed; raw reply follows)\n{arm.raw.strip() or '(empty)'}"
    lines = [
        f"{i}. {r.treatment}" + (f" — {r.rationale}" if r.rationale else "")
        for i, r in enumerate(arm.recommendations, start=1)
    ]
    if arm.not_recommended:
        lines.append("Not recommended: " + "; ".join(r.treatment for r in arm.not_recommended))
    return "\n".join(lines)
