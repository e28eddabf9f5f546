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


def logical_lines(text: str) -> list[str]:
    """Physical lines with wrapped sentences joined and table rows as "key: value" lines."""
    out: list[str] = []
    joinable = False
    for raw in text.splitlines():
        cells = table_cells(raw)
        if cells is not None:
            if len(cells) == 2:
                out.append(f"{cells[0]}: {cells[1]}")
            else:
                out.extend(cells)
            joinable = False
            continue
        stripped = raw.strip()
        if not stripped:
            joinable = False
            out.append("")
            continue
        indented_more = bool(out) and raw[:1].isspace() and not _BULLET.match(raw)
        continues = joinable and (
            (stripped[0].islower() or len(out[-1]) >= WRAP_MIN_CHARS or indented_more) and not _starts_new(raw)
            # "... who presented in / January 2026 with ...": a line ending on a connective carries on
            or bool(_CONNECTIVE_END.search(out[-1]))
        )
        if continues:
            out[-1] = out[-1].rstrip() + " " + stripped
        else:
            out.append(stripped)
        joinable = not out[-1].rstrip().endswith(_TERMINAL)
    return out


def statements(text: str) -> list[str]:
    """Sentences and clauses across wrapped lines: each logical line split at sentence ends."""
    result: list[str] = []
    for line in logical_lines(text):
        if line:
            result.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return result
