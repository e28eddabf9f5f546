"""Closed answer grammars and judges' verdicts (step c of the reading order): answer lines, scores and flags."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clinical_cf.replies.final import Provenance, conflict_reason, final_answer, had_reasoning, number_problem, revision_in
from clinical_cf.replies.json_answers import Found, json_objects, lowered_keys, outside_json
from clinical_cf.replies.whole import not_whole

# --------------------------------------------------------------------------- closed grammars

_EMPHASIS = re.compile(r"\*\*|__|`+|~~")


def answer_lines(text: str) -> list[str]:
    """The final answer's non-empty lines without markdown emphasis, each cut to 2,000 characters."""
    out = []
    for line in text.splitlines():
        line = _EMPHASIS.sub("", line[:2000]).strip()
        if line:
            out.append(line)
    return out


def trailing_lines(
    text: str, is_answer_line: Callable[[str], bool], allowed_after: Callable[[str], bool] = lambda _: False
) -> list[str] | None:
    """The block of answer lines that ends the final answer, or None when the answer does not end with one.

    Lines without a word character (leader dots, a rule) and lines `allowed_after` accepts (a
    `Reason:` line) may follow. Returns every answer line of the closing block, in order.
    """
    lines = answer_lines(text)
    block: list[str] = []
    for line in reversed(lines):
        if not re.search(r"\w", line):
            continue
        if is_answer_line(line):
            block.append(line)
            continue
        if block:
            break
        if allowed_after(line):
            continue
        return None
    return list(reversed(block)) or None


# --------------------------------------------------------------------------- verdicts

@dataclass(frozen=True)
class Reading:
    """A scalar read from a reply: the value (None when unreadable), how, and why not."""

    value: Any
    provenance: Provenance
    reason: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.value is not None


_NUMBER = r"[+-]?(?:\d{1,6}(?:\.\d{1,6})?|\.\d{1,6})"


def _as_number(value: Any) -> float | None:
    """A plain number ("0.5", 1, "1.0"); fractions, ranges and words are not numbers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and re.fullmatch(rf"[ \t]{{0,8}}{_NUMBER}[ \t]{{0,8}}", value):
        return float(value)
    return None


def _label_line(labels: tuple[str, ...], value: str) -> re.Pattern[str]:
    """`Label: value` ending a line (markdown emphasis already removed), at the line's start or as
    its last sentence, optionally `final`/`overall`/`revised`/`corrected`. Use with `.search`."""
    label = "|".join(re.escape(x).replace(r"\ ", r"[ _]") for x in labels)
    return re.compile(
        rf"(?:^|[.!?][ \t]{{1,4}})(?:(?:final|overall|revised|corrected|updated|new|adjusted)[ \t]{{1,3}})?(?:{label})"
        rf"[ \t]{{0,4}}[:=][ \t]{{0,4}}(?P<value>{value})[ \t]{{0,4}}\.?$",
        re.IGNORECASE,
    )


# A score, optionally on a stated scale ("2/2", "1 out of 1"): divided by its maximum only when the maximum is stated.
_SCORE_VALUE = rf"{_NUMBER}(?:[ \t]{{0,2}}(?:/|out of)[ \t]{{0,2}}{_NUMBER})?"
_SCALE = re.compile(rf"(?P<number>{_NUMBER})(?:[ \t]{{0,2}}(?:/|out of)[ \t]{{0,2}}(?P<maximum>{_NUMBER}))?")


def _on_scale(raw: str) -> float | None:
    """A label's score: the number, or the number over its stated maximum ("2/2" -> 1.0); None for a maximum of 0."""
    match = _SCALE.match(raw.strip())
    if match is None:
        return None
    number = float(match.group("number"))
    if match.group("maximum") is None:
        return number
    maximum = float(match.group("maximum"))
    return number / maximum if maximum > 0 else None


def _echoed(text: str, start: int, end: int) -> bool:
    """A label at text[start:end] that the judge quotes rather than states: inside quotation marks, or on a blockquoted line."""
    line_start = text.rfind("\n", 0, start) + 1
    if _quoted_line(text[line_start:start + 1]):
        return True
    before, after = text[max(line_start, start - 2):start], text[end:end + 2]
    return any(q in before for q in "\"“'‘«") and any(q in after for q in "\"”'’»")


