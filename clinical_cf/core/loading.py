"""The one bounded reader for every user file (YAML, JSON, JSONL, text), and entry-by-entry validation.

Every read of a catalog, data, lock or annotation file goes through here, so each limit holds
everywhere and each refusal names the file, the line or entry and the field (see `core.errors`):

- **what a path is**: only a regular file is opened: a FIFO, a device (`/dev/zero`), a socket or a
  directory is refused from its `stat` before opening, and again from the opened descriptor (so a
  file swapped for a FIFO in between is refused too); opening never blocks (`O_NONBLOCK`);
- **size**: `MAX_FILE_BYTES`, checked from `stat` before reading and enforced by a bounded read
  (a file that grows while it is read is refused, never read to the end);
- **line length**: `MAX_JSONL_LINE_CHARS` per JSONL record, `MAX_TEXT_LINE_CHARS` per YAML or text line;
- **nesting depth**: `MAX_DEPTH`, checked before any recursive step: for YAML while composing (the
  parser itself is iterative), for JSON by a linear pre-scan of brackets outside strings, so a
  5,000-deep YAML or 100,000-deep JSON line is refused with its line instead of a RecursionError;
- **aliases**: a YAML document whose aliases expand to more than `MAX_EXPANDED_NODES` nodes (a
  "billion laughs" bomb) or whose alias refers to its own container is refused while composing;
- **duplicate keys**: refused with the line of the second one (YAML) or the record's line (JSON):
  the second value silently winning once replaced a catalog's fifteen interventions;
- **non-finite numbers**: NaN, Infinity, `.inf` and overflowing literals (`1e999`) are refused with
  the field path (`predictions.0.threshold`), so no lab value ever prints as "WBC nan";
- **JSONL records** are split on "\\n" only (a trailing "\\r" is dropped): U+2028, U+0085 and the
  other Unicode line breaks are valid inside a JSON string, and `str.splitlines` cut records there.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import ComposerError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clinical_cf.core.errors import CatalogError, validation_errors

T = TypeVar("T", bound=BaseModel)

MAX_FILE_BYTES = 32 * 1024 * 1024
"""Largest catalog, data or lock file read: 32 MB (the largest bundled file, the CSS cases, is 5 MB)."""

MAX_JSONL_LINE_CHARS = 24 * 1024 * 1024
"""Longest JSONL record: a case may carry nine sections of up to 1,000,000 characters each, escaped."""

MAX_TEXT_LINE_CHARS = 1_000_000
"""Longest line of a YAML or text file (hand-written catalogs have lines under 1,000 characters)."""

MAX_DEPTH = 64
"""Deepest nesting of mappings and lists (the bundled files nest at most 6 deep)."""

MAX_EXPANDED_NODES = 1_000_000
"""Most YAML nodes a document may expand to with its aliases counted at every use (bundled: none)."""

_READ_CHUNK = 1024 * 1024


# ---------------------------------------------------------------- paths and bytes

def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def check_regular_file(path: str | Path, limit: int | None = None) -> os.stat_result:
    """The `stat` of a regular file within the size limit, or a CatalogError saying what the path is instead.

    Never opens the path: a FIFO would block, `/dev/zero` would never end.
    """
    path = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CatalogError(path, "file not found") from None
    except OSError as ex:
        raise CatalogError(path, f"cannot read: {ex.strerror or ex}") from None
    if stat.S_ISDIR(info.st_mode):
        raise CatalogError(path, "is a directory; pass the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise CatalogError(path, f"is {_file_kind(info.st_mode)}, not a regular file; pass a file")
    if info.st_size > limit:
        raise CatalogError(path, _too_big(info.st_size, limit))
    return info


def _too_big(size: int, limit: int) -> str:
    def shown(n: int) -> str:
        return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"

    return f"is {shown(size)}; catalog and data files are limited to {shown(limit)}"


def read_bytes_checked(path: str | Path, limit: int | None = None) -> bytes:
    """A regular file's bytes, read with a bound: never more than `limit` + 1 bytes are read."""
    path = Path(path)
    limit = MAX_FILE_BYTES if limit is None else limit
    check_regular_file(path, limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as ex:
        raise CatalogError(path, f"cannot read: {ex.strerror or ex}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced between the stat and the open
            raise CatalogError(path, f"is {_file_kind(mode)}, not a regular file; pass a file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as ex:
        raise CatalogError(path, f"cannot read: {ex.strerror or ex}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise CatalogError(path, f"grew past the limit while it was read; {_too_big(size, limit)}")
    return b"".join(chunks)


def read_text_checked(path: str | Path, limit: int | None = None) -> str:
    """A catalog or data file's text, or a CatalogError that says what is wrong with the path.

    A directory, a FIFO or device, a missing file, an oversized file and bytes that are not UTF-8
    each get a sentence naming the file (and the line, for an encoding error), never a traceback.
    """
    path = Path(path)
    data = read_bytes_checked(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as ex:
        line = data[: ex.start].count(b"\n") + 1
        column = ex.start - (data.rfind(b"\n", 0, ex.start) + 1) + 1
        raise CatalogError(
            path, f"line {line}, column {column}: byte 0x{data[ex.start]:02x} is not UTF-8; save the file as UTF-8"
        ) from None


def _check_line_lengths(path: str | Path, lines: list[str], limit: int) -> None:
    if lines and max(map(len, lines)) > limit:
        number = next(i for i, line in enumerate(lines, start=1) if len(line) > limit)
        raise CatalogError(
            path, f"is {len(lines[number - 1]):,} characters long; lines are limited to {limit:,}", line=number
        )


def load_text(path: str | Path, max_line: int = MAX_TEXT_LINE_CHARS) -> str:
    """A text file's content within the size and line-length limits."""
    text = read_text_checked(path)
    _check_line_lengths(path, text.split("\n"), max_line)
    return text


def split_records(text: str) -> list[str]:
    """JSONL records: split on "\\n" only (a "\\r" before it is dropped), never on other Unicode line breaks."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


# ---------------------------------------------------------------- YAML

class _Refused(Exception):
    """A limit broken while composing YAML or parsing JSON; turned into a CatalogError naming the file."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.field = message, line, field


def _dotted(path: list[Any], most: int = 12) -> str:
    """A field path (`predictions.0.threshold`); a deep one is shortened to its first parts."""
    shown = [str(part) for part in path[:most]] + (["…"] if len(path) > most else [])
    return ".".join(shown) or "(top level)"


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader with the limits checked while composing, before anything recursive runs deep.

    The scanner and parser are iterative; composing recurses once per nesting level, so the depth
    is counted there and refused at `MAX_DEPTH`. Each node's size with aliases expanded is
    computed bottom-up (an alias reuses its anchor's size), so a bomb is refused after reading
    its text once, not after expanding it.
    """

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        self._path: list[Any] = []
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:  # type: ignore[override]
        if self.check_event(AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)
            if id(node) not in self._sizes:
                raise _Refused(f"alias *{event.anchor} refers to its own container", line=event.start_mark.line + 1)
            return node
        outer = self._path
        if parent is not None:  # the field path: mapping keys' values and list indexes, "(key)" for a key itself
            label = index.value if isinstance(index, ScalarNode) else index if isinstance(index, int) else "(key)"
            self._path = [*outer, label]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels", line=mark.line + 1, field=_dotted(self._path))
            node = super().compose_node(parent, index)
            self._check(node, self._path)
        finally:
            self._path = outer
            self._depth -= 1
        return node

    def _check(self, node: Node, where: list[Any]) -> None:
        line = node.start_mark.line + 1
        if isinstance(node, ScalarNode):
            size = 1
            if node.tag == "tag:yaml.org,2002:float":
                value = self.construct_yaml_float(node)
                if not math.isfinite(value):
                    raise _Refused(
                        f"{node.value!r} is not a finite number (NaN and infinities are refused)", line=line,
                        field=_dotted(where),
                    )
        elif isinstance(node, SequenceNode):
            size = 1 + sum(self._sizes.get(id(child), 1) for child in node.value)
        else:
            assert isinstance(node, MappingNode)
            size = 1
            seen: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                size += self._sizes.get(id(key), 1) + self._sizes.get(id(value), 1)
                if isinstance(key, ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in seen:
                        raise _Refused(
                            f"duplicate key '{key.value}' (first on line {seen[(key.tag, key.value)]}); "
                            "the second value would silently replace the first",
                            line=key.start_mark.line + 1, field=_dotted([*where, key.value]),
                        )
                    seen[(key.tag, key.value)] = key.start_mark.line + 1
        if size > MAX_EXPANDED_NODES:
            raise _Refused(f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes", line=line)
        self._sizes[id(node)] = size


_NOT_YAML_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character YAML forbids anywhere in a file (PyYAML's `Reader.NON_PRINTABLE`): NUL, other C0 controls, DEL, U+FFFE.
One character class: linear."""


def _check_printable(text: str, path: str | Path) -> None:
    """Refuse a control character with its line and column (PyYAML raises its ReaderError while the loader is built)."""
    found = _NOT_YAML_PRINTABLE.search(text)
    if found is None:
        return
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    raise CatalogError(
        path,
        f"column {column}: control character U+{ord(found.group()):04X} is not allowed in YAML; remove it "
        "(a file saved by a binary tool, or pasted text carrying terminal codes)",
        line=line,
    )


def parse_yaml(text: str, path: str | Path) -> Any:
    """YAML text within every limit above; errors name `path`, the line and the field."""
    _check_line_lengths(path, text.split("\n"), MAX_TEXT_LINE_CHARS)
    _check_printable(text, path)
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    except _Refused as ex:
        raise CatalogError(path, ex.message, line=ex.line, field=ex.field) from None
    except (yaml.YAMLError, ComposerError) as ex:
        mark = getattr(ex, "problem_mark", None)
        problem = getattr(ex, "problem", None) or str(ex).split("\n")[0]
        context = getattr(ex, "context", None)
        detail = f"not valid YAML: {problem}" + (f" ({context})" if context else "")
        raise CatalogError(path, detail, line=mark.line + 1 if mark else None) from None
    except RecursionError:  # cannot happen within MAX_DEPTH; a message rather than a traceback if it did
        raise CatalogError(path, f"nested too deeply (limit {MAX_DEPTH} levels)") from None
    finally:
        loader.dispose()


def load_yaml(path: str | Path) -> Any:
    """A YAML file's content; a syntax error or a broken limit names the line (and the field) in one sentence."""
    path = Path(path)
    return parse_yaml(read_text_checked(path), path)


# ---------------------------------------------------------------- JSON

_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)
"""What the depth pre-scan looks at: an escape (skipped whole), a quote, a bracket. One alternation of fixed-width
tokens: linear, no backtracking, whatever the line holds."""


class _NonFinite:
    """Stands in for a non-finite number while parsing, so the walk after parsing can name its field."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _json_depth_check(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH in one linear pass over the brackets outside strings."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels (column {match.start() + 1})")
        else:
            depth -= 1


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key '{key}'; the second value would silently replace the first", field=key)
        out[key] = value
    return out


def _float(literal: str) -> Any:
    value = float(literal)
    return value if math.isfinite(value) else _NonFinite(literal)


def _children(value: Any) -> Any:
    return iter(value.items()) if isinstance(value, dict) else iter(enumerate(value)) if isinstance(value, list) else iter(())


def _find_non_finite(value: Any) -> tuple[list[Any], _NonFinite] | None:
    """The first non-finite number in document order, with its field path.

    One iterator per open container and a path built only for containers (not for every scalar):
    allocating a path per element made a flat list of 100,000 numbers spend most of its time in
    the garbage collector, super-linear in the list's length.
    """
    if isinstance(value, _NonFinite):
        return [], value
    stack: list[tuple[list[Any], Any]] = [([], _children(value))]
    while stack:
        where, children = stack[-1]
        for key, child in children:
            if isinstance(child, _NonFinite):
                return [*where, key], child
            if isinstance(child, (dict, list)):
                stack.append(([*where, key], _children(child)))
                break
        else:
            stack.pop()
    return None


def parse_json(text: str, path: str | Path, line: int | None = None) -> Any:
    """One JSON document (a JSONL record, a lock) within the limits; errors name `path`, the line and the field."""
    try:
        _json_depth_check(text)
        value = json.loads(text, object_pairs_hook=_pairs, parse_float=_float, parse_constant=_NonFinite)
    except _Refused as ex:
        raise CatalogError(path, ex.message, line=line, field=ex.field) from None
    except json.JSONDecodeError as ex:
        where = f" at column {ex.colno}" if line is not None else f" at line {ex.lineno}, column {ex.colno}"
        raise CatalogError(path, f"not valid JSON ({ex.msg}{where})", line=line) from None
    except (ValueError, RecursionError) as ex:  # an integer too long to convert, or nesting the pre-scan missed
        raise CatalogError(path, f"not valid JSON ({ex})", line=line) from None
    found = _find_non_finite(value)
    if found is not None:
        where, bad = found
        raise CatalogError(
            path, f"{bad.literal} is not a finite number (NaN and infinities are refused)", line=line, field=_dotted(where)
        )
    return value


def load_json_line(text: str, path: str | Path, line: int) -> Any:
    """One JSONL record: the line-length limit, then `parse_json`."""
    if len(text) > MAX_JSONL_LINE_CHARS:
        raise CatalogError(
            path, f"record is {len(text):,} characters long; JSONL lines are limited to {MAX_JSONL_LINE_CHARS:,}",
            line=line,
        )
    return parse_json(text, path, line)


def load_json(path: str | Path, limit: int | None = None) -> Any:
    """A JSON file's content (a lock, the published fingerprints) within the limits."""
    path = Path(path)
    return parse_json(read_text_checked(path, limit), path)


# ---------------------------------------------------------------- entries

def _jsonable(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def validate_strict(model: type[T], raw: Any) -> T:
    """Validate as the JSON the entry is: no "no" for false, no "ten" or "5" for a number.

    Pydantic's default (lax) mode coerces such strings; strict JSON-mode validation keeps ISO
    dates and whole numbers for real fields, which is everything a hand-written file needs.
    YAML dates are passed as their ISO text.
    """
    return model.model_validate_json(json.dumps(raw, default=_jsonable, allow_nan=False), strict=True)


def resolve_user_path(path: str | Path) -> Path:
    """Resolve a path a user passed as a task argument.

    `inspect eval tasks/<name>` runs task code from the task's folder, so a relative path
    is looked up from the directory the command was started in ($PWD) as well.
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate
    started_in = os.environ.get("PWD")
    if started_in and (Path(started_in) / candidate).exists():
        return Path(started_in) / candidate
    return candidate


def comma_list(value: str | list[str] | tuple[str, ...] | None) -> set[str]:
    """The items of a task argument given as "a,b" or as the list Inspect makes of an unquoted `-T name=a,b`."""
    if not value:
        return set()
    items = value if isinstance(value, (list, tuple)) else [value]
    return {part.strip() for item in items for part in str(item).split(",") if part.strip()}


def record_field(record: Any, name: str) -> Any:
    """A field of a pydantic record or of its dict form (exports and other harnesses pass dicts)."""
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def load_entries(path: str | Path, key: str, model: type[T]) -> list[T]:
    """Validate the list under `key` of a YAML file entry by entry; errors name the file, the entry id and the field."""
    path = Path(path)
    raw = load_yaml(path)
    entries = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, f"'{key}' must be a non-empty list", field=key)
    out: list[T] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        entry_id = str(entry.get("id")) if isinstance(entry, dict) and entry.get("id") else f"#{index}"
        try:
            out.append(validate_strict(model, entry))
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
        except (TypeError, ValueError) as ex:
            raise CatalogError(path, f"unsupported value: {ex}", entry=entry_id) from None
        if entry_id in seen:
            raise CatalogError(path, "duplicate id", entry=entry_id, field="id")
        seen.add(entry_id)
    return out


def load_jsonl(path: str | Path, model: type[T], id_field: str) -> list[T]:
    """Validate a JSONL file record by record; duplicate ids are refused."""
    path = Path(path)
    text = read_text_checked(path)
    out: list[T] = []
    seen: set[str] = set()
    for lineno, line in enumerate(split_records(text), start=1):
        if not line.strip():
            continue
        raw = load_json_line(line, path, lineno)
        if not isinstance(raw, dict):
            raise CatalogError(path, "not a JSON object (one record per line)", line=lineno)
        entry = raw.get(id_field)
        entry = str(entry) if entry is not None else f"line {lineno}"
        try:
            item = model.model_validate_json(line, strict=True)
        except ValidationError as ex:
            raise validation_errors(path, entry, ex, line=lineno) from None
        if entry in seen:
            raise CatalogError(path, f"duplicate {id_field}", entry=entry, field=id_field, line=lineno)
        seen.add(entry)
        out.append(item)
    if not out:
        raise CatalogError(path, "no records in file")
    return out
