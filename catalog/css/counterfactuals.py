"""Frozen counterfactual sets: build, verify, lock, review, load.

A regex pattern reaches only the wordings it was written for; on a user's own packets an
`editor` model role can make the pre-registered edit instead (each intervention's
`edit_instruction`). Nothing an editor returns is trusted: an edit is accepted only when

1. the reply is a JSON object of known section names (malformed -> rejected),
2. it changes something, and only sections the intervention may touch (`edit_sections`);
   every other section is byte-identical,
3. the "after" form of the fact is present (`expect_after`) and the residue check finds no
   line that still asserts or presupposes the original fact,
4. the change is bounded in size (an editor that rewrites the chart is rejected),
5. optionally, a `checker` model role answers that nothing still implies the original fact.

A rejected edit is retried with the reasons, then dropped with them. Accepted
counterfactuals are written to `counterfactuals.jsonl` with a lock (its SHA-256) and a
review page (`review.html`) for a clinician to approve before any model is evaluated;
`-T counterfactuals=FILE` on every CSS task then uses those texts verbatim, so every model
sees the same counterfactual. Regex and structured mode write the same format
(`--editor regex|structured`), so any run can be frozen and reviewed.

Review counts (issue 22). The review page lets a clinician approve, reject and comment on
each entry (word-level diffs) and saves the decisions as a JSONL file;
`clinical-cf counterfactuals review --decisions FILE` writes them into the set and re-locks
it, so the lock covers the decisions. A task given a frozen set (`frozen_for_task`) verifies
every entry it uses as a regex-mode tuple is verified at build (no-op, empty or truncated
packet, family or intervention mismatch, a baseline that is not the case's own packet,
residue: refused with the entry id), never scores a rejected entry, and refuses unreviewed
ones unless `-T unreviewed=allow`, in which case each such sample says so. Every sample
records how far its counterfactual was verified.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model
from jinja2 import Environment, FileSystemLoader
from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_cf.catalog.css.expand import CSSTuple, expand_tuples
from clinical_cf.catalog.css.interventions import Catalog, Intervention
from clinical_cf.catalog.css.mutate import Packet
from clinical_cf.catalog.css.residue import find_residue, implication_hits
from clinical_cf.catalog.css.schema import SECTIONS, Case, SectionName
from clinical_cf.catalog.css.sentences import statements
from clinical_cf.core.atomic import write_text_atomic
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_jsonl
from clinical_cf.core.locking import check_lock, exclusive, write_lock

EDITOR_SYSTEM = """You edit synthetic oncology tumor-board packets to make one pre-registered \
counterfactual change for a research benchmark. Make exactly the change described, everywhere the packet \
states or presupposes the original fact, and nothing else. Keep the chart's style, wording and every \
unrelated detail. Do not write a new plan or recommendation: remove plans that rest on the original fact."""

EDITOR_PROMPT = """THE CHANGE (pre-registered, {intervention_id}): {title}

WHAT TO DO:
{instruction}

WHAT MUST NO LONGER BE STATED OR PRESUPPOSED anywhere in the packet (history dated before the change may stay):
{no_longer}

WHAT FOLLOWS FROM THE CHANGE (for your understanding; do not write it into the packet): {expected_change}

Sections you may change: {sections}.

PACKET (sections as JSON):
{packet}

Reply with one JSON object and nothing else: {{"sections": {{"<section name>": "<full new text of that section>"}}}}, \
listing only the sections you changed."""

RETRY_PROMPT = """Your previous edit was rejected: {reasons}
Try again on the original packet. Reply with the JSON object only."""

CHECKER_PROMPT = """A synthetic tumor-board packet was edited so that this is now true: {after}
The original fact, which must no longer be stated or presupposed: {fact}
Dated history written before the change is not a contradiction.

List EVERY statement of the edited packet that still states or presupposes the original fact (a plan, \
a finding, a stage, a drug, a booking, a follow-up that only makes sense under the original fact). Quote \
each exactly as it is written in the packet.

PACKET:
{packet}

Reply with one JSON object and nothing else: {{"surviving": [{{"quote": "<exact text from the packet>", \
"why": "<what it presupposes>"}}]}} with an empty list when nothing survives."""


def edit_description(intervention: Intervention) -> str:
    """What must no longer be stated: each residue implication's fact and why (the catalog's pre-registered text)."""
    lines = []
    for name in intervention.residue:
        implication = intervention.implication(name)
        lines.append(f"- {implication.fact} ({implication.rationale})")
    return "\n".join(lines) or "- the original form of the fact"


SIZE_ALLOWANCE_CHARS = 900
"""Characters an edit may change beyond `SIZE_FRACTION` of the packet (room for one inserted note)."""
SIZE_FRACTION = 0.25


