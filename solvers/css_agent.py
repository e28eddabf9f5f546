"""The CSS agent setting: a ReAct agent that reads the chart through one tool.

The chart is not in the agent's context. `read_chart_section(section)` returns one of the ten
sections (capped at 8 KB by default), so an intervention reaches the agent only through what the
tool returns (CSS paper section 4.6). Each tuple runs the agent twice: on the unmodified packet
(the baseline arm, shared across a case's tuples through Inspect's generate cache: with the same
prompts and the same tool returns, every step of a repeat run is a cache hit) and on the mutated
packet. Both arms record a trace: which sections were read, in what order, whether the section
carrying the changed fact was among them, repeated calls, and any limit that stopped the run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.agent import AgentPrompt, AgentSubmit, react, run
from inspect_ai.model import CachePolicy, ChatMessageAssistant, ChatMessageTool, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import LimitExceededError, message_limit, span, time_limit, token_limit
from pydantic import BaseModel, Field

from clinical_cf.catalog.css.observations import ObservationPerturbation
from clinical_cf.catalog.css.schema import SECTIONS
from clinical_cf.replies import output_facts, resolve_reader
from clinical_cf.solvers.css import (
    ARM_SPAN,
    BASELINE_SPAN,
    COUNTERFACTUAL_SPAN,
    AgentTrace,
    ArmResult,
    CSSArms,
    baseline_cache_policy,
    baseline_lock,
    cache_scope,
    read_arm,
)

TOOL_NAME = "read_chart_section"
SUBMIT_TOOL_NAME = "submit"

AGENT_INSTRUCTIONS = f"""You are a medical oncologist preparing this patient's case for a multidisciplinary tumor board. The chart is not in this conversation: read it with the {TOOL_NAME} tool, one section at a time. The sections are: {", ".join(SECTIONS)}. Read what you need to understand the diagnosis, stage, biomarkers, surgical history, prior treatment and current status.

When you are ready, call the {SUBMIT_TOOL_NAME} tool with the board's treatment recommendations: "recommendations" lists the options the board recommends, in order of preference, and "not_recommended" the options the board should avoid; each entry has a "treatment" (the regimen, drug or drugs, procedure or action, named explicitly) and a "rationale" (one sentence on why, from this patient's chart)."""

AGENT_REQUEST = (
    "Tumor board request for case {case_id}: review this patient's chart and give your treatment recommendations for the patient now."
)
"""Naming the case keeps two cases' first agent steps from sharing a cache entry."""


Observe = Callable[[str, str, int], str]
"""(section, text, times read before) -> the text the tool returns; may raise ToolError."""


def chart_tool(sections: dict[str, str], cap_bytes: int = 8192, observe: Observe | None = None) -> Tool:
    """`read_chart_section` over one packet's sections, each return capped at `cap_bytes`.

    `observe` rewrites a return before the agent sees it (observation perturbations).
    """
    reads: dict[str, int] = {}

    @tool(name=TOOL_NAME)
    def read_chart_section() -> Tool:
        async def execute(section: str) -> str:
            """Read one section of the patient's chart.

            Args:
                section: One of demographics, diagnoses, biomarkers, medications, procedures, encounters, labs, vitals, allergies, overview.
            """
            key = section.strip().lower()
            if key not in sections:
                raise ToolError(f"Unknown section '{section}'. Valid sections: {', '.join(SECTIONS)}.")
            text = sections[key]
            if observe is not None:
                seen = reads.get(key, 0)
                reads[key] = seen + 1
                text = observe(key, text, seen)
            data = text.encode("utf-8")
            if len(data) > cap_bytes:
                kept = data[:cap_bytes].decode("utf-8", errors="ignore")
                return f"{kept}\n[... section truncated at {cap_bytes} bytes of {len(data)}]"
            return text

        return execute

    return read_chart_section()


class SubmittedItem(BaseModel):
    treatment: str = Field(description="The regimen, drug or drugs, procedure or action, named explicitly.", max_length=160)
    rationale: str = Field(default="", description="One sentence on why, from this patient's chart.", max_length=300)


def recommendations_submit_tool() -> Tool:
    """The typed submit tool of the chart agent: its parameters are the recommendation schema.

    The agent's answer is the tool's return, the recommendation JSON of the single-shot setting, so
    both settings are read by the same contract (step a of `clinical_cf.replies`).
    """

    @tool(name=SUBMIT_TOOL_NAME)
    def submit() -> Tool:
        async def execute(recommendations: list[SubmittedItem], not_recommended: list[SubmittedItem]) -> str:
            """Submit the tumor board's treatment recommendations and finish.

            Args:
                recommendations: Options the board recommends, in order of preference.
                not_recommended: Options the board should avoid.
            """
            def entries(items: list[Any]) -> list[dict[str, str]]:
                return [SubmittedItem.model_validate(i).model_dump() if not isinstance(i, SubmittedItem) else i.model_dump() for i in items]

            return json.dumps({"recommendations": entries(recommendations), "not_recommended": entries(not_recommended)})

        return execute

    return submit()


def trace_of(messages: list, changed: list[str], limit: LimitExceededError | None) -> AgentTrace:
    """The chart-reading trace of one agent run."""
    failed = {m.tool_call_id for m in messages if isinstance(m, ChatMessageTool) and m.error is not None}
    reads: list[str] = []
    succeeded: set[str] = set()
    failed_keys: set[str] = set()
    redundant = errors = steps = 0
    requeried = False
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        steps += 1
        for call in message.tool_calls or []:
            if call.function != TOOL_NAME:
                continue
            key = json.dumps(call.arguments, sort_keys=True)
            redundant += key in succeeded
            requeried = requeried or key in failed_keys
            if call.id in failed:
                errors += 1
                failed_keys.add(key)
            else:
                succeeded.add(key)
            reads.append(str(call.arguments.get("section", "")).strip().lower())
    return AgentTrace(
        tool_calls=len(reads),
        sections_read=reads,
        changed_sections=changed,
        redundant_calls=redundant,
        errors=errors,
        requeried_after_error=requeried,
        steps=steps,
        limit=limit.type if limit is not None else None,
    )


