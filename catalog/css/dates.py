"""Dates as clinicians write them in a chart: find, parse and re-format them.

Packets written by hand use ISO dates, US and European numeric dates, month names
("14 Jan 2026", "Jan 14, 2026") and month precision ("03/2025", "March 2025"). The
date-format control (N1), the residue check (which dates chart entries) and case import
(which infers the board date) read them all through this one module.

An all-numeric date whose day and month are both <= 12 ("03/04/2025") is ambiguous
between US and European order; `reformat_dates` keeps its reading open by changing only
the separator, so a control never changes what a date means. `numeric_order` settles the
order for a whole packet when another of its dates can only be read one way ("20/01/2026"
makes "11/02/2026" the 11th of February); `find_dates(text, order)` then reads it so.

Two-digit years ("25/02/26", "14.01.26") and day-first dashes ("16-03-2026") are read too.
Month-precision dates with a two-digit year ("Dec 25", "11/25") are read only where a dated
entry begins (the start of a line): elsewhere "Dec 25" is a day without a year and "2/15"
a node count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?"
    r"|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)

DATE_PATTERN = re.compile(
    r"(?<![\w/.-])(?:"
    r"(?P<iso>(?P<iy>(?:19|20)\d{2})-(?P<im>\d{1,2})-(?P<id>\d{1,2}))"
    r"|(?P<num>(?P<na>\d{1,2})(?P<sep>[/.-])(?P<nb>\d{1,2})(?P=sep)(?P<ny>(?:19|20)\d{2}|\d{2}))"
    r"|(?P<dmy>(?P<dd>\d{1,2})(?:st|nd|rd|th)?[ -](?P<dm>" + _MONTH + r")[ -,]+(?P<dy>(?:19|20)\d{2}))"
    r"|(?P<mdy>(?P<mm>" + _MONTH + r") (?P<md>\d{1,2})(?:st|nd|rd|th)?,? (?P<my>(?:19|20)\d{2}))"
    r"|(?P<my_num>(?P<mn>\d{1,2})/(?P<mny>(?:19|20)\d{2}))"
    r"|(?P<my_name>(?P<mnm>" + _MONTH + r") (?P<mnmy>(?:19|20)\d{2}))"
    r"|(?P<my_num2>(?P<mn2>\d{1,2})/(?P<mny2>\d{2}))"
    r"|(?P<my_name2>(?P<mnm2>" + _MONTH + r") (?P<mnmy2>\d{2}))"
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
    """iso, num (all-numeric D/M/Y or M/D/Y), dmy, mdy, my_num, my_name, my_num2, my_name2 (two-digit years)."""
    ambiguous: bool = False


def _month(name: str) -> int:
    return MONTHS.index(name.strip(".").lower()[:3]) + 1


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _year(text: str) -> int:
    return int(text) if len(text) == 4 else 2000 + int(text)


def _starts_entry(text: str, start: int) -> bool:
    """Whether only bullets, bars, brackets or blanks precede `start` on its line."""
    line_start = text.rfind("\n", 0, start) + 1
    return not re.sub(r"[\s\-*•|(\[]", "", text[line_start:start])


Order = Literal["dmy", "mdy"]


def numeric_order(text: str) -> Order | None:
    """Day-first or month-first for the packet's numeric dates, when one of them settles it.

    None when no numeric date can only be read one way, or when the packet uses both orders.
    """
    day_first = month_first = False
    for m in DATE_PATTERN.finditer(text):
        if m.group("num"):
            a, b = int(m["na"]), int(m["nb"])
            day_first |= a > 12 and b <= 12
            month_first |= b > 12 and a <= 12
    if day_first == month_first:
        return None
    return "dmy" if day_first else "mdy"


def find_dates(text: str, order: Order | None = None) -> list[FoundDate]:
    """Every date in `text` that parses to a real calendar date, in reading order.

    Numeric D/M/Y vs M/D/Y: read in `order` when given (see `numeric_order`); otherwise as
    US (month first) unless the first number cannot be a month. `ambiguous` is set when both
    readings are valid, differ, and no `order` settles them.
    """
    found: list[FoundDate] = []
    for m in DATE_PATTERN.finditer(text):
        value: date | None = None
        ambiguous = False
        form = m.lastgroup or ""
        if m.group("iso"):
            form, value = "iso", _safe(int(m["iy"]), int(m["im"]), int(m["id"]))
        elif m.group("num"):
            a, b, y = int(m["na"]), int(m["nb"]), _year(m["ny"])
            if m["sep"] == "-" and len(m["ny"]) == 2:
                continue  # "12-10-25" is as likely a range or a code as a date
            form = "num"
            us, eu = _safe(y, a, b), _safe(y, b, a)
            if order is not None and us is not None and eu is not None:
                value = eu if order == "dmy" else us
            else:
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
        elif m.group("my_num2"):
            if 1 <= int(m["mn2"]) <= 12 and _starts_entry(text, m.start()):
                form, value = "my_num2", _safe(_year(m["mny2"]), int(m["mn2"]), 1)
        elif m.group("my_name2") and _starts_entry(text, m.start()):
            form, value = "my_name2", _safe(_year(m["mnmy2"]), _month(m["mnm2"]), 1)
        if value is not None:
            found.append(FoundDate(m.start(), m.end(), m.group(0), value, form, ambiguous))
    return found


def _other_form(found: FoundDate) -> str:
    """The same date in a different written form, never changing its reading."""
    v = found.value
    if found.form == "iso":
        # A month name, never a numeric form: "03/11/2025" would be ambiguous where the ISO date was not.
        return f"{v.day} {MONTHS[v.month - 1].capitalize()} {v.year}"
    if found.form == "num":
        if found.ambiguous:
            # Keep the order (and so both readings); change only the separator.
            sep = "-" if "/" in found.text else "/"
            return re.sub(r"[/.-]", sep, found.text)
        return v.isoformat()
    if found.form in ("dmy", "mdy"):
        return v.isoformat()
    if found.form == "my_num":
        return f"{MONTHS[v.month - 1].capitalize()} {v.year}"
    if found.form in ("my_name", "my_num2"):
        return f"{v.month:02d}/{v.year}" if found.form == "my_name" else f"{MONTHS[v.month - 1].capitalize()} {v.year}"
    if found.form == "my_name2":
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


def _is_entry_header(line: str, date_end: int) -> bool:
    """A dated line that heads a block ("[2025-03-01] Oncology clinic", "14/03/2025 MDT:"), not a statement."""
    rest = line[date_end:].strip(" ]):-–\t")
    return (
        line.lstrip().startswith("[")
        or line.rstrip().endswith(":")
        or (len(rest.split()) <= 4 and not rest.endswith((".", ";", "!", "?")))
    )


def _continues(previous: str, line: str, entry_indent: int) -> bool:
    """Whether `line` carries on the statement of `previous` (a wrapped sentence or an indented sub-line)."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip())
    if indent > entry_indent:
        return True
    if stripped[:1].islower():
        return True
    return previous.rstrip().endswith((",", "-", "–", "and", "with", "of", "for", "to", "the"))


