"""Whole replies only, and why a reply left the score (issue 37).

A reply is read only when it is whole: the provider ended it by itself (Inspect's `stop_reason` is `stop`,
`tool_calls` or `unknown`) and it does not end inside a JSON object. A reply the provider cut for length
(`max_tokens`, `model_length`) or withheld (`content_filter`), and JSON that a partial-JSON scan shows to be
cut, are unreadable with the reason `truncated` or `filtered`; they are never repaired into an answer, and the
reader role is not asked (what was cut off is not in the reply for anyone to read).

Every unreadable reply's reason starts with one short code (`UNREADABLE_CODES`), so a report can count the
replies that left the score by reason: `unreadable_code(reason)` gives it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from clinical_cf.replies.final import CONFLICT, Provenance, final_answer
from clinical_cf.replies.json_answers import json_cut
from clinical_cf.replies.provider import provider_reply

STOP_REASON_CODES = {"max_tokens": "truncated", "model_length": "truncated", "content_filter": "filtered"}
"""Inspect stop reasons that mean the reply is not whole, and the unreadable code each gives."""

UNREADABLE_CODES: dict[str, str] = {
    "truncated": "the provider cut the reply for length (stop reason max_tokens or model_length), or it ends inside JSON",
    "filtered": "the provider withheld or cut the reply (stop reason content_filter)",
    "empty": "no text, or no final answer after reasoning",
    CONFLICT: "candidate answers disagree, a revision follows the answer, an item is struck or in both lists",
    "elided": "the JSON answer leaves items out with an ellipsis ([X, ...]): it states less than it claims",
    "pointer": "an item points elsewhere ('see above', 'Option (ii)') and the reply's own enumeration does not resolve it",
    "number out of bounds": "a number too long, non-finite or sub-normal",
    "reader declined": "the reader role said the reply states no single answer (or its reply was not a reading)",
    "refused": "a structural check refused the reader's reading (a quote not in the final answer, a struck or superseded place, a negation)",
    "unconfirmed": "one reader's reading, with no independent second reading to agree with it",
    "readers disagree": "two independent readings of the reply differ",
    "no answer": "the contract steps read nothing and no reader was asked",
}
"""The short reason codes recorded under `unreadable` in score metadata (docs/replies-and-judges.md)."""


def not_whole(text: str | None, stop_reason: str | None = None) -> str | None:
    """Why a reply is not whole ("truncated: ..." / "filtered: ..."), or None when it may be read."""
    code = STOP_REASON_CODES.get(str(stop_reason or ""))
    if code == "filtered":
        return "filtered: the provider stopped the reply with stop reason content_filter"
    if code == "truncated":
        return f"truncated: the provider stopped the reply with stop reason {stop_reason} (its token cap or context)"
    if text and json_cut(final_answer(text)):
        return "truncated: the reply ends inside a JSON object (cut before it closed)"
    return None


def unreadable_code(reason: str | None, invalid: str | None = None) -> str:
    """The short code (`UNREADABLE_CODES`) of an unreadable reply's reason; an invalid reply's own code
    (`empty`, `placeholder_echo`, `degenerate_repetition`) when it is invalid."""
    if invalid:
        return str(invalid)
    text = (reason or "").strip()
    for code in UNREADABLE_CODES:
        if text.startswith(code):
            return code
    lowered = text.lower()
    if lowered.startswith("unreadable number"):
        return "number out of bounds"
    if "reader reading rejected" in lowered:
        return "refused"
    if lowered.startswith("reader") or "; reader" in lowered:
        return "reader declined"
    if lowered.startswith(("empty", "no final answer")):
        return "empty"
    return "no answer"


def output_facts(output: Any, configured_max_tokens: int | None = None) -> tuple[str | None, int | None]:
    """(stop reason, max-token cap) of an Inspect `ModelOutput` (`clinical_cf.replies.provider`: a response with no
    choices has neither, never an IndexError)."""
    reply = provider_reply(output, configured_max_tokens)
    return reply.stop_reason, reply.max_tokens


@dataclass(frozen=True)
class SuiteReading:
    """What one suite read from one reply, and how: the reading every suite's reader returns.

    `value` is the reading (None when nothing was read); the other fields say how (`provenance`), why not
    (`invalid` for a reply that is no answer, `reason` for an unreadable one, starting with its code), and what
    a score records about it (`metadata`). A suite names its value (`letters`, `probs`) with a property.
    """

    value: Any
    provenance: Provenance
    invalid: str | None = None
    reason: str = ""
    reply_cut: bool = False
    reader: dict[str, Any] | None = None
    conflict: tuple[str, ...] = ()
    bounds: bool = False
    """Unreadable for a reason no reader can undo (a number out of bounds, a reply that is not whole): the reader is not asked."""
    max_tokens: int | None = None
    """The output-token cap that cut the reply (unreadable `truncated`)."""

    @property
    def needs_reader(self) -> bool:
        return self.value is None and self.invalid is None and not self.bounds

    @property
    def unreadable(self) -> str | None:
        """The short reason code when nothing was read (`UNREADABLE_CODES`, or the invalid code), else None."""
        return None if self.value is not None else unreadable_code(self.reason, self.invalid)

    def metadata(self) -> dict[str, Any]:
        """The fields every score records about its reply (docs/replies-and-judges.md, "Recall counted")."""
        return {"parse": self.provenance, "unreadable": self.unreadable, "unreadable_reason": self.reason or None,
                "max_tokens": self.max_tokens, "reader": self.reader, "conflict": list(self.conflict) or None,
                "reply_cut": self.reply_cut}

    def cut_short(self, reason: str, max_tokens: int | None = None) -> SuiteReading:
        return replace(self, value=None, provenance="unreadable", reason=reason, bounds=True,
                       max_tokens=max_tokens if reason.startswith("truncated") else None)


def per_arm(arms: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """The score fields of a score read from several replies (one dict per arm, as `SuiteReading.metadata`
    writes them): `parse` per arm, `unreadable` (code per arm that was not read) and `max_tokens` (cap per
    arm cut for length), each None when no arm has one."""
    present = {name: arm or {} for name, arm in arms.items()}
    return {
        "parse": {name: arm.get("parse", "unreadable") for name, arm in present.items()},
        "unreadable": {name: arm["unreadable"] for name, arm in present.items() if arm.get("unreadable")} or None,
        "max_tokens": {name: arm["max_tokens"] for name, arm in present.items() if arm.get("max_tokens")} or None,
    }
