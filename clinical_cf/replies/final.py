"""The final answer of a reply: bounds, reasoning removal, bounded numbers, revisions and conflicts, invalid output
and text hygiene (docs/replies-and-judges.md, "The final answer" and "One answer or none")."""

from __future__ import annotations

import json
import math
import re
import sys
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal

from clinical_cf.replies.canonical import canonical_text, decode_serialised

Provenance = Literal["json", "repaired", "field", "agreement", "reader", "markdown", "prose", "invalid", "unreadable"]
"""How a reading was obtained.

json: a schema-valid JSON object; repaired: JSON whose syntax needed repair; field: an explicit
final-answer line in a closed grammar; agreement: two independent readers' readings that agree, each
passing the structural checks (issue 37); reader: one reader's reading (logs before issue 37: no reading
counts on one reader any more); invalid: an empty reply, placeholder echo or degenerate repetition (never scored);
unreadable: a reply with content from which nothing could be read without guessing.
markdown and prose are kept for logs written before the reading order (issue 21): no reader
produces them any more.
"""

def read_by(*provenances: str | None) -> str | None:
    """Whether a score's readings came through the reader role: "reader" when any reading behind it did,
    "contract" when every one was read by steps (a)-(c), None when one was not read (unscored). The field
    `read_by` in score metadata, so a report can show the share of scores that rest on the reader."""
    if any(p in ("reader", "agreement") for p in provenances):
        return "reader"
    if provenances and all(p in ("json", "repaired", "field", "markdown", "prose") for p in provenances):
        return "contract"
    return None


PROVENANCES: tuple[Provenance, ...] = ("json", "repaired", "field", "agreement", "reader", "markdown", "prose", "invalid", "unreadable")
READ: frozenset[str] = frozenset({"json", "repaired", "field", "agreement", "reader", "markdown", "prose"})

MAX_REPLY_CHARS = 100_000
"""Replies are cut to this many characters before any reading (a 1 MB reply is read as its first 100,000)."""
MAX_JSON_DEPTH = 32
"""JSON nested deeper than this is not read (no recursion: the depth is counted while scanning)."""
MAX_REPAIR_CHARS = 20_000
"""A brace span longer than this that is not valid JSON is not repaired (repair is not linear)."""


def bounded(text: str | None) -> tuple[str, bool]:
    """The reply cut to `MAX_REPLY_CHARS`, and whether it was cut."""
    text = text or ""
    if len(text) > MAX_REPLY_CHARS:
        return text[:MAX_REPLY_CHARS], True
    return text, False


def reply_cut(text: str | None) -> bool:
    """Whether a reply is over `MAX_REPLY_CHARS` and is read cut."""
    return bool(text) and len(text or "") > MAX_REPLY_CHARS


# --------------------------------------------------------------------------- final answer

READER_RULES_VERSION = 5
"""Bumped whenever a reading rule changes (reasoning removal, candidate collection, bounds, the reader's
verification), so a fingerprint over what decides a score changes with it."""

REASONING_TAG_NAMES = (
    "think", "thinking", "thought", "thoughts", "reasoning", "reason_step", "reflection", "reflect", "scratchpad",
    "scratch_pad", "analysis", "inner_monologue", "internal_thoughts", "chain_of_thought", "cot", "deliberation",
    "seed:think", "seed_think",
)
"""Tag names that open a reasoning block, in any of the forms `<name ...>...</name>` (DeepSeek-R1, Qwen3, QwQ,
Claude's `<thinking>`, Gemini's `<thought>`, ByteDance Seed's `<seed:think>`), `[NAME]...[/NAME]` (Mistral
Magistral's `[THINK]`) and `<|name|>...<|/name|>`; compared case-insensitively."""

