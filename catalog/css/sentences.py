"""Statements, not physical lines: how a clinician's text is read (issue 22).

Packets arrive hard-wrapped (a referral letter wraps a plan sentence over two lines), as
pipe tables (an EHR export puts "Stage | IIB" in two cells) and as one-event-per-line
chronologies. Anything that decides what a packet says (the importer's inferences, its
planned-versus-performed test) reads `statements(text)`: wrapped lines joined, table rows
turned into "key: value" statements, and the result split at sentence ends. Every step is
linear in the text's length (no backtracking patterns).
"""

from __future__ import annotations

import re

from clinical_cf.catalog.css.dates import find_dates

_TERMINAL = (".", ";", ":", "!", "?", "|")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s")
_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z /&().-]{0,30}:\s")
_SEPARATOR_ROW = re.compile(r"^[\s|:+-]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z(\d])")
_CONNECTIVE_END = re.compile(r"\b(?:in|on|since|from|of|and|or|to|at|by|with|the|a|an|for|after|before|dated|than)$", re.IGNORECASE)
WRAP_MIN_CHARS = 55
"""A line at least this long that ends mid-sentence is taken to be wrapped."""


def table_cells(line: str) -> list[str] | None:
    """The non-empty cells of a pipe-table row, or None when the line is not one."""
    stripped = line.strip()
    if stripped.count("|") < 2:
        return None
    if _SEPARATOR_ROW.match(stripped):
        return []
    return [cell.strip() for cell in stripped.strip("|").split("|") if cell.strip()]


def _starts_new(line: str) -> bool:
    stripped = line.strip()
    head = stripped[:24]
    return (
        not stripped
        or bool(_BULLET.match(line))
        or bool(_LABEL.match(line))
        or stripped.startswith(("|", "[", "#", "="))
        or any(d.start <= 2 for d in find_dates(head))
        or stripped.isupper()
    )


_TAIL_CHARS = 64
"""How much of a logical line's end `_joins` reads: more than the longest connective word plus the `\\b` before it, so
reading the tail decides exactly what reading the whole line would (and a sentence wrapped over 10,000 lines stays linear:
re-reading the whole joined line for each physical line was quadratic)."""


def _joins(tail: str, raw: str, length: int, pipes: int) -> bool:
    """Whether physical line `raw` carries on the logical line before it: its last `_TAIL_CHARS` characters
    (stripped), its length and its count of '|'."""
    if not tail or tail.endswith(_TERMINAL) or pipes >= 2:  # two '|': the line before is a table row
        return False
    stripped = raw.strip()
    if not stripped or table_cells(raw) is not None:
        return False
    indented_more = raw[:1].isspace() and not _BULLET.match(raw)
    # A long line that ends mid-sentence wraps onto a line that carries on in lower case (or indented); a capitalised
    # line after it starts a new statement of a worksheet or letter whose lines carry no full stops (issue 43).
    long_wrap = length >= WRAP_MIN_CHARS and not stripped[0].isupper()
    if (stripped[0].islower() or long_wrap or indented_more) and not _starts_new(raw):
        return True
    # "... who presented in / January 2026 with ...": a line ending on a connective carries on.
    return bool(_CONNECTIVE_END.search(tail))


def wrapped_groups(text: str) -> list[list[int]]:
    """Indices of the physical lines of `text` grouped into logical lines (a wrapped sentence is one group)."""
    groups: list[list[int]] = []
    tail, length, pipes = "", 0, 0  # of the logical line so far, joined with single spaces and stripped
    for i, raw in enumerate(text.split("\n")):
        if groups and _joins(tail, raw, length, pipes):
            groups[-1].append(i)
            part = raw.strip()
            tail, length, pipes = (tail + " " + part)[-_TAIL_CHARS:], length + 1 + len(part), pipes + part.count("|")
        else:
            groups.append([i])
            part = raw.strip()
            tail, length, pipes = part[-_TAIL_CHARS:], len(part), part.count("|")
    return groups


def logical_lines(text: str) -> list[str]:
    """Physical lines with wrapped sentences joined and table rows as "key: value" lines."""
    lines = text.split("\n")
    out: list[str] = []
    for group in wrapped_groups(text):
        first = lines[group[0]]
        cells = table_cells(first)
        if cells is not None:
            out.extend([f"{cells[0]}: {cells[1]}"] if len(cells) == 2 else cells)
            continue
        out.append(" ".join(lines[i].strip() for i in group))
    return out


def statements(text: str) -> list[str]:
    """Sentences and clauses across wrapped lines: each logical line split at sentence ends."""
    result: list[str] = []
    for line in logical_lines(text):
        if line:
            result.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return result
