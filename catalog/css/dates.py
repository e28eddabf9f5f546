"""Dates as clinicians write them in a chart: find, parse and re-format them.

Packets written by hand use ISO dates, US and European numeric dates, month names
("14 Jan 2026", "Jan 14, 2026") and month precision ("03/2025", "March 2025"). The
date-format control (N1), the residue check (which dates chart entries) and case import
(which infers the board date) read them all through this one module.

An all-numeric date whose day and month are both <= 12 ("03/04/2025") is ambiguous
between US and European order; `reformat_dates` keeps its reading open by changing only
the separator, so a control never changes what a date means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"

DATE_PATTERN = re.compile(
    r"(?<![\w/.-])(?:"
    r"(?P<iso>(?P<iy>(?:19|20)\d{2})-(?P<im>\d{1,2})-(?P<id>\d{1,2}))"
    r"|(?P<num>(?P<na>\d{1,2})(?P<sep>[/.])(?P<nb>\d{1,2})(?P=sep)(?P<ny>(?:19|20)\d{2}))"
    r"|(?P<dmy>(?P<dd>\d{1,2})(?:st|nd|rd|th)?[ -](?P<dm>" + _MONTH + r")[ -,]+(?P<dy>(?:19|20)\d{2}))"
    r"|(?P<mdy>(?P<mm>" + _MONTH + r") (?P<md>\d{1,2})(?:st|nd|rd|th)?,? (?P<my>(?:19|20)\d{2}))"
    r"|(?P<my_num>(?P<mn>\d{1,2})/(?P<mny>(?:19|20)\d{2}))"
    r"|(?P<my_name>(?P<mnm>" + _MONTH + r") (?P<mnmy>(?:19|20)\d{2}))"
    r")(?![\w/-])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FoundDate:
    start: int
    end: int
    text: str
    value: date
    form: str
    """iso, num (all-numeric D/M/Y or M/D/Y), dmy, mdy, my_num, my_name."""
    ambiguous: bool = False


def _month(name: str) -> int:
    return MONTHS.index(name.strip(".").lower()[:3]) + 1


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def find_dates(text: str) -> list[FoundDate]:
    """Every date in `text` that parses to a real calendar date, in reading order.

    Numeric D/M/Y vs M/D/Y: read as US (month first) unless the first number cannot be a
    month; `ambiguous` is set when both readings are valid and differ.
    """
    found: list[FoundDate] = []
    for m in DATE_PATTERN.finditer(text):
        value: date | None = None
        ambiguous = False
        form = m.lastgroup or ""
        if m.group("iso"):
            form, value = "iso", _safe(int(m["iy"]), int(m["im"]), int(m["id"]))
        elif m.group("num"):
            a, b, y = int(m["na"]), int(m["nb"]), int(m["ny"])
            form = "num"
            us, eu = _safe(y, a, b), _safe(y, b, a)
            value = us or eu
            ambiguous = us is not None and eu is not None and a != b
        elif m.group("dmy"):
            form, value = "dmy", _safe(int(m["dy"]), _month(m["dm"]), int(m["dd"]))
        elif m.group("mdy"):
            form, value = "mdy", _safe(int(m["my"]), _month(m["mm"]), int(m["md"]))
        elif m.group("my_num"):
            if 1 <= int(m["mn"]) <= 12:
                form, value = "my_num", _safe(int(m["mny"]), int(m["mn"]), 1)
        elif m.group("my_name"):
            form, value = "my_name", _safe(int(m["mnmy"]), _month(m["mnm"]), 1)
        if value is not None:
            found.append(FoundDate(m.start(), m.end(), m.group(0), value, form, ambiguous))
    return found


def _other_form(found: FoundDate) -> str:
    """The same date in a different written form, never changing its reading."""
    v = found.value
    if found.form == "iso":
        return f"{v.month:02d}/{v.day:02d}/{v.year}"
    if found.form == "num":
        if found.ambiguous:
            # Keep the order (and so both readings); change only the separator.
            sep = "-" if "/" in found.text else "/"
            return re.sub(r"[/.]", sep, found.text)
        return v.isoformat()
    if found.form in ("dmy", "mdy"):
        return v.isoformat()
    if found.form == "my_num":
        return f"{MONTHS[v.month - 1].capitalize()} {v.year}"
    if found.form == "my_name":
        return f"{v.month:02d}/{v.year}"
    return found.text


def reformat_dates(text: str) -> str:
    """Rewrite every date in `text` in another written form (the N1 negative control)."""
    out: list[str] = []
    last = 0
    for found in find_dates(text):
        out.append(text[last : found.start])
        out.append(_other_form(found))
        last = found.end
    out.append(text[last:])
    return "".join(out)


_ENTRY_DATE_WINDOW = 32
"""A date this close to the start of a line dates the entry the line begins."""


def entry_dates(section: str) -> list[date | None]:
    """The date of the chart entry each line of a section belongs to (None when undated).

    A line that starts with a date (after bullets, brackets, table bars or a short label)
    begins a dated entry; the lines under it belong to that entry until the next dated
    line or a blank line followed by an undated one.
    """
    dates: list[date | None] = []
    current: date | None = None
    previous_blank = False
    for line in section.split("\n"):
        stripped = line.strip()
        head = stripped[:_ENTRY_DATE_WINDOW]
        first = next((d for d in find_dates(head) if d.start <= 12), None)
        if first is not None:
            current = first.value
        elif not stripped:
            previous_blank = True
            dates.append(current)
            continue
        elif previous_blank and not stripped.startswith(("-", "*", "•", "|")) and stripped.isupper():
            current = None  # an undated heading starts a new block
        previous_blank = False
        dates.append(current)
    return dates


def latest_date(text: str) -> date | None:
    """The latest full date (day precision) written anywhere in `text`."""
    full = [d.value for d in find_dates(text) if d.form in ("iso", "num", "dmy", "mdy")]
    return max(full) if full else None