@dataclass(frozen=True)
class AgentLimits:
    """Per-run limits: a looping agent ends, and the limit it hit is recorded in its trace."""

    messages: int = 40
    tokens: int = 200_000
    seconds: int = 900


async def run_chart_agent(
    model: Model,
    request: str,
    sections: dict[str, str],
    changed: list[str],
    cap_bytes: int,
    limits: AgentLimits,
    observe: Observe | None = None,
    reader: Model | None = None,
) -> tuple[ArmResult, list]:
    """One ReAct run over a packet's sections; returns the arm's result and its conversation."""
    agent = react(
        prompt=AgentPrompt(instructions=AGENT_INSTRUCTIONS),
        tools=[chart_tool(sections, cap_bytes, observe)],
        model=model,
        submit=AgentSubmit(tool=recommendations_submit_tool(), answer_only=True),
    )
    state, limit = await run(
        agent,
        request,
        limits=[message_limit(limits.messages), token_limit(limits.tokens), time_limit(limits.seconds)],
    )
    answer = state.output.completion if state.output else ""
    stop, cap = output_facts(state.output if state.output and state.output.choices else None)
    result = await read_arm(answer, trace=trace_of(state.messages, changed, limit), reader=reader, stop_reason=stop, max_tokens=cap)
    return result, state.messages


def models_for_arms(policy: CachePolicy | bool) -> tuple[Model, Model]:
    """The model under test, and the same provider instance with a caching config for the baseline arm.

    Reusing the provider instance means no second copy of local weights is loaded.
    """
    active = get_model()
    cached = Model(active.api, active.config.merge(GenerateConfig(cache=policy))) if policy else active
    return active, cached


def sections_digest(sections: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(sections, sort_keys=True).encode()).hexdigest()


async def run_both_arms(
    state: TaskState,
    policy: CachePolicy | bool,
    baseline: dict[str, str],
    counterfactual: dict[str, str],
    changed: list[str],
    cap_bytes: int,
    limits: AgentLimits,
    observe: Observe | None = None,
    reader: str | None = "reader",
) -> TaskState:
    """Baseline run (shared per case through the cache and a per-case lock), then the counterfactual run.

    `observe` perturbs the counterfactual run's tool returns only.
    """
    active, cached = models_for_arms(policy)
    reader_model = resolve_reader(reader)
    arms = state.store_as(CSSArms)
    async with span(BASELINE_SPAN, type=ARM_SPAN), baseline_lock((str(active), sections_digest(baseline), state.epoch)):
        arms.baseline, _ = await run_chart_agent(cached, state.input_text, baseline, changed, cap_bytes, limits, reader=reader_model)
    async with span(COUNTERFACTUAL_SPAN, type=ARM_SPAN):
        arms.counterfactual, messages = await run_chart_agent(
            active, state.input_text, counterfactual, changed, cap_bytes, limits, observe=observe, reader=reader_model
        )
    arms.baseline_cache_scope = cache_scope(policy)
    state.messages = messages
    state.output.completion = arms.counterfactual.raw
    return state


@solver
def chart_agent_recommendations(
    baseline_cache: bool | CachePolicy = True,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    max_tokens_per_run: int = 200_000,
    max_seconds_per_run: int = 900,
    reader: str | None = "reader",
) -> Solver:
    """Run the ReAct chart agent on the baseline and counterfactual packets of a CSS tuple.

    Args:
        baseline_cache: Cache policy for the baseline arm (see `two_stage_recommendations`).
        section_cap_bytes: Cap on each tool return (the paper's 8 KB).
        max_messages: Message limit per agent run.
        max_tokens_per_run: Token limit per agent run.
        max_seconds_per_run: Wall-clock limit per agent run.
        reader: Model role of the reader (step d of `clinical_cf.replies`); "none" turns it off.
    """
    policy = baseline_cache_policy(baseline_cache)
    limits = AgentLimits(max_messages, max_tokens_per_run, max_seconds_per_run)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        baseline: dict[str, str] = state.metadata["baseline_sections"]
        counterfactual: dict[str, str] = state.metadata["counterfactual_sections"]
        changed = [name for name in SECTIONS if baseline.get(name) != counterfactual.get(name)]
        return await run_both_arms(state, policy, baseline, counterfactual, changed, section_cap_bytes, limits, reader=reader)

    return solve


@solver
def perturbed_observation_agent(
    baseline_cache: bool | CachePolicy = True,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    max_tokens_per_run: int = 200_000,
    max_seconds_per_run: int = 900,
    reader: str | None = "reader",
) -> Solver:
    """Run the chart agent unperturbed (baseline, shared per case) and with one perturbed observation.

    The chart is the same in both runs; only what the tool returns for the perturbed section
    differs, as the sample's pre-registered perturbation says.
    """

    policy = baseline_cache_policy(baseline_cache)
    limits = AgentLimits(max_messages, max_tokens_per_run, max_seconds_per_run)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        perturbation = ObservationPerturbation.model_validate(state.metadata["perturbation"])
        sections: dict[str, str] = state.metadata["baseline_sections"]
        return await run_both_arms(
            state, policy, sections, sections, [perturbation.section], section_cap_bytes, limits, observe=perturbation.perturb,
            reader=reader,
        )

    return solve
