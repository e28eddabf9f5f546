"""What a command prints is safe for a terminal and echoes no value it was given beyond its documented prefix.

Two helpers, applied once to everything `clinical-cf` prints (`SafeStream` wraps stdout and stderr for the whole
command, so no error path, note or table can forget them):

- `terminal_safe(text)`: every control character but newline and tab (ESC, BEL, CR, C1: Unicode category Cc) and
  every format character (bidi overrides and isolates, zero-width characters: category Cf) is written as its
  visible escape (`\\x1b`, `\\u202e`). A case id, a file's line or a log's value that carries an escape sequence
  can then neither recolour, retitle or clear the terminal nor reorder what the user reads;
- `redacted(text, values)`: each of `values` (what the user passed that names no file: see `echo_guarded`) is
  shown only as `shown(value)`, its first characters and its length, wherever it appears: a key pasted into the
  wrong argument stays on the screen only as its start.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from clinical_cf.core.errors import shown

KEEP = frozenset("\n\t")
FILE_SUFFIXES = frozenset({".jsonl", ".json", ".yaml", ".yml", ".txt", ".csv", ".md", ".html", ".eval", ".lock", ".log"})


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: str) -> str:
    """`text` with its control and format characters (but newline and tab) written as visible escapes."""
    if text.isprintable() or all(c in KEEP or unicodedata.category(c) not in ("Cc", "Cf") for c in text):
        return text
    return "".join(c if c in KEEP or unicodedata.category(c) not in ("Cc", "Cf") else _visible(c) for c in text)


def redacted(text: str, values: Iterable[str]) -> str:
    """`text` with each of `values` shown by its start and length only (longest first, so no value reveals another)."""
    for value in sorted(set(values), key=len, reverse=True):
        if value and value in text:
            text = text.replace(value, shown(value))
    return text


def echo_guarded(argv: Iterable[str], whole_up_to: int = 12) -> list[str]:
    """The values of a command line that are never echoed whole: longer than `shown` prints whole, and naming no file
    (no path separator, no file suffix, nothing by that name here). Paths are printed whole: a message about a file
    must name it."""
    guarded = []
    for value in argv:
        if len(value) <= whole_up_to or value.startswith("-") or "/" in value or Path(value).suffix.lower() in FILE_SUFFIXES:
            continue
        try:
            if Path(value).exists():
                continue
        except (OSError, ValueError):
            pass
        guarded.append(value)
    return guarded


class SafeStream(io.TextIOBase):
    """A text stream that writes `terminal_safe(redacted(text))` to `stream`."""

    def __init__(self, stream: TextIO, guarded: Iterable[str] = ()) -> None:
        self.stream = stream
        self.guarded = list(guarded)

    def write(self, text: str) -> int:
        self.stream.write(terminal_safe(redacted(text, self.guarded)))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    def fileno(self) -> int:
        return self.stream.fileno()