# One linear scan for reasoning tags of the three bracket styles; the attribute run is bounded so an
# unclosed "<think" cannot make every later match rescan the rest of the reply.
_NAMES = "|".join(re.escape(n) for n in sorted(REASONING_TAG_NAMES, key=len, reverse=True))
_TAG = re.compile(
    rf"<(?P<a>/?)(?:{_NAMES})(?![\w:])[^<>]{{0,200}}>|\[(?P<b>/?)(?:{_NAMES})\]|<\|(?P<c>/?)(?:{_NAMES})\|>"
    r"|<\|(?P<d>begin|end)_of_thought\|>|<\|(?P<e>start|end)_thinking\|>",
    re.IGNORECASE,
)
# Solution markers (OpenThoughts / Bespoke `<|begin_of_solution|>`) wrap the answer: removed, content kept.
_SOLUTION_MARK = re.compile(r"<\|(?:begin|end)_of_solution\|>|<\|(?:start|end)_response\|>|\[END FINAL RESPONSE\]", re.IGNORECASE)
# Apriel's "[BEGIN FINAL RESPONSE]" and gpt-oss channels leaked as plain text ("analysis...assistantfinal...")
# announce the answer: what precedes the last one is reasoning.
_FINAL_RESPONSE = re.compile(r"\[BEGIN FINAL RESPONSE\]|(?<=[a-z.!?\s])assistantfinal(?=\S)", re.IGNORECASE)
# gpt-oss "harmony" channels: `<|channel|>analysis<|message|>...<|end|>`, `<|channel|>final<|message|>...<|return|>`.
_CHANNEL = re.compile(r"<\|channel\|>[ \t]{0,8}(?P<name>[A-Za-z_]{1,20})[^<]{0,80}?<\|message\|>", re.IGNORECASE)
_CHANNEL_END = re.compile(r"<\|(?:end|return|call|start)\|>")
_KIMI_OPEN, _KIMI_CLOSE = "\u25c1think\u25b7", "\u25c1/think\u25b7"
# An untagged draft: a line that announces the final answer ends it; what comes before is the draft.
_FINAL_MARK = re.compile(
    r"^[ \t>#*_]{0,8}(?:final[ \t]{1,3}(?:answer|decision|verdict|response)|my final answer)\b",
    re.IGNORECASE | re.MULTILINE,
)


def final_answer(text: str | None) -> str:
    """The final answer of a reply: what is left after removing reasoning by one rule (docs/replies-and-judges.md).

    1. The reply is cut to `MAX_REPLY_CHARS`.
    2. Channels (gpt-oss harmony): a reply with `<|channel|>` markers has as final answer the content of its
       last `final` channel only; with no final channel it has no final answer (a reply cut off while
       analysing states nothing).
    3. Reasoning blocks of every name in `REASONING_TAG_NAMES` and every bracket style, and Kimi's
       `\u25c1think\u25b7`, are removed: a block that never closes (a reply cut off while thinking) leaves no final
       answer; a closing tag without an opening one (chat templates that put `<think>` in the prompt) means
       everything before it was reasoning.
    4. An untagged draft: when a line announces the final answer ("Final answer:", "**Final decision**"), the
       final answer starts at the last such line.

    A serialised reply (a JSON string, a Python repr, content blocks) is decoded first, and the final answer is
    returned as canonical text (`clinical_cf.replies.canonical`): every reader, the readers' prompt and the quote
    check see one shape whatever the format (issue 44).
    """
    text, _ = bounded(text)
    if not text:
        return ""
    text = decode_serialised(text)  # a reply a gateway serialised (a JSON string, a repr) is read as its text
    announced = list(_FINAL_RESPONSE.finditer(text))
    if announced:
        text = text[announced[-1].end():]
    elif re.match(r"analysis(?=[A-Z])", text) and "assistantfinal" not in text.lower():
        return ""  # a gpt-oss analysis channel leaked as text, cut off before its final channel
    channels = list(_CHANNEL.finditer(text))
    if channels:
        finals = [m for m in channels if m.group("name").lower() == "final"]
        if not finals:
            return ""
        text = text[finals[-1].end():]
        end = _CHANNEL_END.search(text)
        if end:
            text = text[: end.start()]
    if _KIMI_CLOSE in text:
        text = text[text.rindex(_KIMI_CLOSE) + len(_KIMI_CLOSE):]
    elif _KIMI_OPEN in text:
        text = text[: text.index(_KIMI_OPEN)]
    kept: list[str] = []
    depth, position = 0, 0
    for match in _TAG.finditer(text):
        closing = bool(match.group("a") or match.group("b") or match.group("c")) or "end" in (
            (match.group("d") or "").lower(), (match.group("e") or "").lower())
        if depth == 0 and not closing:
            kept.append(text[position:match.start()])
            depth = 1
        elif closing:
            if depth == 0:
                kept = []  # a closing tag with no opening one: everything before it was reasoning
            depth = 0
        position = match.end()
    if depth == 0:
        kept.append(text[position:])
    final = _SOLUTION_MARK.sub("\n", "".join(kept))
    marks = list(_FINAL_MARK.finditer(final))
    if marks:
        final = final[marks[-1].start():]
    # A final answer that is itself serialised (reasoning in plain text, then the answer as a JSON string) is decoded too.
    return canonical_text(decode_serialised(final.strip())).strip()