def _quoted_line(line: str) -> bool:
    """A line the judge quotes rather than states: a markdown blockquote ("> Score: 1")."""
    return line.lstrip().startswith(">")


def _lines_outside(final: str, objects: list[Found]) -> list[tuple[int, str]]:
    """(end offset, line without emphasis) for every line of the final answer outside the given JSON spans."""
    out, offset = [], 0
    spans = [(f.start, f.end if f.end >= 0 else len(final)) for f in objects]
    for raw in final.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        if any(a <= start and offset <= b + 1 for a, b in spans):
            continue
        piece = raw
        for a, b in spans:  # a line that holds a JSON object and prose: the prose only
            if a < offset and b > start:
                piece = final[start:a] + " " + final[b:offset] if a >= start else final[b:offset]
        line = _EMPHASIS.sub("", piece[:2000]).strip()
        if line:
            out.append((offset, line))
    return out


def _is_example_echo(data: dict[str, Any]) -> bool:
    """A verdict object whose rationale is the retry prompt's "..." slot: the example copied, not a verdict."""
    rationale = data.get("rationale", data.get("reason"))
    return isinstance(rationale, str) and rationale.strip() in ("...", "…", "<rationale>", "string")


# Fields that state the maximum of a JSON verdict's scale (`{"score": 1, "max_score": 2}` is 0.5, as a human reads it).
_MAXIMUM_KEYS = ("max_score", "maxscore", "maximum", "max", "out_of", "outof", "max_points", "scale_max", "total")