class FrozenCounterfactual(BaseModel):
    """One line of a counterfactuals.jsonl file."""

    model_config = ConfigDict(extra="forbid")

    tuple_id: str
    case_id: str
    intervention_id: str
    family: str
    editor: str = Field(description="'regex', 'structured' or the editor model's name.")
    checker: str | None = None
    attempts: int = Field(ge=1)
    baseline_sha256: str = Field(description="SHA-256 of the case's packet when frozen; a changed case is refused.")
    baseline_sections: dict[SectionName, str]
    counterfactual_sections: dict[SectionName, str]
    order: list[SectionName] = Field(default_factory=lambda: list(SECTIONS))
    verdict: Literal["complete", "unchecked"] = Field(
        default="unchecked",
        description="'complete' only when a reader said so: the checker role listed nothing, the structured route derived the "
        "edit from the record, or a clinician approved this exact text; otherwise 'unchecked', whatever the lexical residue "
        "check found (it cannot certify free text). Derived on every load (`completeness`), never taken from the file.",
    )
    approved: bool = Field(default=False, description="Set by the reviewing clinician.")
    decision: Literal["approved", "rejected"] | None = Field(
        default=None, description="The reviewing clinician's decision (`counterfactuals review --decisions`); None: not reviewed."
    )
    reviewer: str | None = None
    comment: str | None = Field(default=None, max_length=4000)
    approved_sha256: str | None = Field(
        default=None,
        description="content_sha256 of the entry the clinician decided on; a later change to the text drops the decision.",
    )
    draft: bool = Field(
        default=False, description="A regex edit of free text (a case without a structured record): a draft to start a review from."
    )
    suspects: list[dict[str, str]] = Field(
        default_factory=list,
        description="Statements the deterministic checks or the checker role suspect still state the original fact "
        "(section, quote, source); highlighted on the review page.",
    )

    @model_validator(mode="after")
    def _decision_agrees(self) -> FrozenCounterfactual:
        if self.decision is not None and self.approved != (self.decision == "approved"):
            raise ValueError(f"approved={self.approved} disagrees with decision '{self.decision}'")
        # The verdict is derived, not stored: a file that says "complete" for a regex draft nobody checked is not believed.
        object.__setattr__(self, "verdict", "complete" if self.completeness.startswith("complete") else "unchecked")
        return self

    @property
    def completeness(self) -> str:
        """Who says this counterfactual no longer states the original fact: the reviewer, the checker role, the record.

        'unchecked' when nobody did: the lexical residue check passing is not completeness (issue 35).
        """
        if self.review == "approved":
            return "complete (clinician" + (f" {self.reviewer})" if self.reviewer else ")")
        if self.editor == "structured":
            return "complete (structured: derived from the record)"
        if self.checker:
            return f"complete (checker role {self.checker} listed nothing)"
        return "unchecked: no checker role ran; the reviewer decides"

    @property
    def content_sha256(self) -> str:
        """SHA-256 of what a clinician approves: the pair, the baseline and the counterfactual text, the section order."""
        content = {
            "tuple_id": self.tuple_id, "case_id": self.case_id, "intervention_id": self.intervention_id, "family": self.family,
            "baseline_sha256": self.baseline_sha256, "baseline_sections": self.baseline_sections,
            "counterfactual_sections": self.counterfactual_sections, "order": list(self.order),
        }
        return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()

    @property
    def decision_stale(self) -> bool:
        """A decision recorded for other text (the entry changed after review, or the decision carries no hash)."""
        return self.decision is not None and self.approved_sha256 != self.content_sha256

    @property
    def review(self) -> Literal["approved", "rejected", "unreviewed", "stale"]:
        if self.decision_stale:
            return "stale"
        return "approved" if self.approved else ("rejected" if self.decision == "rejected" else "unreviewed")

    @property
    def verification(self) -> str:
        """How far this counterfactual was verified: deterministic checks, the checker role, a clinician."""
        levels = ["regex draft: deterministic checks" if self.draft else "deterministic checks"]
        if self.checker:
            levels.append(f"checker role ({self.checker})")
        if self.review == "approved":
            levels.append("clinician" + (f" ({self.reviewer})" if self.reviewer else ""))
        return " + ".join(levels)


class ReviewDecision(BaseModel):
    """One line of the decisions file the review page saves."""

    model_config = ConfigDict(extra="forbid")

    tuple_id: str
    decision: Literal["approved", "rejected"]
    comment: str | None = Field(default=None, max_length=4000)
    reviewer: str | None = Field(default=None, max_length=200)
    content_sha256: str | None = Field(
        default=None, description="The entry's content_sha256 shown on the review page: the decision is for that exact text."
    )


GENERATED_REVIEW = {
    "counterfactual_review": "not reviewed (generated in this run)",
    "counterfactual_verification": "deterministic checks",
}
"""Sample metadata of a counterfactual generated at run time (regex or structured mode)."""


@dataclass
class Rejected:
    tuple_id: str
    reasons: list[str]
    attempts: int


@dataclass
class BuildResult:
    accepted: list[FrozenCounterfactual] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def packet_sha256(case: Case) -> str:
    return hashlib.sha256(case.packet.encode("utf-8")).hexdigest()