def had_reasoning(text: str | None) -> bool:
    text, _ = bounded(text)
    return bool(text) and bool(_TAG.search(text) or _CHANNEL.search(text) or _KIMI_OPEN in text or _FINAL_RESPONSE.search(text)
                               or re.match(r"analysis(?=[A-Z])", text))


# --------------------------------------------------------------------------- bounded numbers

MAX_NUMBER_DIGITS = 30
"""A run of more digits than this in a final answer makes the reply unreadable (no identifier, dose, score or
probability has that many; Python refuses to convert integers over 4,300 digits, which ended evals before)."""
_LONG_DIGITS = re.compile(rf"\d{{{MAX_NUMBER_DIGITS + 1}}}")
_EXPONENT = re.compile(r"(?<![\w.])[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})[eE][+-]?\d{1,9}(?![\w.])")
_NON_FINITE = re.compile(
    r"(?:[:=\[,(][ \t]{0,8}|^[ \t]{0,8})[+-]?(?:nan|infinity|inf)(?![\w])", re.IGNORECASE | re.MULTILINE
)
_SMALLEST_NORMAL = sys.float_info.min


def number_problem(text: str) -> str | None:
    """Why a final answer's numbers cannot be read, or None: a digit run over `MAX_NUMBER_DIGITS`, an exponent
    literal that overflows or underflows to a sub-normal or zero (`1e400`, `1e-400`), or NaN / Infinity."""
    long = _LONG_DIGITS.search(text)
    if long:
        run = len(re.match(r"\d*", text[long.start():long.start() + MAX_REPLY_CHARS]).group(0))  # type: ignore[union-attr]
        return f"a number with {run} digits (more than {MAX_NUMBER_DIGITS})"
    for match in _EXPONENT.finditer(text):
        literal = match.group(0)
        value = float(literal)
        mantissa_zero = not re.search(r"[1-9]", literal.lower().split("e")[0])
        if not math.isfinite(value) or (value == 0 and not mantissa_zero) or (value != 0 and abs(value) < _SMALLEST_NORMAL):
            return f"number {literal[:40]!r} is not a finite normal number"
    bad = _NON_FINITE.search(text)
    if bad:
        return f"non-finite number {bad.group(0).strip(' :=[,(')[:20]!r}"
    return None


def _strict_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value) or (value != 0 and abs(value) < _SMALLEST_NORMAL) or (value == 0 and re.search(r"[1-9]", literal.split("e")[0].split("E")[0])):
        raise ValueError(f"number {literal[:40]!r} is not a finite normal number")
    return value


def _strict_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number with {len(literal)} digits")
    return int(literal)


