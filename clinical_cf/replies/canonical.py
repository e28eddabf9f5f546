"""Canonical text (issue 44): one shape for every format of the same answer, through maintained parsers.

A reply reaches the readers in whatever form the provider and the model gave it: serialised by a gateway
(a JSON string with literal `\\n`, a Python repr, a list of content blocks), with HTML entities, compatibility
and full-width characters, invisible format characters, citation markers (`[1]`, `【4:0†source】`), LaTeX
wrappers (`$\\text{X}$`, `\\boxed{B}`) and emoji bullets. `canonical_text` removes what carries no answer
(the line structure, markdown, tables and HTML elements stay: the structural checks read them); every reader,
the readers' prompt and the quote check work on it (`final_answer` returns it). `plain_text` is one item as
plain text (markdown and inline HTML rendered away by markdown-it-py, every symbol removed): what a judge sees.
"""

from __future__ import annotations

import ast
import html
import json
import re
import unicodedata
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pylatexenc.latex2text import LatexNodes2Text

MAX_DECODE_CHARS = 200_000
"""A serialised reply longer than this is not decoded (`ast.literal_eval` is not linear in every input)."""

# Citation markers: numbered references after a word ("Docetaxel [1]", "[1][2]", "[1, 3]", "[2-4]", "[^1]") and
# file-search markers ("【4:0†source】"). A bracketed number after ':' or ',' or at a line start is data (a JSON
# array, a list label), not a citation, so a marker must follow a word, a closing bracket or punctuation that ends
# a clause directly or after one space.
_CITATION = re.compile(r"(?<=[^\W_]|[.)\]】%])[ \t]?(?:\[\^?\d{1,3}(?:[ \t]?[,–-][ \t]?\d{1,3}){0,8}\]){1,8}")
_FILE_MARKER = re.compile(r"【[^】\n]{0,80}】")
# LaTeX in prose: inline math and the text-mode wrappers models put around answers. A span with a double
# backslash or a quotation mark is left alone: it is inside a JSON string (its value is canonicalised once decoded).
_LATEX = re.compile(
    r"\$\$[^$\n\\\"]{0,300}(?:\\[A-Za-z]{1,20}[^$\n\\\"]{0,300}){0,20}\$\$"
    r"|\$[^$\n\\\"]{0,300}(?:\\[A-Za-z]{1,20}[^$\n\\\"]{0,300}){0,20}\$"
    r"|(?<!\\)\\\((?:[^\n\\\"]|\\[A-Za-z]){0,300}\\\)"
    r"|(?<!\\)\\(?:text|textbf|textit|mathrm|mathbf|emph|textrm|texttt|mbox|fbox)\{[^{}\n\"]{0,300}\}"
)
_LATEX_COMMAND = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|emph|textrm|texttt|mbox|fbox)\{([^{}\n\"]{0,300})\}")
# `\boxed{X}` marks an answer (MedPIC reads it): kept as `\boxed{<its text>}`, only its content made text.
_BOXED = re.compile(r"\\boxed\{((?:[^{}\n\"]|\{[^{}\n\"]{0,100}\}){0,300})\}")
# LaTeX lists: `\begin{itemize}` / `\end{itemize}` lines dropped, `\item` a list bullet.
_LATEX_LIST = re.compile(r"^[ \t]{0,12}\\(?:begin|end)\{(?P<env>itemize|enumerate|description)\}[ \t]{0,4}$"
                         r"|^(?P<indent>[ \t]{0,12})\\item(?:\[[^\]\n]{0,40}\])?[ \t]{1,4}", re.MULTILINE)
# HTML paragraphs and line breaks are line breaks (lists, tables and headings are read by the structural checks).
_HTML_BREAK = re.compile(r"</?(?:p|div|br)\b[^<>\n]{0,200}/?>", re.IGNORECASE)
# Marks that state a polarity by themselves (a check or a cross): kept, a reader and the quote check see them.
_KEPT_SYMBOLS = frozenset("✓✔✅☑☒☐✗✘❌❎🟢🟡🟠🔴⛔🚫⚠")
_LINE_SYMBOL = re.compile(r"^([ \t]{0,12})(?:[^\w\s\-*+#>|<\[({\"'`~.,:;!?/\\]{1,3}[ \t]{1,4})", re.MULTILINE)


MAX_DECODE_LEVELS = 3
"""A reply serialised more than once (a repr of a JSON string) is decoded up to this many times."""


def fold(text: str) -> str:
    """NFKC-folded text without invisible format characters, with one kind of line break: what every later step
    (decoding, reasoning removal, the canonical shape) starts from."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if not _format_char(ch))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_serialised(text: str) -> str:
    """A reply that a gateway serialised, decoded: a JSON string literal, a Python string repr, a list of text
    content blocks (JSON or repr), or a one-line reply whose line breaks are the literal escapes `\\n`, each
    decoded up to `MAX_DECODE_LEVELS` times (a repr of a JSON string). Anything else is returned folded (`fold`)."""
    text = fold(text)
    for _ in range(MAX_DECODE_LEVELS):
        decoded = fold(_decode_once(text))
        if decoded == text and "&" in text:
            # Serialised, then HTML-escaped (`[{&quot;text&quot;: ...}]`): decoded when the unescaped text decodes.
            unescaped = html.unescape(text)
            attempt = fold(_decode_once(unescaped))
            decoded = attempt if attempt != unescaped else text
        if decoded == text:
            break
        text = decoded
    return text


def _decode_once(text: str) -> str:
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_DECODE_CHARS:
        return text
    decoded = _literal(stripped)
    if decoded is not None:
        return decoded
    if "\n" in stripped:
        # Plain lines (reasoning, "Final answer:") before an answer that is itself serialised: that line is decoded.
        lines = stripped.split("\n")
        decoded_lines = [_literal(line.strip()) if "\\" in line or '"text"' in line or "'text'" in line else None for line in lines]
        if any(d is not None for d in decoded_lines):
            return "\n".join(d if d is not None else line for d, line in zip(decoded_lines, lines, strict=True))
    if "\n" not in stripped and "\\n" in stripped and stripped[0] not in "{[":
        # A reply whose line breaks arrive as the two characters backslash-n (a log line, a copied repr without
        # its quotes): the escapes JSON and Python share, decoded; a one-line JSON answer keeps its escapes.
        return stripped.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"').replace("\\'", "'")
    return text


def _literal(stripped: str) -> str | None:
    """The text of a JSON string, a Python string repr or a list of text content blocks, or None."""
    if not stripped:
        return None
    quoted = stripped[0] == stripped[-1] and stripped[0] in "\"'" and len(stripped) >= 2
    blocks = stripped[0] == "[" and stripped[-1] == "]" and "text" in stripped
    if not (quoted or blocks):
        return None
    value: Any = None
    try:
        value = json.loads(stripped)
    except ValueError:
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, dict) and v.get("type") == "text" and isinstance(v.get("text"), str)
                                                  for v in value):
        return "\n".join(v["text"] for v in value)
    return None


@lru_cache(maxsize=1)
def _latex() -> LatexNodes2Text:
    return LatexNodes2Text(math_mode="text", strict_latex_spaces=True)


def _latex_span(match: re.Match[str]) -> str:
    span = match.group(0)
    boxed = _BOXED.search(span)
    if boxed:
        return "\\boxed{" + _as_text(boxed.group(1)) + "}"
    return _as_text(span)


def _as_text(latex: str) -> str:
    inner = _LATEX_COMMAND.sub(r"\1", latex)  # \text{X} names its content
    try:
        return _latex().latex_to_text(inner).strip()
    except Exception:  # noqa: BLE001 (pylatexenc raises its own parse errors on odd input: the span is kept as written)
        return latex


def _symbol(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk", "Cs", "Co") and ch not in _KEPT_SYMBOLS


def _format_char(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf" or "\ufe00" <= ch <= "\ufe0f"


def canonical_text(text: str) -> str:
    """`text` in one canonical shape, line structure kept: HTML entities decoded, NFKC-folded, invisible format
    characters removed, an emoji bullet at a line start removed (check and cross marks and traffic lights stay: they
    state something; emoji inside a line stay for the reader, the judge's `plain_text` drops every symbol), citation
    markers removed, LaTeX wrappers, inline math and list environments turned into their text (pylatexenc). Idempotent."""
    if not text:
        return ""
    if "&" in text:
        text = html.unescape(html.unescape(text))  # twice: "&amp;nbsp;" is an entity escaped once more
    text = fold(text)
    text = _LINE_SYMBOL.sub(lambda m: m.group(0) if _kept_bullet(m.group(0)) else m.group(1), text)
    text = _LATEX_LIST.sub(lambda m: "" if m.group("env") else f"{m.group('indent')}- ", text)
    text = _HTML_BREAK.sub("\n", text)
    text = _FILE_MARKER.sub("", text)
    text = _CITATION.sub("", text)
    if "\\" in text or "$" in text:
        text = _LATEX.sub(_latex_span, text)
    text = text.replace("\u00a0", " ")
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _kept_bullet(prefix: str) -> bool:
    """Whether a line-start run of symbols is kept as written: it holds a letter-like character or a mark that
    states a polarity, or it is not made of symbols at all (then it is no emoji bullet)."""
    marks = prefix.strip()
    return any(ch in _KEPT_SYMBOLS for ch in marks) or not all(_symbol(ch) or _format_char(ch) for ch in marks)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("strikethrough").enable("table")


def plain_text(text: str) -> str:
    """One item as plain text: `canonical_text`, then markdown and inline HTML rendered to their text by
    markdown-it-py (emphasis, code, links, tags), every symbol removed, whitespace collapsed."""
    text = canonical_text(text)
    tokens = _markdown().parseInline(text.replace("\n", " "))
    parts: list[str] = []
    for token in tokens:
        for child in token.children or []:
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
    joined = "".join(parts)
    joined = re.sub(r"<[^<>\n]{0,200}>", "", joined)  # a tag markdown-it left as text (it was not inline HTML)
    return " ".join("".join(ch for ch in joined if unicodedata.category(ch) not in ("So", "Sk")).split())
