"""What a CSS tuple's edit changed, as a small record the judge's score carries (issue 45).

The report reads sample summaries only, where Inspect drops any score-metadata field whose JSON is over 1,000
characters (`inspect_ai.log._util.thin_metadata`; a string is also cut and its whitespace collapsed). So the scorer
records the edit as word-level segments, each unchanged stretch cut to a few words of context, spread over a few
small list fields (`edit_fields`, read back with `edit_from`), and the page draws `<del>` / `<ins>` from them; an
edit too large for them is recorded as such, and the report then reads that tuple's packets from the full sample.

    segments = edit_segments(before, after)   # [["=", "Pt "], ["-", "s/p"], ["+", "is being evaluated for"], ...]

Segment kinds: "=" unchanged text, "-" removed, "+" inserted, "…" an unchanged stretch left out.
Lines are matched first (cheap on 10k-character packets), then only the changed lines are compared word by word;
unchanged lines before the first edit and after the last are set aside in linear time.
"""

from __future__ import annotations

import difflib
import json
import re

from clinical_cf.catalog.css.schema import render_sections

CONTEXT_WORDS = 6
"""Words of unchanged text kept on each side of a change."""
RECORD_LIMIT = 1000
"""The most characters an edit record's JSON may take: Inspect's summaries drop a metadata field over 1,000."""

Segment = list[str]


def common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two token lists."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def edit_segments(before: str, after: str, context: int | None = CONTEXT_WORDS) -> list[Segment]:
    """The word-level difference between two texts as segments; `context` words of unchanged text kept around each
    change (None keeps every unchanged word of the changed lines)."""
    lines_a, lines_b = before.splitlines(), after.splitlines()
    head, tail = common_ends(lines_a, lines_b)
    a, b = lines_a[head:len(lines_a) - tail], lines_b[head:len(lines_b) - tail]
    out: list[Segment] = [["…"]] if head else []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            _gap(out)
            continue
        old, new = "\n".join(a[i1:i2]), "\n".join(b[j1:j2])
        if tag == "replace":
            out += _words(old, new, context)
        elif tag == "delete":
            out.append(["-", old])
        else:
            out.append(["+", new])
    if tail:
        _gap(out)
    while out and out[0][0] == "…":
        out.pop(0)
    while out and out[-1][0] == "…":
        out.pop()
    return out


def _gap(out: list[Segment]) -> None:
    if out and out[-1][0] != "…":
        out.append(["…"])


def _words(old: str, new: str, context: int | None) -> list[Segment]:
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    # An edit touches a span: the unchanged words around it are matched in linear time, and only the span between
    # goes to SequenceMatcher (quadratic in what it is given).
    head, tail = common_ends(a, b)
    parts: list[Segment] = []
    _same(parts, a[:head], context, keep="end")
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False).get_opcodes():
        if tag == "equal":
            _same(parts, a_mid[i1:i2], context, keep="both")
            continue
        if i2 > i1:
            parts.append(["-", "".join(a_mid[i1:i2])])
        if j2 > j1:
            parts.append(["+", "".join(b_mid[j1:j2])])
    _same(parts, a[len(a) - tail:], context, keep="start")
    return parts


def _same(parts: list[Segment], tokens: list[str], context: int | None, keep: str) -> None:
    """Unchanged tokens, cut to `context` words at the end(s) next to a change."""
    if not tokens:
        return
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    if context is None or len(words) <= 2 * context:
        parts.append(["=", "".join(tokens)])
        return
    if keep in ("start", "both"):
        parts.append(["=", "".join(tokens[:words[context - 1] + 1])])
    parts.append(["…"])
    if keep in ("end", "both"):
        parts.append(["=", "".join(tokens[words[-context]:])])


def edit_fields(before: str, after: str) -> dict:
    """The edit as score-metadata fields that Inspect's sample summaries keep whole: `edit_parts` (how many) and
    `edit_1` ... `edit_N`, each a flat list of strings whose first character is the segment's kind ("=", "-", "+",
    "…"), each under `RECORD_LIMIT` characters of JSON as Inspect measures it (indented); `edit_parts` None when
    the edit needs more than `MAX_PARTS` fields (the report then reads the packets from the full sample)."""
    flat: list[str] = []
    for segment in edit_segments(before, after):
        kind, text = segment[0], segment[1] if len(segment) > 1 else ""
        # A long stretch is split into pieces of one kind (adjacent pieces of a kind join back into it).
        flat += [kind] if kind == "…" else [kind + text[i:i + PIECE] for i in range(0, max(len(text), 1), PIECE)]
    parts: list[list[str]] = [[]]
    for item in flat:
        if parts[-1] and _size(parts[-1] + [item]) > RECORD_LIMIT:
            parts.append([])
        parts[-1].append(item)
    if len(parts) > MAX_PARTS:
        return {"edit_parts": None}
    fields: dict = {"edit_parts": len(parts) if flat else 0}
    for i, part in enumerate(parts if flat else [], start=1):
        fields[f"edit_{i}"] = part
    return fields


PIECE = 300
"""Characters of one piece of a long changed or unchanged stretch (JSON escapes can triple it)."""
MAX_PARTS = 12
"""The most fields an edit record takes (12 x 1,000 characters); a larger edit is read from the full sample."""


def _size(part: list[str]) -> int:
    return len(json.dumps(part, indent=2))  # as Inspect measures a summary's metadata value, escaped: the larger


def edit_from(metadata: dict) -> list[Segment] | None:
    """The segments an `edit_fields` record holds (adjacent pieces of one kind joined), or None when the metadata
    holds no whole record (a log from before issue 45, a record too large, or a field Inspect thinned)."""
    count = metadata.get("edit_parts")
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    out: list[Segment] = []
    for i in range(1, count + 1):
        part = metadata.get(f"edit_{i}")
        if not isinstance(part, list) or not all(isinstance(x, str) and x for x in part):
            return None
        for item in part:
            kind, text = item[0], item[1:]
            if kind == "…":
                out.append(["…"])
            elif out and out[-1][0] == kind:
                out[-1][1] += text
            else:
                out.append([kind, text])
    return out


def tuple_packets(metadata: dict, counterfactual_input: str) -> tuple[str, str]:
    """A CSS tuple's baseline and counterfactual packets as shown to the model: from its sections when the sample
    records them, else the baseline packet and the counterfactual prompt."""
    if "baseline_sections" in metadata and "counterfactual_sections" in metadata:
        return render_sections(metadata["baseline_sections"]), render_sections(metadata["counterfactual_sections"])
    return str(metadata.get("baseline_packet", "")), counterfactual_input


def items(arm) -> list[str] | None:
    """An arm's recommended treatments, in order (None when the arm produced nothing to read)."""
    if arm is None or arm.is_invalid or arm.is_unreadable:
        return None
    return [r.treatment for r in arm.recommendations]


def summary_fields(arms, metadata: dict, counterfactual_input: str, epoch: int) -> dict:
    """The small score-metadata fields the report and side-by-side pages read from Inspect's sample summaries: each
    arm's items (a field is left out when its JSON would be over Inspect's 1,000 characters: the report then reads the
    explanation or the full sample), the edit's segments (None when too large) and the epoch."""
    out: dict = {"epoch": epoch, **edit_fields(*tuple_packets(metadata, counterfactual_input))}
    for name in ("baseline", "counterfactual"):
        listed = items(getattr(arms, name))
        if listed is not None and _size(listed) <= RECORD_LIMIT:
            out[f"{name}_items"] = listed
    return out
