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
import unicodedata
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

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
from pydantic import BaseModel, ConfigDict, Field

from clinical_cf.replies import (
    Provenance,
    ReaderTask,
    agreed_reading,
    conflict_reason,
    data_block,
    degenerate,
    final_answer,
    find_object,
    grounded,
    has_negative_cue,
    invalid_reason,
    is_conflict,
    is_placeholder,
    is_pointer,
    json_objects,
    lowered_keys,
    negated,
    negated_near,
    none_like,
    normalise_for_judge,
    not_whole,
    number_problem,
    output_facts,
    outside_json,
    quoted_items,
    reply_cut,
    resolve_pointer,
    resolve_reader,
    revision_in,
    squash,
    strip_markdown,
    struck_conflict,
    trailing_lines,
    unreadable_code,
    verify_quote,
    words_of,
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

Reply with one JSON object with two fields. "recommendations" lists the options the board recommends, in order of preference; "not_recommended" lists the options the board should avoid. Each entry has a "treatment" (the regimen, drug or drugs, procedure or action, named explicitly) and a "rationale" (one sentence on why, from this patient's chart)."""

RECOMMEND_PROMPT_PLAIN = """Using your case summary, give the tumor board's treatment recommendations for this patient now.

End your reply with two lines. The first starts with RECOMMENDED: and lists the options the board recommends, in order of preference, separated by semicolons; the second starts with NOT RECOMMENDED: and lists the options the board should avoid the same way (write none if there are none). Name drugs and regimens explicitly."""
"""Stage 2 for providers without structured output (`json_schema=False`): the closed answer-line grammar of step (c)."""


def stage2_prompt(summary: str, json_schema: bool = True) -> str:
    """The stage-2 user message: the stage-1 summary, then the request (no template slots, no braces to escape)."""
    return f"Case summary:\n{summary}\n\n{RECOMMEND_PROMPT if json_schema else RECOMMEND_PROMPT_PLAIN}"


BASELINE_SPAN = "baseline (unmodified packet)"
COUNTERFACTUAL_SPAN = "counterfactual (edited packet)"
ARM_SPAN = "arm"
"""The arms' span type: Inspect titles a span `type: name` (the name twice when no type is given)."""
"""Transcript labels of the two arms' model calls (Inspect spans), as the viewer shows them."""


class Recommendation(BaseModel):
    treatment: str
    rationale: str = ""


class _ReplyItem(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false (a field of its own is room for a polarity)

    treatment: str = Field(max_length=160)
    rationale: str = Field(max_length=300)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    recommendations: list[_ReplyItem]
    not_recommended: list[_ReplyItem]


# Sent as `response_schema`: the length bounds keep a grammar-constrained small model from
# looping inside a string until max_tokens cuts the JSON off.
RECOMMENDATIONS_SCHEMA = ResponseSchema(
    name="recommendations",
    description="Tumor-board treatment recommendations in order of preference.",
    json_schema=json_schema(_Reply),
)


DERIVED_SECTIONS = ("overview",)
"""Sections that restate the others (the chart's overview): every intervention that edits a fact edits them too."""


def meaning_sections(changed: list[str]) -> list[str]:
    """The sections an intervention changes for its meaning: the changed sections without the derived overview,
    which every intervention touches (the overview itself when it is the only section changed)."""
    own = [s for s in changed if s not in DERIVED_SECTIONS]
    return own or list(changed)


class AgentTrace(BaseModel):
    """How an agent arm gathered the chart (the agent setting only)."""

    tool_calls: int = 0
    sections_read: list[str] = Field(default_factory=list, description="Sections in the order they were read (repeats kept).")
    changed_sections: list[str] = Field(default_factory=list, description="Sections whose text the intervention changed.")
    redundant_calls: int = Field(
        default=0, description="Calls identical to an earlier call that succeeded (a retry after an error is not redundant)."
    )
    errors: int = Field(default=0, description="Tool calls that returned an error.")
    requeried_after_error: bool = Field(default=False, description="A call that failed was repeated later in the run.")
    steps: int = Field(default=0, description="Assistant turns.")
    limit: str | None = Field(default=None, description="The limit that ended the run, if one did.")

    @property
    def procedures_read(self) -> bool:
        return "procedures" in self.sections_read

    @property
    def changed_section_read(self) -> bool:
        """Whether the agent read a section the intervention changes for its meaning (`meaning_sections`)."""
        return any(s in self.sections_read for s in meaning_sections(self.changed_sections))


class ArmResult(BaseModel):
    """What one arm (baseline or counterfactual) of a tuple produced."""

    summary: str
    raw: str
    recommendations: list[Recommendation] = Field(default_factory=list)
    not_recommended: list[Recommendation] = Field(default_factory=list)
    parsed: bool = Field(
        description="True when the reply held the requested JSON object (strict or repaired), whatever its content; False otherwise."
    )
    provenance: Provenance = Field(default="json", description="How the lists were read (see clinical_cf.replies.Provenance).")
    invalid: str | None = Field(
        default=None, description="Why the reply is not an answer (empty, placeholder_echo, degenerate_repetition); never judged."
    )
    truncated: bool = Field(default=False, description="Items or their text were cut to the parse-time caps.")
    unreadable_reason: str = Field(default="", description="Why no list could be read (provenance unreadable).")
    contradictory: list[str] = Field(default_factory=list, description="Options the reply's JSON both recommends and says to avoid.")
    conflict: list[str] = Field(default_factory=list, description="The candidate answers of a reply whose answers disagree.")
    reply_cut: bool = Field(default=False, description="The reply was longer than clinical_cf.replies.MAX_REPLY_CHARS and was read cut.")
    reader: dict[str, Any] | None = Field(
        default=None, description="The reader role's call when step (d) ran: model, its reply, the verification's verdict."
    )
    max_tokens: int | None = Field(default=None, description="The output-token cap that cut the reply (unreadable: truncated).")
    trace: AgentTrace | None = None

    @property
    def is_invalid(self) -> bool:
        return self.invalid is not None

    @property
    def is_unreadable(self) -> bool:
        return self.invalid is None and self.provenance == "unreadable"

    @property
    def unreadable_code(self) -> str | None:
        """The short reason code when no list was read (`clinical_cf.replies.UNREADABLE_CODES`, or the invalid code), else None."""
        if self.is_invalid:
            return self.invalid
        return unreadable_code(self.unreadable_reason) if self.is_unreadable else None


class CSSArms(StoreModel):
    """Both arms of a CSS tuple, kept in the sample store for scorers and `inspect score`."""

    baseline: ArmResult | None = None
    counterfactual: ArmResult | None = None
    baseline_cache_scope: str | None = None
    """The run scope of the baseline's generate-cache entry (None when the baseline is not cached or not scoped)."""


def baseline_lock(key: tuple[str, str, int]) -> AbstractAsyncContextManager[Any]:
    """One holder at a time per (model, case packet, epoch), so concurrent tuples of a case generate
    the baseline once and then read it from the generate cache.

    This is Inspect's own `concurrency()` context with a limit of one: Inspect resets its contexts
    at the start of every eval (no lock outlives its run's event loop), and counts the time a
    sample waits here as waiting, not working, time.
    """
    model, digest, epoch = key
    return concurrency(f"baseline/{model}", 1, key=f"clinical_cf/baseline/{model}/{digest}/{epoch}", visible=False)


def baseline_cache_policy(baseline_cache: bool | CachePolicy, run_scope: str | None = None) -> CachePolicy | bool:
    """`True` means Inspect's generate cache for a week, per epoch (fresh draws in each epoch), scoped to one run.

    The scope (`run_scope`, a token made when the task's solver is built, i.e. once per `inspect
    eval`) is part of the cache key, so the baseline is shared by the tuples of this run and never
    read back by a later run of a model served under the same name. A `CachePolicy` passed in is
    used as given (its own scopes decide what is shared).
    """
    if baseline_cache is True:
        return CachePolicy(expiry="1W", per_epoch=True, scopes={"clinical_cf_run": run_scope or new_run_scope()})
    return baseline_cache


def new_run_scope() -> str:
    """A fresh token naming one run's baseline cache scope."""

    return uuid.uuid4().hex


def cache_scope(policy: CachePolicy | bool) -> str | None:
    """The run scope a baseline policy carries (recorded in score metadata), or None when not scoped."""
    return policy.scopes.get("clinical_cf_run") if isinstance(policy, CachePolicy) else None


@dataclass(frozen=True)
class StageLimits:
    """Per-stage output-token caps (None leaves the model's own default), so a small local model's
    tuple stays within a known budget."""

    summary: int | None = None
    recommendations: int | None = None


@solver
def two_stage_recommendations(
    baseline_cache: bool | CachePolicy = True,
    json_schema: bool = True,
    reader: str | None = "reader",
    summary_max_tokens: int | None = None,
    recommend_max_tokens: int | None = None,
) -> Solver:
    """Generate baseline and counterfactual recommendations for a CSS tuple.

    Args:
        baseline_cache: Cache policy for the baseline arm. `True` (default) uses Inspect's
            generate cache per epoch, scoped to this run: the baseline is generated once per case
            and epoch and reused by every tuple of that case in this run (never by another run).
            `False` regenerates it for every tuple (the CSS paper's naive pipeline).
        json_schema: Send the recommendation list's JSON Schema as `response_schema`
            (structured output / grammar). Turn off for servers that reject it: the prompt then
            asks for the closed `RECOMMENDED:` / `NOT RECOMMENDED:` answer lines.
        reader: Model role of the reader (step d of `clinical_cf.replies`); "none" turns it off.
        summary_max_tokens: Output-token cap for stage 1 (None: the model's default).
        recommend_max_tokens: Output-token cap for stage 2 (None: the model's default).
    """
    stage2_config = GenerateConfig(response_schema=RECOMMENDATIONS_SCHEMA if json_schema else None, max_tokens=recommend_max_tokens)
    limits = StageLimits(summary_max_tokens, recommend_max_tokens)
    policy = baseline_cache_policy(baseline_cache)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        reader_model = resolve_reader(reader, json_schema=json_schema)
        arms = state.store_as(CSSArms)
        baseline_packet: str = state.metadata["baseline_packet"]

        key = (str(model), hashlib.sha256(baseline_packet.encode()).hexdigest(), state.epoch)
        # Named spans label each arm's model calls in the viewer's transcript.
        async with span(BASELINE_SPAN, type=ARM_SPAN), baseline_lock(key):
            arms.baseline, _ = await run_arm(model, baseline_packet, policy, stage2_config, json_schema, reader_model, limits)

        async with span(COUNTERFACTUAL_SPAN, type=ARM_SPAN):
            arms.counterfactual, messages = await run_arm(model, state.input_text, False, stage2_config, json_schema, reader_model, limits)
        arms.baseline_cache_scope = cache_scope(policy)
        state.messages = messages
        state.output.completion = arms.counterfactual.raw
        return state

    return solve


async def run_arm(
    model: Model,
    packet: str,
    cache: bool | CachePolicy,
    stage2_config: GenerateConfig,
    json_schema: bool = True,
    reader: Model | None = None,
    limits: StageLimits = StageLimits(),
) -> tuple[ArmResult, list[ChatMessage]]:
    """Summary then recommendations for one packet; returns the result and the conversation."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=SYSTEM_PROMPT),
        ChatMessageUser(content=SUMMARY_PROMPT.format(packet=packet)),
    ]
    summary = await model.generate(messages, config=GenerateConfig(max_tokens=limits.summary), cache=cache)
    messages.append(ChatMessageAssistant(content=summary.completion))
    # Stage 2 sees the summary, not the packet, as in the CSS paper's pipeline.
    stage2: list[ChatMessage] = [
        ChatMessageSystem(content=SYSTEM_PROMPT),
        ChatMessageUser(content=stage2_prompt(summary.completion, json_schema)),
    ]
    output = await model.generate(stage2, config=stage2_config, cache=cache)
    messages.extend([stage2[1], ChatMessageAssistant(content=output.completion)])
    stop, cap = output_facts(output, stage2_config.max_tokens)
    return await read_arm(output.completion, summary=summary.completion, reader=reader, stop_reason=stop, max_tokens=cap), messages


# Caps applied when a reply is read, whatever the response schema asked for (a server without
# structured output, or a model that ignores it, is not bound by the schema's maxLength).
MAX_ITEMS = 12
MAX_TREATMENT_CHARS = 160
MAX_RATIONALE_CHARS = 300

# Template slots of earlier prompt versions: a reply that contains one copied a template. The
# prompts no longer show slots; the check stays for replies generated from old prompts or copied
# from elsewhere.
TEMPLATE_PLACEHOLDERS = ("<regimen, drug(s), procedure or action>",)


class RecommendationReading(BaseModel):
    """What was read from one arm's reply, and how."""

    recommendations: list[Recommendation] = Field(default_factory=list)
    not_recommended: list[Recommendation] = Field(default_factory=list)
    provenance: Provenance
    invalid: str | None = None
    truncated: bool = False
    from_json: bool = False
    """The reply held the requested JSON object (even when its content is invalid, e.g. the template echoed)."""
    reason: str = ""
    """Why nothing was read (unreadable), or why the reading left the JSON for the reader role."""
    reply_cut: bool = False
    reader: dict[str, Any] | None = None
    """The reader role's call when step (d) ran: model, its reply and the verification's verdict."""
    contradictory: list[str] = Field(default_factory=list)
    """Options the reply's JSON both recommends and says to avoid (read as stated)."""
    conflict: list[str] = Field(default_factory=list)
    """The candidate answers when they disagree (`unreadable: conflicting answers`)."""
    bounds: bool = False
    """Unreadable for a reason no reader can undo (a number out of bounds, a reply that is not whole): the reader is not asked."""
    max_tokens: int | None = None
    """The output-token cap that cut the reply (unreadable `truncated`), when the provider stopped it for length."""

    @property
    def needs_reader(self) -> bool:
        return self.provenance == "unreadable" and self.invalid is None and not self.bounds


SCHEMA_KEYS = frozenset({"recommendations", "not_recommended"})
ITEM_KEYS = frozenset({"treatment", "rationale"})
# A rationale that rejects its own item ("Do not add: ...", "not advised", "avoid") contradicts a recommended list.
_REJECTING = re.compile(
    r"\b(?:do not|don't|dont|not (?:advised|recommended|indicated|appropriate|to be given|given)|avoid|against|contraindicated"
    r"|should not|shouldn't|never|omit|withhold|no role|no benefit|futile)\b",
    re.IGNORECASE,
)


def _schema_lists(data: dict[str, Any]) -> tuple[list[Any], list[Any]] | None:
    """(recommended, avoided) raw entries of an object with the reply schema's lists, else None."""
    lowered = lowered_keys(data)
    recommended = lowered.get("recommendations")
    avoided = lowered.get("not_recommended", [])
    if not isinstance(recommended, list) or not isinstance(avoided, (list, type(None))):
        return None
    return recommended, avoided or []


def _schema_items(raw: list[Any]) -> list[Recommendation] | str:
    """Items of a schema list (strings, or objects with a `treatment` and a `rationale`), or why they are not:
    an entry without a treatment, or with a field the schema does not have (its own polarity, a flag, a
    priority: the strict schema leaves no room for them). A "none"-like item ("None", "N/A") is no item."""
    out: list[Recommendation] = []
    for entry in raw:
        if entry in ("", None, {}):
            continue
        if isinstance(entry, str):
            if not none_like(entry):
                out.append(Recommendation(treatment=entry.strip()))
            continue
        if not isinstance(entry, dict):
            return "an entry of the JSON is not an item"
        item = lowered_keys(entry)
        extra = sorted(set(item) - ITEM_KEYS - {"reason"})
        if extra:
            return f"an item has fields outside the schema ({', '.join(extra)[:60]})"
        treatment = item.get("treatment")
        if not isinstance(treatment, str) or not treatment.strip():
            return "an entry of the JSON names no treatment"
        if none_like(treatment):
            continue
        reason = item.get("rationale", item.get("reason", ""))
        reason = "" if reason is None or is_placeholder(str(reason)) else str(reason).strip()
        out.append(Recommendation(treatment=treatment.strip(), rationale=reason))
    return out


def _contradicted(items: list[Recommendation], prose: str) -> str | None:
    """Why a JSON reading is not taken as stated: a recommended item that itself says to avoid something (in its
    name or its rationale), or that the prose around the JSON rejects (a negative cue next to its name)."""
    for item in items:
        if has_negative_cue(words_of(item.treatment)):
            return f"recommended item {item.treatment[:60]!r} states a negation"
        if _REJECTING.search(item.rationale):
            return f"the rationale of recommended item {item.treatment[:60]!r} rejects it"
        head = next((w for w in words_of(item.treatment) if len(w) >= 4), None)
        if head and prose:
            folded = squash(prose)
            position = folded.find(head)
            while position >= 0:
                if negated_near(head, folded[max(0, position - 60): position + len(head) + 60]):
                    return f"the text around the JSON rejects {head!r}"
                position = folded.find(head, position + 1)
    return None


# An answer line, optionally after a short label of its own ("Initial plan: RECOMMENDED: X" is a candidate answer too).
_CSS_LABEL = re.compile(r"^(?:[^:\n]{1,40}:[ \t]{0,4})?(?P<label>not recommended|recommended)[ \t]{0,4}:[ \t]{0,4}(?P<items>.*)$", re.IGNORECASE)


def _label_items(line: str) -> tuple[str, list[str]] | None:
    match = _CSS_LABEL.match(unicodedata.normalize("NFKC", line))  # a full-width "；" separates items as ";" does
    if not match:
        return None
    items = [part.strip().rstrip(".") for part in match.group("items").split(";")]
    return match.group("label").lower(), [i for i in items if i and not none_like(i)]


def _answer_blocks(final: str) -> list[tuple[int, list[str]]]:
    """Every block of consecutive `RECOMMENDED:` / `NOT RECOMMENDED:` lines in the final answer: (end offset, lines)."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    offset = end = 0
    for raw in final.splitlines(keepends=True):
        line = re.sub(r"\*\*|__|`+|~~", "", raw[:2000]).strip()
        offset += len(raw)
        if line and _label_items(line) is not None:
            current.append(line)
            end = offset
        elif line and current:
            blocks.append((end, current))
            current = []
    if current:
        blocks.append((end, current))
    return blocks


def _block_key(lines: list[str]) -> str:
    lists: dict[str, list[str]] = {"recommended": [], "not recommended": []}
    for line in lines:
        label, items = _label_items(line)  # type: ignore[misc]
        lists[label] += [_key(i) for i in items]
    return json.dumps({k: sorted(v) for k, v in lists.items()})


def _object_key(data: dict[str, Any]) -> str:
    lists = _schema_lists(data) or ([], [])
    def names(raw: list[Any]) -> list[str]:
        return sorted(_key(e if isinstance(e, str) else str(lowered_keys(e).get("treatment", "")) if isinstance(e, dict) else str(e))
                      for e in raw if not none_like(e if isinstance(e, str) else (lowered_keys(e).get("treatment") if isinstance(e, dict) else e)))
    return json.dumps({"recommended": names(lists[0]), "not recommended": names(lists[1])})


def read_recommendations(text: str, stop_reason: str | None = None, max_tokens: int | None = None) -> RecommendationReading:
    """Read the stage-2 reply by contract, steps (a)-(c) of `clinical_cf.replies`.

    Every candidate answer of the final answer is collected: each schema JSON object (strict or
    syntax-repaired, a tool-call wrapper unwrapped) and each block of `RECOMMENDED:` /
    `NOT RECOMMENDED:` lines, wherever it stands. Candidates that disagree, or a revision in prose
    after the last one ("Correction: ...", "On reflection ..."), make the reply `unreadable:
    conflicting answers` (both candidates kept); the reader role may then read the revision it marks.
    (a)/(b) JSON is read against the strict schema: an item with a field of its own (a polarity, a
    flag), a recommended item whose name or rationale rejects it, or prose around the JSON that
    rejects a recommended item leaves the reply to the reader; a "none"-like item is no item. (c)
    a closing block of answer lines (an item with a negation or a second label is left to the
    reader). A number out of bounds (`number_problem`) makes the reply unreadable. Only the final
    answer counts; empty replies, placeholder echo and degenerate repetition are `invalid`. Items
    are capped in number and length at parse time.
    """
    cut = reply_cut(text)
    cut_off = not_whole(text, stop_reason)
    if cut_off:  # a reply the provider cut or filtered, or JSON cut before it closed: never read, never repaired
        return RecommendationReading(provenance="unreadable", reply_cut=cut, reason=cut_off, bounds=True,
                                     max_tokens=max_tokens if cut_off.startswith("truncated") else None)
    final = final_answer(text)
    if not final or not re.search(r"\w", final):
        return RecommendationReading(provenance="invalid", invalid="empty", reply_cut=cut)
    bad_number = number_problem(final)
    if bad_number:
        return RecommendationReading(provenance="unreadable", reply_cut=cut, reason=f"unreadable number: {bad_number}", bounds=True)
    withdrawn = struck_conflict(final)
    if withdrawn:  # the reply strikes part of its answer through: never read with or silently without it
        return RecommendationReading(provenance="unreadable", reply_cut=cut, reason=withdrawn, conflict=[withdrawn])
    objects = [f for f in json_objects(final) if _schema_lists(f.value) is not None]
    blocks = _answer_blocks(final)
    candidates = {_object_key(f.value): f.end for f in objects}
    for end, lines in blocks:
        candidates.setdefault(_block_key(lines), end)
    if len(candidates) > 1:
        shown = [*(json.dumps(f.value)[:120] for f in objects), *("; ".join(lines) for _, lines in blocks)]
        return RecommendationReading(provenance="unreadable", from_json=bool(objects), reply_cut=cut,
                                     reason=conflict_reason(shown), conflict=shown[:4])
    if candidates:
        last_end = max(candidates.values())
        revision = revision_in(final[last_end:])
        if revision:
            shown = [json.dumps(objects[-1].value)[:200] if objects else "; ".join(blocks[-1][1]), revision]
            return RecommendationReading(provenance="unreadable", from_json=bool(objects), reply_cut=cut,
                                         reason=conflict_reason(shown), conflict=shown)
    from_json = bool(objects)
    if objects:
        chosen = objects[-1]
        extra = sorted(set(lowered_keys(chosen.value)) - SCHEMA_KEYS)
        if extra:
            return RecommendationReading(provenance="unreadable", from_json=True, reply_cut=cut,
                                         reason=f"the JSON has fields outside the schema ({', '.join(extra)[:60]})")
        raw_recommended, raw_avoided = _schema_lists(chosen.value)  # type: ignore[misc]
        recommended, avoided = _schema_items(raw_recommended), _schema_items(raw_avoided)
        if isinstance(recommended, str) or isinstance(avoided, str):
            return RecommendationReading(provenance="unreadable", from_json=True, reply_cut=cut,
                                         reason=recommended if isinstance(recommended, str) else str(avoided))
        span = final[chosen.start:chosen.end]
        invalid = invalid_reason(span, TEMPLATE_PLACEHOLDERS)
        if invalid == "degenerate_repetition" and not degenerate("\n".join(r.treatment for r in [*recommended, *avoided])):
            # The options are stated once; only a rationale loops (a small model's habit). The options
            # are what is judged: keep them, and drop the looping rationales rather than the answer.
            recommended, avoided = _without_looping_rationales(recommended), _without_looping_rationales(avoided)
            invalid = None
        if invalid is not None:
            return RecommendationReading(provenance="invalid", invalid=invalid, from_json=True, reply_cut=cut)
        contradiction = _contradicted(recommended, outside_json(final, objects))
        if contradiction and contradiction.startswith("the text around"):
            # The prose rejects what the JSON recommends: two answers (the reader may read only a marked revision).
            shown = [json.dumps(chosen.value)[:200], contradiction]
            return RecommendationReading(provenance="unreadable", from_json=True, reply_cut=cut,
                                         reason=conflict_reason(shown), conflict=shown)
        if contradiction:
            return RecommendationReading(provenance="unreadable", from_json=True, reply_cut=cut, reason=contradiction)
        provenance: Provenance = chosen.provenance
    else:
        block = trailing_lines(final, lambda line: _label_items(line) is not None)
        if block is None:
            invalid = invalid_reason(final, TEMPLATE_PLACEHOLDERS)
            if invalid is not None:
                return RecommendationReading(provenance="invalid", invalid=invalid, reply_cut=cut)
            return RecommendationReading(provenance="unreadable", reply_cut=cut,
                                         reason="no recommendation JSON and no RECOMMENDED: line ends the answer")
        recommended, avoided = [], []
        labels = [_label_items(line) for line in block]
        for label, items in labels:  # type: ignore[misc]
            for item in items:
                if (
                    negated(words_of(item))  # a negation in any language the verification knows, CJK included
                    and label == "recommended"
                    or _CSS_LABEL.search(item)
                    or re.search(r"(?i)\brecommended\s*:", item)
                ):
                    return RecommendationReading(provenance="unreadable", reply_cut=cut,
                                                 reason=f"answer line item {item[:60]!r} is not a plain option")
                (recommended if label == "recommended" else avoided).append(Recommendation(treatment=item))
        names = [label for label, _ in labels]
        if names.count("recommended") != 1 or names.count("not recommended") > 1:
            return RecommendationReading(provenance="unreadable", reply_cut=cut,
                                         reason="the answer lines need one RECOMMENDED: line (and at most one NOT RECOMMENDED: line)")
        provenance = "field"
    return _finish(recommended, avoided, provenance, from_json, cut, final=final)


def _without_looping_rationales(items: list[Recommendation]) -> list[Recommendation]:
    return [Recommendation(treatment=r.treatment, rationale="") if degenerate(r.rationale) else r for r in items]


def _resolved(items: list[Recommendation], final: str) -> list[Recommendation] | str:
    """Items with every pointer ("Option (ii)", "items 1 and 2 above") replaced by what the reply's own unambiguous
    enumeration names, or why an item is no thing (`pointer: ...`)."""
    out: list[Recommendation] = []
    for item in items:
        if not is_pointer(item.treatment):
            out.append(item)
            continue
        named, why = resolve_pointer(item.treatment, final)
        if why:
            return why
        out += [Recommendation(treatment=name) for name in named]
    return out


def _finish(recommended: list[Recommendation], avoided: list[Recommendation], provenance: Provenance,
            from_json: bool, cut: bool, reader: dict[str, Any] | None = None, final: str = "") -> RecommendationReading:
    """Pointers resolved (or the reading is unreadable), invalid-output checks on the items that were read, an item
    in both lists made a conflict, then the parse-time caps."""
    resolved = [_resolved(recommended, final), _resolved(avoided, final)]
    for lst in resolved:
        if isinstance(lst, str):
            return RecommendationReading(provenance="unreadable", from_json=from_json, reply_cut=cut, reader=reader, reason=lst)
    recommended, avoided = resolved  # type: ignore[assignment]
    recommended = [
        Recommendation(treatment=strip_markdown(r.treatment).strip(), rationale=strip_markdown(r.rationale).strip()) for r in recommended
    ]
    avoided = [
        Recommendation(treatment=strip_markdown(r.treatment).strip(), rationale=strip_markdown(r.rationale).strip()) for r in avoided
    ]
    if any(is_placeholder(r.treatment) for r in recommended):
        return RecommendationReading(provenance="invalid", invalid="placeholder_echo", from_json=from_json, reply_cut=cut, reader=reader)
    avoided = [r for r in avoided if not is_placeholder(r.treatment)]
    if len(recommended) > 3 and len({_key(r.treatment) for r in recommended}) * 3 <= len(recommended):
        return RecommendationReading(
            provenance="invalid", invalid="degenerate_repetition", from_json=from_json, reply_cut=cut, reader=reader
        )
    if not recommended and not avoided:
        return RecommendationReading(provenance="unreadable", from_json=from_json, reply_cut=cut, reader=reader,
                                     reason="the reading names no option")
    both = {_key(r.treatment) for r in recommended} & {_key(r.treatment) for r in avoided}
    # One option in both lists is two answers about it, whatever the format (issue 37): a conflict, counted apart.
    if both:
        shown = [f"recommended {sorted(both)[0][:60]!r}", f"not recommended {sorted(both)[0][:60]!r}"]
        return RecommendationReading(provenance="unreadable", from_json=from_json, reply_cut=cut, reader=reader,
                                     reason=conflict_reason(shown), conflict=shown)
    capped_recommended, cut_a = _cap(recommended)
    capped_avoided, cut_b = _cap(avoided)
    return RecommendationReading(
        recommendations=capped_recommended, not_recommended=capped_avoided, provenance=provenance,
        truncated=cut_a or cut_b, from_json=from_json, reply_cut=cut, reader=reader, contradictory=sorted(both),
    )


class _QuotedItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    treatment: str = Field(description="The option as the reply names it, copied from the reply.")
    quote: str = Field(description="The exact words of the reply that state this option and whether it is recommended or avoided.")
    rationale: str = Field(default="", description="The reply's reason for it, copied from the reply (empty when none is given).")


class _ReaderReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    recommendations: list[_QuotedItem] = Field(default_factory=list)
    not_recommended: list[_QuotedItem] = Field(default_factory=list)
    unreadable: bool = False
    reason: str = ""


CSS_READER = ReaderTask(
    name="css recommendations",
    instructions=(
        "The reply gives tumor-board treatment recommendations. Record, in the reply's order of preference, each "
        "option the reply recommends under \"recommendations\" and each option it says to avoid or not to give under "
        "\"not_recommended\"; each with \"treatment\" (the option's name as the reply writes it) and \"quote\". "
        "Options the reply only mentions, discusses, considers or rejects while thinking aloud are not "
        "recommendations; when the reply revises its answer, record the revised one."
    ),
    schema=ResponseSchema(name="css_reading", json_schema=json_schema(_ReaderReply)),
)


def verify_css_reading(data: dict[str, Any], final: str, conflict: bool = False) -> tuple[list[Recommendation], list[Recommendation], str]:
    """The reader's reading checked against the reply's structure: (recommended, avoided, why rejected or "").

    Every quote must be a whole-token span of the final answer that contains its treatment, at a place whose
    polarity is the list's (`clinical_cf.replies.verify_quote`: sentence, headings, JSON keys, table column and
    row, checkbox), not hedged and not followed by a revision; with `conflict`, at the revision the reply marks.
    A "none"-like item is no item.
    """
    lists = [quoted_items(data, "recommendations"), quoted_items(data, "not_recommended")]
    if lists[0] is None or lists[1] is None:
        return [], [], "reader reply does not have the reading's lists"
    out: list[list[Recommendation]] = [[], []]
    for index, entries in enumerate(lists):
        for entry in entries:  # type: ignore[union-attr]
            treatment, quote = entry.get("treatment"), entry.get("quote")
            if not isinstance(treatment, str) or not treatment.strip():
                return [], [], "reader item without a treatment"
            if none_like(treatment):
                continue
            why = verify_quote(quote, final, treatment, "positive" if index == 0 else "negative", revision=conflict)
            if why:
                return [], [], f"quote for {'recommended' if index == 0 else 'avoided'} {treatment[:60]!r}: {why}"
            rationale = entry.get("rationale")
            # A rationale is kept only when it is the reply's own words (it reaches the judge as data).
            kept = rationale.strip() if isinstance(rationale, str) and rationale.strip() and grounded(rationale, final) else ""
            out[index].append(Recommendation(treatment=treatment.strip(), rationale=kept))
    if not out[0] and not out[1]:
        return [], [], "reader found no option"
    return out[0], out[1], ""


async def read_recommendations_with_reader(text: str, reader: Any | None, stop_reason: str | None = None,
                                          max_tokens: int | None = None) -> RecommendationReading:
    """`read_recommendations`, then step (d) when it read nothing: the lists two independent readers agree on
    (`clinical_cf.replies.agreed_reading`; told when the reply's answers conflict, and then held to the revision
    the reply marks), each reading through the structural checks of `verify_css_reading`."""
    reading = read_recommendations(text, stop_reason, max_tokens)
    if not reading.needs_reader or reader is None:
        return reading
    final = final_answer(text)
    conflict = is_conflict(reading.reason)

    def verify(data: dict[str, Any]) -> tuple[Any, str]:
        recommended, avoided, rejected = verify_css_reading(data, final, conflict)
        return (recommended, avoided), rejected

    agreed = await agreed_reading(reader, CSS_READER, final, conflict=reading.reason if conflict else None, verify=verify, same=_same_lists)
    if agreed.value is None:
        return reading.model_copy(update={"reason": (reading.reason + "; " if conflict else "") + agreed.reason, "reader": agreed.record})
    recommended, avoided = agreed.value
    return _finish(recommended, avoided, "agreement", reading.from_json, reading.reply_cut, reader=agreed.record, final=final)


def _same_lists(a: tuple[list[Recommendation], list[Recommendation]], b: tuple[list[Recommendation], list[Recommendation]]) -> bool:
    """Two readings name the same options in the same lists (order, case, markup and spacing aside)."""
    return all(sorted(_key(strip_markdown(r.treatment)) for r in x) == sorted(_key(strip_markdown(r.treatment)) for r in y)
               for x, y in zip(a, b, strict=True))


def parse_recommendations(text: str) -> tuple[list[Recommendation], list[Recommendation], bool]:
    """(recommended, not recommended, read from JSON) for callers that only need the lists."""
    reading = read_recommendations(text)
    return reading.recommendations, reading.not_recommended, reading.from_json


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
    """An arm's result from its final reply, read with `read_recommendations` (steps a-c only)."""
    return _arm(read_recommendations(raw), raw, summary, trace)


async def read_arm(raw: str, summary: str = "", trace: AgentTrace | None = None, reader: Model | None = None,
                   stop_reason: str | None = None, max_tokens: int | None = None) -> ArmResult:
    """An arm's result read in the full order, the reader role (step d) included when `reader` is given; a reply
    whose `stop_reason` says the provider cut or filtered it is unreadable (`truncated` / `filtered`)."""
    return _arm(await read_recommendations_with_reader(raw, reader, stop_reason, max_tokens), raw, summary, trace)


def _arm(reading: RecommendationReading, raw: str, summary: str, trace: AgentTrace | None) -> ArmResult:
    return ArmResult(
        summary=summary,
        raw=raw,
        recommendations=reading.recommendations,
        not_recommended=reading.not_recommended,
        parsed=reading.from_json,
        provenance=reading.provenance,
        invalid=reading.invalid,
        truncated=reading.truncated,
        unreadable_reason=reading.reason if reading.provenance == "unreadable" else "",
        reply_cut=reading.reply_cut,
        reader=reading.reader,
        contradictory=reading.contradictory,
        conflict=reading.conflict,
        max_tokens=reading.max_tokens,
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
    """One arm as a judge sees it: a delimited data block of the arm's items in one canonical form.

    One shape whatever the reply's format (issue 37): each item is its treatment only, one numbered line,
    markdown, invisible characters and role tokens removed, whitespace and trailing punctuation normalised,
    capped. Rationales are never shown: a JSON reply carries one, an answer line or a list does not, so
    showing them made the same treatments look different to the judge (controls read in two formats came
    out "moved"); the CSS rule compares what is recommended, not why; and a rationale is free model text,
    room for an injection. An unreadable reply is shown as capped raw text; the whole block is capped too.
    Invalid and unreadable arms never reach a judge (the scorer unscores them first).
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
    return f"{i}. {canonical_treatment(r.treatment)}"


def canonical_treatment(treatment: str) -> str:
    """An item's treatment as the judge sees it, the same whatever format it was read from: markdown and
    enclosing quotes removed, whitespace collapsed, trailing punctuation dropped, made inert and capped."""
    text = normalise_for_judge(strip_markdown(treatment), MAX_TREATMENT_CHARS)
    return text.strip(" \t\"'“”‘’").rstrip(" .;,:").strip() or "(unnamed)"