def _latest_reading(found: FoundDate) -> date:
    """The latest day a date can mean: an entry is history only when every reading of it is.

    An ambiguous numeric date counts at its later reading, a month-precision date ("Feb 26")
    at the month's last day.
    """
    if found.form in ("my_num", "my_name", "my_num2", "my_name2"):
        following = date(found.value.year + found.value.month // 12, found.value.month % 12 + 1, 1)
        return date.fromordinal(following.toordinal() - 1)
    if not found.ambiguous:
        return found.value
    swapped = _safe(found.value.year, found.value.day, found.value.month)
    return max(found.value, swapped) if swapped else found.value


def entry_dates(section: str, order: Order | None = None) -> list[date | None]:
    """The date of the chart entry each line of a section belongs to (None when undated).

    A line that starts with a date (after bullets, brackets, table bars or a short label)
    begins a dated entry. An entry headed by a short header line ("[2025-03-01] Oncology
    clinic", "14/03/2025 MDT:") owns the lines under it until the next dated line or a blank
    line followed by an undated one. A dated statement ("Mar 2025 started FOLFOX, tolerated
    well.") owns only itself and its wrapped or indented continuation: the next statement
    is not history of that date (issue 22). Numeric dates are read in `order` (the
    packet's, see `numeric_order`); one that stays ambiguous counts at its later reading.
    """
    dates: list[date | None] = []
    current: date | None = None
    block = False
    previous_blank = False
    previous = ""
    indent = 0
    for line in section.split("\n"):
        stripped = line.strip()
        head = stripped[:_ENTRY_DATE_WINDOW]
        first = next((d for d in find_dates(head, order) if d.start <= 12), None)
        if first is not None:
            current = _latest_reading(first)
            block = _is_entry_header(stripped, first.end)
            indent = len(line) - len(line.lstrip())
        elif not stripped:
            previous_blank = True
            dates.append(current)
            continue
        elif previous_blank and not stripped.startswith(("-", "*", "•", "|")) and stripped.isupper():
            current = None  # an undated heading starts a new block
        elif current is not None and not block and not _continues(previous, line, indent):
            current = None  # the dated statement ended; this line is not part of it
        elif current is not None and not block and previous_blank:
            current = None
        previous_blank = False
        previous = line
        dates.append(current)
    return dates


def latest_date(text: str) -> date | None:
    """The latest full date (day precision) written anywhere in `text` (an ambiguous one read in the packet's order)."""
    full = [d.value for d in find_dates(text, numeric_order(text)) if d.form in ("iso", "num", "dmy", "mdy")]
    return max(full) if full else None