def parse_edit(reply: str) -> dict[str, str]:
    """The sections of an editor reply; raises ValueError with a reason when it is malformed."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if not match:
        raise ValueError("reply contains no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as ex:
        raise ValueError(f"reply is not valid JSON ({ex.msg})") from None
    sections = data.get("sections") if isinstance(data, dict) else None
    if not isinstance(sections, dict) or not sections:
        raise ValueError("reply has no non-empty 'sections' object")
    unknown = [k for k in sections if k not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown section names: {', '.join(map(str, unknown))}")
    if not all(isinstance(v, str) for v in sections.values()):
        raise ValueError("every section value must be a string")
    return {k: v for k, v in sections.items()}


def changed_chars(before: str, after: str) -> int:
    ops = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def verify_edit(case: Case, intervention: Intervention, edited: dict[str, str]) -> list[str]:
    """Deterministic checks of an edit (see the module docstring); empty when it passes."""
    problems: list[str] = []
    baseline = dict(case.sections)
    allowed = set(intervention.edit_sections or SECTIONS)
    touched = [name for name, text in edited.items() if text != baseline.get(name, "")]
    outside = [name for name in touched if name not in allowed]
    if outside:
        problems.append(f"changed sections the instruction does not concern: {', '.join(outside)}")
    if not touched:
        problems.append("the edit changed nothing")
    sections = {**baseline, **edited}
    text = "\n".join(sections[name] for name in SECTIONS)
    if intervention.expect_after and not any(re.search(p, text) for p in intervention.expect_after):
        problems.append("the changed fact's new form is not stated anywhere")
    for hit in find_residue(sections, intervention, case.board_date, case.cancer_type)[:5]:
        problems.append(f"residue ({hit.implication}/{hit.kind}) in {hit.section}: {hit.line[:160]}")
    budget = SIZE_ALLOWANCE_CHARS + SIZE_FRACTION * len(case.packet)
    size = sum(changed_chars(baseline.get(name, ""), edited[name]) for name in touched)
    if size > budget:
        problems.append(f"edit too large: {size} characters changed (limit {int(budget)})")
    return problems


@dataclass
class CheckerVerdict:
    """The checker role's reading: surviving statements whose quotes occur in the packet, and those that do not."""

    surviving: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    unreadable: str | None = None

    @property
    def reasons(self) -> list[str]:
        if self.unreadable:
            return [f"checker reply unreadable ({self.unreadable})"]
        out = [f"checker: still states the original fact: '{q[:160]}'" for q in self.surviving]
        out += [f"checker quoted text that is not in the packet (reply not trusted): '{q[:120]}'" for q in self.unverified]
        return out


def quote_in(quote: str, text: str) -> bool:
    """A checker's quote occurs in the text (whitespace and case aside): a quote is checked, never trusted."""
    needle = " ".join(quote.split()).lower().strip(" .;,")
    return bool(needle) and needle in " ".join(text.split()).lower()


def read_checker_reply(reply: str, packet: str) -> CheckerVerdict:
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("surviving"), list):
        return CheckerVerdict(unreadable="no JSON object with a 'surviving' list")
    verdict = CheckerVerdict()
    for item in data["surviving"][:50]:
        quote = item.get("quote") if isinstance(item, dict) else item if isinstance(item, str) else None
        if not isinstance(quote, str) or not quote.strip():
            return CheckerVerdict(unreadable="a surviving statement without a quote")
        (verdict.surviving if quote_in(quote, packet) else verdict.unverified).append(quote.strip())
    return verdict


async def _check(checker: Model, case: Case, intervention: Intervention, sections: dict[str, str]) -> CheckerVerdict:
    facts = "; ".join(intervention.implication(n).fact for n in intervention.residue) or intervention.title
    packet = Packet(sections).text
    prompt = CHECKER_PROMPT.format(after=intervention.title, fact=facts, packet=packet)
    reply = (await checker.generate([ChatMessageUser(content=prompt)], config=GenerateConfig(temperature=0.0))).completion
    return read_checker_reply(reply, packet)


def editor_messages(case: Case, intervention: Intervention, instruction: str, sections: dict[str, str] | None = None) -> list:
    """The editor role's messages: the pre-registered description of the change and the packet (as JSON sections)."""
    allowed = intervention.edit_sections or list(SECTIONS)
    return [
        ChatMessageSystem(content=EDITOR_SYSTEM),
        ChatMessageUser(
            content=EDITOR_PROMPT.format(
                intervention_id=intervention.id, title=intervention.title, instruction=instruction,
                no_longer=edit_description(intervention), expected_change=intervention.expected_change,
                sections=", ".join(allowed), packet=json.dumps(dict(sections or case.sections), indent=1),
            )
        ),
    ]


