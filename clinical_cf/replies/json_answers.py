"""JSON in a reply: every top-level object, strict or syntax-repaired (steps a and b of the reading order)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import json_repair

from clinical_cf.replies.final import MAX_JSON_DEPTH, MAX_REPAIR_CHARS, Provenance, bounded, loads

# --------------------------------------------------------------------------- JSON

@dataclass(frozen=True)
class Found:
    """A JSON object found in a reply and how it was read."""

    value: dict[str, Any]
    provenance: Provenance
    start: int
    end: int = -1


def json_objects(text: str) -> list[Found]:
    """Every top-level JSON object in `text`, in order of appearance.

    Each balanced brace-delimited span is read with the standard decoder, and when that fails,
    repaired with `json_repair` (trailing commas, single quotes, Python literals) and marked
    `repaired`. A span the reply ends inside (cut at a token cap, or never closed) is not an
    answer: syntax repair is for complete JSON only (`json_cut` says the reply is cut). An
    object nested in a span is part of that span, never a top-level answer of its own. Spans
    nested deeper than `MAX_JSON_DEPTH` are skipped, and long broken spans are not repaired.
    A tool-call wrapper (`{"name": ..., "arguments": "<JSON>"}`) is read as its arguments.
    """
    text, _ = bounded(text)
    found: list[Found] = []
    for span, start, depth, closed in _spans(text):
        if depth > MAX_JSON_DEPTH:
            continue
        if not closed:
            continue  # JSON the reply ended inside is cut (`json_cut`): never repaired into an answer
        try:
            value = loads(span)
            provenance: Provenance = "json"
        except ValueError as ex:
            if not isinstance(ex, json.JSONDecodeError):
                continue  # a number out of bounds: never repaired into something else (`number_problem` says why)
            if len(span) > MAX_REPAIR_CHARS:
                continue
            try:
                value = json_repair.repair_json(span, return_objects=True, skip_json_loads=True)
            except Exception:  # a span the repair library gives up on is simply not JSON
                continue
            provenance = "repaired"
        except RecursionError:
            continue
        if isinstance(value, dict) and value and not _elided_span(span):
            value = _unwrap_tool_call(value)
            found.append(Found(value, provenance, start, start + len(span)))
    return found


_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.){0,2000}"')
_ELISION = re.compile(r"(?:^|[\[{,:])[ \t\n]{0,40}(?:\.{2,}|…|etc\.?)[ \t\n]{0,40}(?=[\]},]|$)")
_ELIDED_STRING = re.compile(r'[\[,][ \t\n]{0,40}"[ \t]{0,4}(?:\.{2,}|…|etc\.?)[ \t]{0,4}"[ \t\n]{0,40}[\]},]')


def _elided_span(span: str) -> bool:
    """JSON that leaves part of itself out (`[X, ...]`, `"..."` as a list element, a bare `...` value): it states
    less than it claims, so it is never read or repaired into a complete answer (issue 44)."""
    if _ELIDED_STRING.search(span):
        return True
    return bool(_ELISION.search(_JSON_STRING.sub('""', span)))


def elision(text: str) -> str | None:
    """Why the final answer's JSON is elided (an ellipsis in place of items), or None."""
    text, _ = bounded(text)
    for span, _start, depth, closed in _spans(text):
        if closed and depth <= MAX_JSON_DEPTH and _elided_span(span):
            return f"elided: the JSON answer leaves items out with an ellipsis ({' '.join(span.split())[:80]})"
    return None


def _unwrap_tool_call(value: dict[str, Any]) -> dict[str, Any]:
    """`{"name": "submit", "arguments": "{...}"}` (a tool call written as text) -> its arguments."""
    keys = set(value)
    if keys <= {"name", "arguments", "type", "id"} and "arguments" in keys:
        arguments = value["arguments"]
        if isinstance(arguments, str) and len(arguments) <= MAX_REPAIR_CHARS and _depth(arguments) <= MAX_JSON_DEPTH:
            try:
                arguments = loads(arguments)
            except (ValueError, RecursionError):
                return value
        if isinstance(arguments, dict) and arguments:
            return arguments
    return value


def _depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth -= 1
    return deepest


def _brace_spans(text: str) -> Iterable[tuple[str, int, int]]:
    """Top-level `{...}` spans with their bracket depth, string-aware; the last may be unterminated."""
    for span, start, depth, _ in _spans(text):
        yield span, start, depth


def _spans(text: str) -> Iterable[tuple[str, int, int, bool]]:
    """`_brace_spans` with whether each span closed (only the last can be open: the reply ended inside it)."""
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            return
        depth, deepest, end, quote, escaped = 0, 0, None, None, False
        for i in range(start, len(text)):
            ch = text[i]
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote or (quote == "'" and ch == "\n"):
                    quote = None
            elif ch == '"' or (ch == "'" and not text[i - 1].isalnum()):
                quote = ch
            elif ch in "{[":
                depth += 1
                deepest = max(deepest, depth)
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        yield (text[start:end] if end else text[start:]), start, deepest, end is not None
        if end is None:
            return
        position = end


def normal_key(key: object) -> str:
    """A JSON key as the schemas name it: `criticalError`, `Critical Error`, `critical-error` -> `critical_error`."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(key).strip())
    return re.sub(r"[\s-]+", "_", text).lower()


def lowered_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {normal_key(k): v for k, v in data.items()}


def find_object(
    text: str, accept: Callable[[dict[str, Any]], bool] = lambda _: True, last: bool = True
) -> Found | None:
    """The last (or first) JSON object in the final answer that `accept` takes."""
    candidates = [f for f in json_objects(text) if accept(f.value)]
    if not candidates:
        return None
    return candidates[-1] if last else candidates[0]


def outside_json(text: str, found: Iterable[Found]) -> str:
    """The final answer's text with the given JSON spans (and code fences) removed: the prose around them."""
    pieces, position = [], 0
    for f in sorted(found, key=lambda f: f.start):
        pieces.append(text[position:f.start])
        position = f.end if f.end >= 0 else len(text)
    pieces.append(text[position:])
    return re.sub(r"```[A-Za-z]{0,10}", " ", " ".join(pieces)).strip()


def json_cut(text: str) -> bool:
    """Whether the reply ends inside a JSON object: a top-level `{` whose span never closes, strings and nesting
    read as a partial-JSON parser reads them (a brace inside a string is not structure). Such JSON was cut
    (by a token cap the provider may not have reported) and states no answer."""
    text, _ = bounded(text)
    closed = [c for _, _, _, c in _spans(text)]
    return bool(closed) and not closed[-1]