def _no_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("an object states one field twice")  # {"action": "ANSWER", "action": "ESCALATE"}: two answers
    return dict(pairs)


def loads(text: str) -> Any:
    """`json.loads` with bounded numbers (long integers, non-finite and sub-normal values raise ValueError) and
    unique keys (an object that states a field twice is two answers, never the last one silently)."""
    return json.loads(text, parse_int=_strict_int, parse_float=_strict_float, parse_constant=_no_constant,
                      object_pairs_hook=_unique_keys)


# --------------------------------------------------------------------------- revisions

# A revision or correction of an answer already given: a cue that opens a sentence or line ("Correction:",
# "Actually, ...", "Wait, ..."), or a phrase that revises wherever it stands ("on reflection", "scratch that").
_REVISION_OPENERS = (
    "correction", "corrected", "correcting", "revised", "revision", "revise", "update", "updated", "amended", "amendment",
    "erratum", "edit", "actually", "wait", "hmm", "scratch", "rethinking", "reconsidering", "re-checking",
    "rechecking", "looking again", "after rereading", "after re-reading", "on review", "on reviewing", "on further review",
)
_REVISION_PHRASES = (
    "on reflection", "on second thought", "on second thoughts", "second thoughts", "scratch that", "i take that back",
    "take that back", "i retract", "i meant", "make that", "change my answer", "changing my answer", "change the answer",
    "my revised", "revised answer", "revised score", "revised verdict", "revised recommendation", "corrected answer",
    "instead of my", "rather than my", "this should be", "that should be", "it should be", "should have been",
    "the correct answer is", "i would change", "i'd change", "i will change",
)
_REVISION = re.compile(
    r"(?:(?:^|[.!?;][ \t]{0,4}|\n)[ \t>*_#-]{0,6}(?:" + "|".join(re.escape(o) for o in _REVISION_OPENERS) + r")\b)"
    r"|\b(?:" + "|".join(re.escape(p) for p in _REVISION_PHRASES) + r")\b",
    re.IGNORECASE,
)


# A JSON Patch (RFC 6902) after an answer edits it: `[{"op": "remove", "path": "/recommendations/1"}]` (issue 44).
_JSON_PATCH = re.compile(r"[\"']op[\"'][ \t]{0,4}:[ \t]{0,4}[\"'](?:add|remove|replace|move|copy)[\"']", re.IGNORECASE)


def revision_in(text: str) -> str | None:
    """The first revision in `text` (with a little context): a revision cue, or a JSON Patch that edits the answer;
    None when there is none."""
    found = [m for m in (_REVISION.search(text), _JSON_PATCH.search(text)) if m]
    if not found:
        return None
    start = min(m.start() for m in found)
    return " ".join(text[start: start + 120].split())


# --------------------------------------------------------------------------- conflicting answers

CONFLICT = "conflicting answers"
"""The reason prefix of a reply whose candidate answers disagree (unreadable, counted apart)."""


def conflict_reason(candidates: Iterable[str]) -> str:
    shown = [" ".join(str(c).split())[:120] for c in candidates]
    return f"{CONFLICT}: " + " | ".join(shown[:4])


def is_conflict(reason: str | None) -> bool:
    return bool(reason) and str(reason).startswith(CONFLICT)



# --------------------------------------------------------------------------- text hygiene

_MD_LINK = re.compile(r"\[([^\]\n]{1,300})\]\([^)\n]{0,500}\)")


def strip_markdown(text: str) -> str:
    """Text without emphasis markers, inline code ticks, link targets and heading hashes."""
    text = _MD_LINK.sub(r"\1", text)
    text = re.sub(r"(\*\*|__|\*|`+|~~)", "", text)
    text = re.sub(r"(?<!\w)_(\S[^_\n]{0,200}?)_(?!\w)", r"\1", text)
    text = re.sub(r"^[ \t]{0,3}#{1,6}[ \t]*", "", text, flags=re.MULTILINE)
    return text