async def edit_with_model(
    case: Case,
    intervention: Intervention,
    editor: Model,
    checker: Model | None = None,
    retries: int = 1,
    max_tokens: int = 4096,
) -> FrozenCounterfactual | Rejected:
    """Ask the editor for the intervention's edit, verify it, retry once with the reasons, or reject."""
    tuple_id = f"{case.case_id}:{intervention.id}"
    instruction = intervention.edit_instruction_for(case)
    if instruction is None:
        return Rejected(tuple_id, ["intervention has no edit_instruction"], 0)
    messages: list = editor_messages(case, intervention, instruction)
    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens)
    reasons: list[str] = []
    for attempt in range(1, retries + 2):
        output = await editor.generate(messages, config=config)
        reply = output.completion
        try:
            edited = parse_edit(reply)
            reasons = verify_edit(case, intervention, edited)
        except ValueError as ex:
            edited, reasons = {}, [f"malformed reply: {ex}"]
        if not reasons and checker is not None:
            reasons = (await _check(checker, case, intervention, {**case.sections, **edited})).reasons
        if not reasons:
            entry = FrozenCounterfactual(
                tuple_id=tuple_id,
                case_id=case.case_id,
                intervention_id=intervention.id,
                family=intervention.family,
                editor=str(editor),
                checker=str(checker) if checker is not None else None,
                attempts=attempt,
                baseline_sha256=packet_sha256(case),
                baseline_sections=dict(case.sections),
                counterfactual_sections={**case.sections, **edited},
            )
            # A model's edit of free text is scored only once a clinician approves it; the page highlights what may survive.
            return entry.model_copy(update={"suspects": suspect_statements(entry, intervention, case)})
        messages = [*messages, output.message, ChatMessageUser(content=RETRY_PROMPT.format(reasons="; ".join(reasons)))]
    return Rejected(tuple_id, reasons, retries + 1)


def freeze_tuple(t: CSSTuple, editor: str) -> FrozenCounterfactual:
    """A regex- or structured-mode tuple in the frozen format (a regex edit of a case without a record is a draft)."""
    entry = FrozenCounterfactual(
        tuple_id=t.id,
        case_id=t.case.case_id,
        intervention_id=t.intervention.id,
        family=t.intervention.family,
        editor=editor,
        attempts=1,
        baseline_sha256=packet_sha256(t.case),
        baseline_sections=dict(t.baseline.sections),
        counterfactual_sections=dict(t.counterfactual.sections),
        order=list(t.counterfactual.order),
        draft=editor == "regex" and t.case.record is None,
    )
    return entry.model_copy(update={"suspects": suspect_statements(entry, t.intervention, t.case)})


async def build_counterfactuals(
    cases: list[Case],
    catalog: Catalog,
    editor: str | Model,
    checker: Model | None = None,
    families: str = "ABCDEN",
    retries: int = 1,
    max_tokens: int = 4096,
    limit: int | None = None,
) -> BuildResult:
    """Frozen counterfactuals for every applicable (case, intervention), by the given editor."""
    result = BuildResult()
    if editor in ("regex", "structured"):
        expansion = expand_tuples(cases, catalog, editor, families=families)  # type: ignore[arg-type]
        # What was asked for: the first `limit` applicable (case, intervention) pairs, so the
        # rejection counts cover the same pairs as the accepted entries.
        wanted_families = set(families)
        asked = [
            f"{case.case_id}:{item.id}"
            for case in cases
            for item in catalog.interventions
            if item.family in wanted_families and item.applies_to.matches(case)
        ][:limit]
        keep = set(asked)
        result.accepted = [freeze_tuple(t, str(editor)) for t in expansion.tuples if t.id in keep]
        result.rejected = [Rejected(t.id, [f"residue: {h.line[:160]}" for h in t.residue], 1) for t in expansion.dropped if t.id in keep]
        for iid, counts in expansion.counts.items():
            result.rejected += [
                Rejected(f"{r.split(':')[0]}:{iid}", [f"incoherent: {r}"], 1)
                for r in counts.incoherent_reasons
                if f"{r.split(':')[0]}:{iid}" in keep
            ]
        return result
    assert isinstance(editor, Model)
    wanted = set(families)
    pairs = [
        (case, item)
        for case in cases
        for item in catalog.interventions
        if item.family in wanted and item.edit_instruction and item.applies_to.matches(case)
    ][:limit]
    for case, item in pairs:
        outcome = await edit_with_model(case, item, editor, checker, retries, max_tokens)
        (result.accepted if isinstance(outcome, FrozenCounterfactual) else result.rejected).append(outcome)  # type: ignore[arg-type]
    return result


def write_counterfactuals(result: BuildResult, out_dir: str | Path) -> dict[str, Path]:
    """counterfactuals.jsonl + its lock, rejected.jsonl and review.html in `out_dir`."""

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "counterfactuals.jsonl"
    write_text_atomic(path, "".join(e.model_dump_json() + "\n" for e in result.accepted))
    rejected = out / "rejected.jsonl"
    write_text_atomic(
        rejected,
        "".join(json.dumps({"tuple_id": r.tuple_id, "attempts": r.attempts, "reasons": r.reasons}) + "\n" for r in result.rejected),
    )
    lock = write_lock(path)
    review = out / "review.html"
    write_text_atomic(review, render_review(result))
    return {"counterfactuals": path, "lock": lock, "rejected": rejected, "review": review}


_TOKEN = re.compile(r"\s+|[^\s]+")