def _object_score(data: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    """A JSON verdict's score, divided by the maximum the object states (None when that maximum is not a positive number)."""
    number = _as_number(next(data[k] for k in keys if k in data))
    stated = [data[k] for k in _MAXIMUM_KEYS if k in data]
    if number is None or not stated:
        return number
    maximum = _as_number(stated[0])
    return number / maximum if maximum is not None and maximum > 0 else None


# After its verdict a judge that speaks of the credit or score again with a value ("half credit is fairer", "a 0.5
# would be fairer") revises it: the verdict is not read (the judge is asked again), never read as the earlier value.
_VERDICT_WORDS = frozenset("credit score verdict grade points mark".split())
_VALUE_WORDS = frozenset("half full partial zero none fairer fair lower higher instead more less generous harsh".split())


def _verdict_again(after: str) -> str | None:
    for sentence in re.split(r"(?<=[.!?])\s+|\n", after):
        words = set(re.findall(r"[^\W_]+", sentence.casefold()))
        if words & _VERDICT_WORDS and (words & _VALUE_WORDS or re.search(r"(?<![\w.])(?:0?\.5|[01](?:\.0)?)(?![\w.])", sentence)):
            return " ".join(sentence.split())[:120]
    return None


def read_score(text: str | None, valid: tuple[float, ...], key: str = "score", aliases: tuple[str, ...] = ("verdict",),
               stop_reason: str | None = None) -> Reading:
    """A judge's score from its reply, or unreadable.

    Only the final answer counts, and only the verdict field: every JSON object with the key (or an
    alias) and every explicit label line that is nothing but the label and the number (`Verdict: 1`,
    `**Score:** 0.5`, `Revised score: 0.5`) is a candidate. Candidates that disagree, or a revision
    after the last one ("Wait, ... this should be 0"), are `conflicting answers`; a copy of the retry
    prompt's example (`"rationale": "..."`) is no verdict; a number out of bounds, a fraction, a range
    or a value outside `valid` make the reply unreadable. Numbers elsewhere in the prose (a tumour
    grade, a risk score) are never read.
    """
    cut = not_whole(text, stop_reason)
    if cut:
        return Reading(None, "unreadable", cut)
    final = final_answer(text)
    if not final:
        return Reading(None, "invalid", "empty reply" if not had_reasoning(text) else "no final answer after reasoning")
    bad_number = number_problem(final)
    if bad_number:
        return Reading(None, "unreadable", f"unreadable number: {bad_number}")
    keys = (key, *aliases)
    found = [f for f in json_objects(final) if any(k in lowered_keys(f.value) for k in keys)]
    echoes = [f for f in found if _is_example_echo(lowered_keys(f.value))]
    objects = [f for f in found if f not in echoes]
    pattern = _label_line(keys, _SCORE_VALUE)
    # The judge's own lines only: a blockquoted line quotes the model or the rubric, it is no verdict.
    labelled = [(end, m.group("value"), line) for end, line in _lines_outside(final, found)
                if not _quoted_line(line) and (m := pattern.search(line))]
    candidates: list[tuple[int, float | None, str]] = []
    for f in objects:
        data = lowered_keys(f.value)
        candidates.append((f.end, _object_score(data, keys), json.dumps(f.value)[:120]))
    for end, raw, line in labelled:
        candidates.append((end, _on_scale(raw), line))
    if not candidates:
        if echoes:
            return Reading(None, "unreadable", "the retry prompt's example verdict was copied, not a verdict")
        return Reading(None, "unreadable", f"no {key} field or '{key.capitalize()}: <value>' line in the reply")
    if len({value for _, value, _ in candidates}) > 1:
        return Reading(None, "unreadable", conflict_reason(text for _, _, text in candidates))
    after = final[max(end for end, _, _ in candidates):]
    revision = revision_in(after) or _verdict_again(after)
    if revision:
        return Reading(None, "unreadable", conflict_reason((candidates[-1][2], revision)))
    value = candidates[0][1]
    if value is None or value not in valid:
        return Reading(None, "unreadable", f"score is not one of {list(valid)}")
    if objects:
        provenance: Provenance = "repaired" if any(f.provenance == "repaired" for f in objects) else "json"
        return Reading(value, provenance, data=lowered_keys(objects[-1].value))
    return Reading(value, "field", data={"rationale": final[:500]})


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def as_flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().strip(".").lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def read_flag(text: str | None, key: str, stop_reason: str | None = None) -> Reading:
    """A yes/no field stated in the final answer, or unreadable.

    Read from JSON (`{"mentions": true}`, `{"criticalError": "yes"}`: keys compared as
    `normal_key` writes them) and from labels in the text (`mentions: no`, `critical error: yes`);
    a missing field, a value that is not yes/no, or two readings that disagree is unreadable
    (never a default).
    """
    cut = not_whole(text, stop_reason)
    if cut:
        return Reading(None, "unreadable", cut)
    final = final_answer(text)
    if not final:
        return Reading(None, "invalid", "empty reply")
    bad_number = number_problem(final)
    if bad_number:
        return Reading(None, "unreadable", f"unreadable number: {bad_number}")
    objects = [f for f in json_objects(final) if key in lowered_keys(f.value)]
    values = [as_flag(lowered_keys(f.value)[key]) for f in objects]
    ends = [f.end for f in objects]
    label = re.escape(key).replace("_", "[ _-]?")
    prose = outside_json(final, objects)
    # The judge's own label only: not "Non-critical error: yes" (another field), not a label in quotation marks
    # (a rubric echoed: answer "mentions: yes" if ...), not a blockquoted line (a quote).
    matches = [
        m for m in re.finditer(
            rf"(?<![\w-]){label}\b[ \t*_`\"']{{0,6}}[:=\-–—][ \t*_`\"']{{0,6}}(true|false|yes|no)\b", prose, re.IGNORECASE)
        if not _echoed(prose, m.start(), m.end())
    ]
    values += [as_flag(m.group(1)) for m in matches]
    if not values:
        return Reading(None, "unreadable", f"no {key} stated")
    if None in values:
        return Reading(None, "unreadable", f"{key} is not a single true/false")
    if len(set(values)) != 1:
        shown = [f"{key}: {v}" for v in values]
        return Reading(None, "unreadable", conflict_reason(shown))
    tail = prose[matches[-1].end():] if matches else (final[max(ends):] if ends else "")
    revision = revision_in(tail)
    if revision:
        return Reading(None, "unreadable", conflict_reason((f"{key}: {values[-1]}", revision)))
    provenance: Provenance = ("repaired" if any(f.provenance == "repaired" for f in objects) else "json") if objects else "field"
    return Reading(values[0], provenance, data=lowered_keys(objects[-1].value) if objects else {})