def squash(text: str) -> str:
    """Whitespace-normalised, case-folded text: what grounding compares."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()



# --------------------------------------------------------------------------- invalid output

# Angle-bracketed template slots as prompts used to write them: "<one sentence>", "<0, 0.5 or 1>".
_PLACEHOLDER = re.compile(r"[<\[{][^<>\[\]{}\n]{1,80}[>\]}]")
_GENERIC_SLOTS = frozenset({
    "", "...", "…", "string", "text", "treatment", "drug", "drug name", "regimen", "option", "rationale", "reason",
    "one sentence", "n/a", "na", "tbd", "todo", "xxx", "placeholder", "example", "name", "value", "item",
    "recommendation", "treatment name", "your answer", "answer", "letter", "letters",
})

_NONE_LIKE = re.compile(
    r"(?:none|nil|nothing|no(?:ne)? (?:options?|treatments?|items?|recommendations?)?|n/?a|not applicable|no contraindications?"
    r"|none (?:identified|noted|stated|listed|known|indicated|applicable|recommended|at this time|currently))[ .]{0,3}",
    re.IGNORECASE,
)


def none_like(text: object) -> bool:
    """An item that says there is no item ("None", "N/A", "none identified", "-"): no item at all."""
    if not isinstance(text, str):
        return False
    clean = strip_markdown(text).strip().strip(".:;,\"'()[]").strip()
    return not clean or clean in ("-", "—", "–") or bool(_NONE_LIKE.fullmatch(clean))


def is_placeholder(text: str) -> bool:
    """A template slot copied from the prompt instead of content (`<regimen, drug(s)...>`, `...`, `string`)."""
    stripped = text.strip()
    clean = strip_markdown(stripped).strip().strip(".:;,\"'").lower()
    return bool(_PLACEHOLDER.fullmatch(stripped)) or clean in _GENERIC_SLOTS


def degenerate(text: str) -> bool:
    """Degenerate repetition: a reply that loops on the same words or lines.

    Measured on word 4-grams (distinct share below 30% over at least 40 words) and on lines
    (one non-trivial line making up at least 60% of at least 6 lines), and a short unit with a
    word character repeated 25 times. Runs of punctuation (a table's separator row, leader dots)
    are layout, not repetition.
    """
    text, _ = bounded(text)
    words = re.findall(r"\w+", text.lower())
    if len(words) >= 40:
        grams = [tuple(words[i : i + 4]) for i in range(len(words) - 3)]
        if len(set(grams)) / len(grams) < 0.3:
            return True
    lines = [re.sub(r"\W+", " ", line).strip().lower() for line in text.splitlines()]
    lines = [line for line in lines if len(line) > 3]
    if len(lines) >= 6:
        counts: dict[str, int] = {}
        for line in lines:
            counts[line] = counts.get(line, 0) + 1
        if max(counts.values()) / len(lines) >= 0.6:
            return True
    compact = re.sub(r"\s+", " ", text)
    return bool(re.search(r"(?=[^\n]{0,11}\w)(.{1,12}?)\1{24,}", compact))


def invalid_reason(text: str | None, placeholders: Iterable[str] = ()) -> str | None:
    """Why a reply (or the part of it that was read) is not an answer ("empty", "placeholder_echo",
    "degenerate_repetition"), or None.

    `placeholders` are the prompt's own template slots; a reply that contains one verbatim copied
    the template. Callers pass the answer that was read (a JSON span, an answer line) where there
    is one, so layout around a valid answer never makes it invalid.
    """
    final = final_answer(text)
    if not final or not re.search(r"\w", final):
        return "empty"
    flat = " ".join(final.lower().split())
    if any(p and " ".join(p.lower().split()) in flat for p in placeholders):
        return "placeholder_echo"
    if degenerate(final):
        return "degenerate_repetition"
    return None