def _word_diff(old: str, new: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(old, new) as segments (kind, text): kind 'same', 'del' or 'ins', word by word."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    left: list[tuple[str, str]] = []
    right: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(("same", "".join(a[i1:i2])))
            right.append(("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            right.append(("ins", "".join(b[j1:j2])))
    return left, right


def _diff_rows(before: str, after: str) -> list[tuple[str, list[tuple[str, str]], list[tuple[str, str]]]]:
    """Changed lines side by side, each as word-level segments: a one-word change in a long line shows as that word."""
    rows = []
    old_lines, new_lines = before.split("\n"), after.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        old, new = old_lines[i1:i2], new_lines[j1:j2]
        for k in range(max(len(old), len(new))):
            o = old[k] if k < len(old) else ""
            n = new[k] if k < len(new) else ""
            if tag == "replace" and o and n:
                left, right = _word_diff(o, n)
            else:
                left, right = ([("del", o)] if o else []), ([("ins", n)] if n else [])
            rows.append((tag, left, right))
    return rows


def render_review(result: BuildResult) -> str:
    """The clinician's review page: per counterfactual, the changed lines side by side."""

    # Autoescape on: packet text and model replies go into the page.
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True)
    entries = []
    for e in result.accepted:
        sections = []
        for name in SECTIONS:
            rows = _diff_rows(e.baseline_sections.get(name, ""), e.counterfactual_sections.get(name, ""))
            if rows:
                sections.append({"name": name, "rows": rows})
        entries.append({"entry": e, "sections": sections, "sha": e.content_sha256})
    return env.get_template("review.html.j2").render(entries=entries, rejected=result.rejected)


def apply_decisions(path: str | Path, decisions_path: str | Path) -> tuple[list[FrozenCounterfactual], dict[str, int]]:
    """Write a review's decisions into a frozen set and re-lock it (the lock then covers them).

    Every decision must name an entry of the set; a problem anywhere is reported for the
    whole file at once, and nothing is written. The whole read-modify-write holds the set
    (`core.locking.exclusive`): a second review of it waits, then stops naming the first, so
    no review that reports its decisions has them overwritten by another.
    """

    with exclusive(path, "counterfactuals review"):
        return _apply_decisions(Path(path), decisions_path)


def _apply_decisions(path: Path, decisions_path: str | Path) -> tuple[list[FrozenCounterfactual], dict[str, int]]:
    # A set that does not match its lock (edited after the build, or its lock deleted) is refused before any
    # decision is recorded: re-locking it here would approve text nobody froze.
    check_lock(path)
    entries = load_jsonl(path, FrozenCounterfactual, "tuple_id")
    decisions = load_jsonl(decisions_path, ReviewDecision, "tuple_id")
    by_id = {e.tuple_id: e for e in entries}
    unknown = [d.tuple_id for d in decisions if d.tuple_id not in by_id]
    if unknown:
        raise CatalogError(
            decisions_path, f"{len(unknown)} decision(s) name no entry of {path.name}: {', '.join(unknown[:5])}", field="tuple_id"
        )
    unbound = [d.tuple_id for d in decisions if d.content_sha256 is None]
    if unbound:
        raise CatalogError(
            decisions_path,
            f"{len(unbound)} decision(s) carry no content_sha256 (first: {unbound[0]}); save them from review.html, which "
            "binds each decision to the text shown",
            field="content_sha256",
        )
    other = [d.tuple_id for d in decisions if d.content_sha256 != by_id[d.tuple_id].content_sha256]
    if other:
        raise CatalogError(
            decisions_path,
            f"{len(other)} decision(s) were made on other text than the entry now holds (first: {other[0]}): the entry changed "
            "after the review page was written; review it again",
            field="content_sha256",
        )
    for d in decisions:
        by_id[d.tuple_id] = by_id[d.tuple_id].model_copy(
            update={
                "approved": d.decision == "approved", "decision": d.decision, "comment": d.comment, "reviewer": d.reviewer,
                "approved_sha256": d.content_sha256,
            }
        )
    updated = [by_id[e.tuple_id] for e in entries]
    write_set_and_lock(path, updated)
    counts = review_counts(updated)
    return updated, counts


def review_counts(entries: list[FrozenCounterfactual]) -> dict[str, int]:
    counts = {"approved": 0, "rejected": 0, "unreviewed": 0, "stale": 0}
    for e in entries:
        counts[e.review] += 1
    return counts


def write_set_and_lock(path: Path, entries: list[FrozenCounterfactual]) -> None:
    """The set and its lock, each replaced whole (temp file + rename); a failure leaves the old pair.

    Between the two renames a crash leaves a set that does not match its lock: refused on load, never accepted.
    """

    write_text_atomic(path, "".join(e.model_dump_json() + "\n" for e in entries))
    write_lock(path)


TRUNCATED_FRACTION = 0.25
"""A counterfactual packet shorter than this fraction of its baseline is refused as truncated (a removed
resection can take half of a short one-section packet with it; three quarters is no edit)."""


def verify_frozen_entry(entry: FrozenCounterfactual, case: Case, catalog: Catalog, path: Path) -> CSSTuple:
    """The entry as a tuple, verified as a regex-mode tuple is at build; a CatalogError names the entry otherwise."""

    def refuse(message: str, field: str | None = None) -> CatalogError:
        return CatalogError(path, message, entry=entry.tuple_id, field=field)

    try:
        intervention = catalog.by_id(entry.intervention_id)
    except KeyError:
        raise refuse("intervention not in the catalog", "intervention_id") from None
    if entry.family != intervention.family:
        raise refuse(f"labelled family {entry.family}, but {intervention.id} is family {intervention.family}", "family")
    if entry.tuple_id != f"{case.case_id}:{intervention.id}":
        raise refuse(f"tuple_id does not name case '{case.case_id}' and intervention '{intervention.id}'", "tuple_id")
    if entry.baseline_sections != dict(case.sections) or packet_sha256(case) != entry.baseline_sha256:
        raise refuse("the baseline is not this case's own packet (the case changed, or the baseline was rewritten)", "baseline_sections")
    missing = [name for name in SECTIONS if name not in entry.counterfactual_sections]
    if missing:
        raise refuse(f"the counterfactual lacks {len(missing)} of the ten sections: {', '.join(missing)}", "counterfactual_sections")
    baseline, counterfactual = Packet(dict(entry.baseline_sections)), Packet(dict(entry.counterfactual_sections), tuple(entry.order))
    if not "".join(entry.counterfactual_sections.values()).strip():
        raise refuse("the counterfactual packet is empty", "counterfactual_sections")
    allowed = set(intervention.edit_sections or SECTIONS)
    emptied = [
        name for name in SECTIONS
        if entry.baseline_sections.get(name, "").strip() and not entry.counterfactual_sections[name].strip() and name not in allowed
    ]
    if emptied or len(counterfactual.text) < TRUNCATED_FRACTION * len(baseline.text):
        why = f"sections the intervention does not concern are empty: {', '.join(emptied)}" if emptied else (
            f"{len(counterfactual.text)} characters against its baseline's {len(baseline.text)}"
        )
        raise refuse(f"the counterfactual is truncated ({why})", "counterfactual_sections")
    if counterfactual == baseline or counterfactual.same_content(baseline):
        raise refuse("the counterfactual is identical to the baseline (a no-op)", "counterfactual_sections")
    if not intervention.applies_to.matches(case):
        raise refuse(f"{intervention.id} does not apply to this case (its applicability filter excludes it)", "intervention_id")
    if intervention.family != "N":
        hits = find_residue(dict(entry.counterfactual_sections), intervention, case.board_date, case.cancer_type)
        if hits:
            raise refuse(f"residue in {hits[0].section}: {hits[0].line[:160]}", "counterfactual_sections")
        text = counterfactual.text
        if intervention.expect_after and not any(re.search(p, text) for p in intervention.expect_after):
            raise refuse("the changed fact's new form is not stated anywhere", "counterfactual_sections")
    return CSSTuple(case, intervention, baseline, counterfactual)


Unreviewed = Literal["refuse", "allow"]

UNREVIEWED_DRAFT = {
    "counterfactual_review": "unreviewed regex draft (scored with -T unreviewed=allow)",
    "counterfactual_verification": "regex draft: deterministic checks",
}
"""Sample metadata of a regex edit of free text (a case without a record) generated at run time and scored by consent."""


def runtime_drafts(tuples: list[CSSTuple], unreviewed: Unreviewed, path: str | Path) -> dict[str, dict]:
    """Refuse regex edits of free text generated at run time unless `-T unreviewed=allow`; then mark each sample.

    A case without a structured record has only its text: a regex edit of it is a draft (no pattern list
    certifies free text complete), so it is scored only from a reviewed frozen set (`-T counterfactuals=`), or
    by the user's explicit consent. Negative controls (family N: date format, section order, an unrelated
    note) change no fact and are not drafts. Returns the metadata by tuple id.
    """
    drafts = [t for t in tuples if t.case.record is None and t.intervention.family != "N"]
    if drafts and unreviewed != "allow":
        raise CatalogError(
            path,
            f"{len(drafts)} counterfactuals of {len({t.case.case_id for t in drafts})} case(s) without a structured record would be "
            f"regex edits of free text, which are drafts, never scored as verified (first: {drafts[0].id}). Freeze and review them: "
            "`clinical-cf counterfactuals build --cases FILE --editor MODEL --checker MODEL --out cf/`, approve in "
            "cf/review.html, then -T counterfactuals=cf/counterfactuals.jsonl; or pass -T unreviewed=allow to score the drafts "
            "marked as unreviewed.",
            field="cases",
        )
    return {t.id: UNREVIEWED_DRAFT for t in drafts}


def frozen_for_task(
    entries: list[FrozenCounterfactual],
    cases: list[Case],
    catalog: Catalog,
    families: list[str],
    path: Path,
    unreviewed: Unreviewed = "refuse",
) -> tuple[list[CSSTuple], dict[str, dict], dict[str, int]]:
    """The frozen entries a CSS task scores, each verified, with per-sample review metadata.

    Rejected entries are never scored. Unreviewed ones are refused (one error naming how
    many and which) unless `unreviewed="allow"`, when their samples say they were not
    reviewed. Returns (tuples, metadata by tuple id, counts).
    """
    by_id = {c.case_id: c for c in cases}
    wanted = [e for e in entries if e.family in families and e.case_id in by_id]
    counts = review_counts(wanted)
    stale = [e.tuple_id for e in wanted if e.review == "stale"]
    if stale:
        raise CatalogError(
            path,
            f"{len(stale)} counterfactual(s) carry a decision made on other text (first: {', '.join(stale[:3])}): the entry changed "
            "after review (or its decision has no content hash), so the approval no longer holds. Review them again.",
            field="approved_sha256",
        )
    pending = [e.tuple_id for e in wanted if e.review == "unreviewed"]
    if pending and unreviewed != "allow":
        raise CatalogError(
            path,
            f"{len(pending)} of {len(wanted)} counterfactuals used here are not approved by a reviewer "
            f"(first: {', '.join(pending[:3])}). Review them (review.html, then `clinical-cf counterfactuals review "
            "--decisions FILE`), or pass -T unreviewed=allow to score them marked as unreviewed.",
            field="approved",
        )
    tuples, metadata = [], {}
    for e in wanted:
        if e.review == "rejected":
            continue
        tuples.append(verify_frozen_entry(e, by_id[e.case_id], catalog, path))
        metadata[e.tuple_id] = {
            "counterfactual_review": e.review if e.review == "approved" else (
                f"unreviewed{' regex draft' if e.draft else ''} (scored with -T unreviewed=allow)"
            ),
            "counterfactual_verification": e.verification,
            "counterfactual_editor": e.editor,
            "counterfactual_review_comment": e.comment,
        }
    return tuples, metadata, counts


def load_counterfactuals(path: str | Path, allow_unregistered: bool = False) -> list[FrozenCounterfactual]:
    """Load a frozen set; it must match its lock (a reviewed set must not change afterwards)."""

    path = Path(path)
    if not path.exists():
        raise CatalogError(path, "file not found")
    check_lock(path, allow_unregistered=allow_unregistered)
    return load_jsonl(path, FrozenCounterfactual, "tuple_id")


def frozen_tuples(
    entries: list[FrozenCounterfactual], cases: list[Case], catalog: Catalog, families: list[str], path: Path
) -> list[CSSTuple]:
    """The frozen entries for the given cases and families, as tuples with their texts verbatim."""
    by_id = {c.case_id: c for c in cases}
    tuples = []
    for e in entries:
        if e.family not in families or e.case_id not in by_id:
            continue
        case = by_id[e.case_id]
        if packet_sha256(case) != e.baseline_sha256:
            raise CatalogError(
                path, "the case's packet changed since this counterfactual was frozen", entry=e.tuple_id, field="baseline_sha256"
            )
        try:
            intervention = catalog.by_id(e.intervention_id)
        except KeyError:
            raise CatalogError(path, "intervention not in the catalog", entry=e.tuple_id, field="intervention_id") from None
        tuples.append(
            CSSTuple(case, intervention, Packet(dict(e.baseline_sections)), Packet(dict(e.counterfactual_sections), tuple(e.order)))
        )
    return tuples


__all__ = [
    "GENERATED_REVIEW",
    "BuildResult",
    "FrozenCounterfactual",
    "Rejected",
    "ReviewDecision",
    "apply_decisions",
    "build_counterfactuals",
    "frozen_for_task",
    "frozen_tuples",
    "load_counterfactuals",
    "parse_edit",
    "verify_edit",
    "verify_frozen_entry",
    "write_counterfactuals",
]


# ------------------------------------------------------------------------------- suspected residue
#
# The review page must do the reviewer's work: every statement that may still state or presuppose the
# original fact is highlighted, sentence by sentence, with why. No pattern list can certify free text, so
# the marks over-ask rather than under-ask, from four general sources (plus the checker role's quotes):
#   residue check    the catalog's typed residue vocabulary, as at build (a hit here also fails the entry)
#   fact term        the same vocabulary without its exceptions (negation, dated history): a reader decides
#   still names      a distinctive word the edit removed or replaced elsewhere ("nephrectomy", "pT3a", "TACE")
#                    that an unchanged clause still contains
#   written before   an unchanged clause of a kind the changed fact decides: a plan or question, and per
#                    family the statements that carry it (treatment status for B, staging and negative
#                    findings for E, operation, pathology and post-operative course for D)

_CLAUSE = re.compile(r"[^;,]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+\-/]*[A-Za-z0-9+]|[A-Za-z]")
_COMMON = frozenset(
    "about after again against also although among another before being below between both cannot could during each "
    "either every following from have having into itself might more most must never other over patient since should "
    "still such than that their them then there these they this those through under until upon very were what when "
    "where which while with within without would your today given done seen noted further review reviewed".split()
)
PLAN_CUE = re.compile(
    r"(?i)\b(?:plan\w*|decision|outcome|propos\w*|recommend\w*|question|query|request\w*|options?|offer\w*|discuss\w*|"
    r"consider\w*|continu\w*|booked|work-?up|refer\w*|adjuvant|neoadjuvant|definitive|curative|radical|surveillance|"
    r"follow-?up|radiotherapy|chemoradiotherapy|ablation|candidate|suitable|then)\b"
)
FAMILY_CUES: dict[str, re.Pattern[str]] = {
    "A": re.compile(r"(?i)\b(?:IHC|FISH|ISH|amplif\w*|receptor\w*|positive|negative|luminal|HR\+?|triple)\b"),
    "B": re.compile(
        r"(?i)\b(?:ongoing|continu\w*|stable|response|responding|maintain\w*|tolerat\w*|cycle|C\d+D\d+|naive|"
        r"no prior|first[- ]line|1L|started|since)\b"
    ),
    "C": re.compile(r"(?i)\b(?:IHC|NGS|PCR|mutat\w*|wild[- ]?type|detected|positive|negative|rearrange\w*|fusion|score|CPS|TPS)\b"),
    "D": re.compile(
        r"(?i)\b(?:\w*ectom(?:y|ies)|resect\w*|excision|margins?|R0|R1|[yp]{1,2}T\w*|[yp]{1,2}N\w*|post-?op\w*|surg\w*|"
        r"wound|histolog\w*|patholog\w*|specimen|nodes? (?:examined|removed)|\d+/\d+ (?:nodes|lymph)|operat\w*|"
        r"not for surgery|unresectable|organ preservation)\b"
    ),
    "E": re.compile(
        r"(?i)\b(?:stage|FIGO|AJCC|BCLC|[cpy]?T[0-4x][a-d]?\s*[cpy]?N[0-3x]|M0|no (?:\w+ ){0,3}(?:disease|metasta\w*|"
        r"nodules?|lesions?|spread|deposits)|without (?:\w+ ){0,2}(?:disease|metasta\w*)|negative for|localised|localized|"
        r"limited|confined|transplant|TACE|curative)\b"
    ),
}


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _distinctive(word: str) -> bool:
    """A word worth following through the packet: long and not common, or a code ("pT3a", "TACE", "R0")."""
    if any(ch.isdigit() for ch in word):
        return any(ch.isalpha() for ch in word) and len(word) >= 2
    if word.isupper() and len(word) >= 2:
        return True
    return len(word) >= 6 and word.lower() not in _COMMON


def removed_words(before: str, after: str) -> set[str]:
    """Distinctive words the edit deleted or replaced somewhere, minus those its own insertions use."""
    a, b = _WORD.findall(before), _WORD.findall(after)
    removed, inserted = set(), set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            removed.update(w for w in a[i1:i2] if _distinctive(w))
        if tag in ("insert", "replace"):
            inserted.update(w.lower() for w in b[j1:j2])
    return {w for w in removed if w.lower() not in inserted}


def suspect_statements(
    entry: FrozenCounterfactual, intervention: Intervention, case: Case, checker_quotes: list[str] | None = None
) -> list[dict[str, str]]:
    """Every counterfactual statement that may still state the original fact: section, statement, why (see above)."""

    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()

    def add(section: str, statement: str, why: str) -> None:
        key = (section, _norm(statement))
        if key in seen:
            for item in out:
                if (item["section"], _norm(item["statement"])) == key and why not in item["why"]:
                    item["why"] += f"; {why}"
            return
        seen.add(key)
        out.append({"section": section, "statement": statement, "why": why})

    if intervention.family == "N":
        return out
    sections = dict(entry.counterfactual_sections)
    baseline_text = _norm("\n".join(entry.baseline_sections.values()))
    baseline_words = set(_WORD.findall(baseline_text))
    removed = removed_words("\n".join(entry.baseline_sections.values()), "\n".join(sections.values()))
    # Literal alternatives only (escaped words, no quantifiers): linear-time on any clause.
    alternatives = "|".join(sorted(map(re.escape, removed), key=len, reverse=True))
    removed_re = re.compile(r"(?<![\w-])(?:" + alternatives + r")(?![\w-])") if removed else None
    family_cue = FAMILY_CUES.get(intervention.family)
    implications = [(n, intervention.implication(n)) for n in intervention.residue]
    for hit in find_residue(sections, intervention, case.board_date, case.cancer_type):
        add(hit.section, hit.line, f"residue check: {hit.implication} ({hit.kind}, '{hit.match}')")
    for name in SECTIONS:
        for statement in statements(sections.get(name, "")):
            for fact, implication in implications:
                found = implication_hits(implication, statement)
                if found:
                    add(name, statement, f"fact term: {fact} ('{found[0][1]}')")
            for clause in _CLAUSE.findall(statement):
                bare = _norm(clause).strip(" .:;!?")
                if not bare:
                    continue
                if bare not in baseline_text:
                    words = _WORD.findall(bare)
                    kept = [w for w in words if w in baseline_words]
                    cue = family_cue.search(clause) if family_cue else None
                    if cue and len(words) >= 3 and len(kept) * 2 >= len(words):
                        # Rewritten by the edit (most of its words were there before) and still about the fact.
                        add(name, statement, f"rewritten, still about the fact: '{cue.group(0)}' in '{clause.strip()[:80]}'")
                    continue  # written by the edit: the residue check and fact terms cover it
                if removed_re is not None:
                    m = removed_re.search(clause)
                    if m:
                        add(name, statement, f"still names what the edit removed: '{m.group(0)}'")
                cue = PLAN_CUE.search(clause) or (family_cue.search(clause) if family_cue else None)
                if cue:
                    add(name, statement, f"written before the change: '{cue.group(0)}' in '{clause.strip()[:80]}'")
    for quote in checker_quotes or []:
        for name in SECTIONS:
            for statement in statements(sections.get(name, "")):
                if _norm(quote) and _norm(quote) in _norm(statement):
                    add(name, statement, "checker role")
    return out
