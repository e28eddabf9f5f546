"""Structural verification of a reader's quotes (step d): where a quoted value stands in the final answer and what
its place states. These checks refuse readings; agreement of independent readers confirms them."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from clinical_cf.replies.canonical import canonical_text
from clinical_cf.replies.contract import _EMPHASIS
from clinical_cf.replies.final import MAX_REPAIR_CHARS, revision_in, squash
from clinical_cf.replies.items import struck
from clinical_cf.replies.json_answers import _brace_spans

# --------------------------------------------------------------------------- grounding (reader step)

# Words that state that an option is not to be given, in the languages the corpus meets. A quote
# for a not-recommended item must contain one; a recommended item's quote must not have one next
# to the item (three words either side), so "X - avoid" or "I would not give X" cannot be filed
# as recommended.
NEGATIVE_CUES = frozenset(
    "not no avoid avoided avoiding against contraindicated contra-indicated never hold withhold withheld stop stopped omit "
    "decline declined inappropriate unsuitable inadvisable discouraged unsafe without exclude excluded defer deferred "
    "nicht kein keine keinen vermeiden nein pas non évitez éviter eviter sans evitar evite sin nunca nessun evitare "
    "niet geen vermijden instead rather false".split()
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


_NON_PREFIX = re.compile(r"\b(non)-(?=[^\W\d_])", re.IGNORECASE)


# Runs of CJK, kana and hangul: a word is split where its script changes ("Osimertinibは使用しない" is the item and
# a negation, not one word the item's own words would excuse).
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+|[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def words_of(text: str) -> list[str]:
    """The words of `text`, case-folded, split where the script changes between CJK (kana, hangul) and the rest; a
    "non-" prefix stays on its word ("non-squamous", "non-small cell" are descriptions, not the negation "non")."""
    return [run.casefold() for w in _WORD.findall(_NON_PREFIX.sub(r"\1", text)) for run in _CJK_RUN.findall(w)]


def has_negative_cue(words: list[str]) -> bool:
    return any(w in NEGATIVE_CUES or w.endswith(("n't", "n’t")) for w in words)


def grounded(quote: object, reply: str) -> bool:
    """The quote occurs in the reply (whitespace normalised, case folded) and is not empty."""
    return isinstance(quote, str) and bool(quote.strip()) and squash(quote) in squash(reply)


def item_in_quote(item: str, quote: str) -> bool:
    return bool(squash(item)) and squash(item) in squash(quote)


_LIST_WORDS = frozenset("answer answers final options option selected selection choice choices and or is are my the".split())


def letter_in_quote(letter: str, quote: str) -> bool:
    """The option letter is named in the quote: as a token of its own (lower case only in a quote that
    is nothing but a letter list, where "a" cannot be the article), or inside a stated range ("A–C", "A to C")."""
    if re.search(rf"(?<![A-Za-z]){letter}(?![A-Za-z])", quote):
        return True
    if re.search(rf"(?<![A-Za-z]){letter.lower()}(?![A-Za-z])", quote):
        words = [w for w in words_of(quote) if len(w) > 1]
        if all(w in _LIST_WORDS for w in words):
            return True
    for match in re.finditer(r"(?<![A-Za-z])([A-Z])[ \t]{0,2}(?:-|–|—|to)[ \t]{0,2}([A-Z])(?![A-Za-z])", quote):
        if match.group(1) <= letter <= match.group(2):
            return True
    return False


def negated_near(item: str, quote: str, window: int = 3) -> bool:
    """A negative cue within `window` words before or after the item's place in the quote."""
    folded = squash(quote)
    at = folded.find(squash(item))
    if at < 0:
        return has_negative_cue(words_of(folded))
    before = words_of(folded[:at])[-window:]
    after = words_of(folded[at + len(squash(item)):])[:window]
    return has_negative_cue(before + after)


EXCLUDING_CUES = frozenset("not except excluding exclude but no nor".split())


def excluded_before(item: str, quote: str, window: int = 2) -> bool:
    """An excluding word ("not", "except") within `window` words before the item in the quote ("B, not D")."""
    folded = squash(quote)
    at = folded.find(squash(item))
    if at < 0:
        return False
    return any(w in EXCLUDING_CUES for w in words_of(folded[:at])[-window:])


def numbers_in(quote: str) -> list[tuple[float, str]]:
    """(value, scale) of each number in a quote: scale '%' for "80%", '/10' or '/100' for "8/10",
    '' for a plain number; a decimal comma ("0,85") reads as a decimal point."""
    out = []
    for match in re.finditer(r"(\d{1,6}(?:[.,]\d{1,6})?|[.,]\d{1,6})[ \t]{0,2}(%|/[ \t]{0,2}10{1,2}\b|out of 10{1,2}\b)?", quote):
        number = float(match.group(1).replace(",", "."))
        unit = (match.group(2) or "").replace(" ", "").replace("outof", "/")
        out.append((number, unit))
    return out


def number_grounded(value: float, quote: str) -> bool:
    """The quote states `value` (a share from 0 to 1): as the number itself, a percentage or n/10, n/100."""
    for number, unit in numbers_in(quote):
        scaled = {"": number, "%": number / 100, "/10": number / 10, "/100": number / 100}.get(unit)
        if scaled is not None and abs(scaled - value) < 1e-6:
            return True
    return False


# --------------------------------------------------------------------------- structural verification (reader step)
#
# A reader's quote is accepted only where the reply's structure says what the reading says: the quote is a
# whole-token span of the final answer, the polarity of the value's place (its sentence, its enclosing
# heading, label, JSON key, table column and row, checkbox) is the polarity the reading gives it, the place
# is not hedged, and no revision follows it. Every occurrence of the quote must pass (a quote that also
# occurs where it means something else settles nothing).

_TOKEN = re.compile(r"\d{1,40}(?:[.,]\d{1,40})?|[^\W\d_]+")
_HTML_BLOCK = re.compile(r"</?(?:p|ul|ol|div|br|h[1-6]|tr|table|thead|tbody|section|dl|dt|dd)\b[^<>]{0,200}>", re.IGNORECASE)
_HTML_ITEM = re.compile(r"<li\b[^<>]{0,200}>", re.IGNORECASE)
_HTML_END_ITEM = re.compile(r"</li\s{0,4}>", re.IGNORECASE)
_ELEMENT = "\u2063"  # marks a heading made from an XML element: nested elements are walked through
_XML_OPEN = re.compile(r"<([A-Za-z_][\w-]{0,40})>")
_XML_CLOSE = re.compile(r"</[A-Za-z_][\w-]{0,40}[ \t]{0,4}>")
_SENTENCE_END = re.compile(r"(?<!\d)[.!?;,:](?!\d)|[|{}\[\]]")
_STATEMENT_END = re.compile(r"(?<!\d)[.!?;](?!\d)|[|{}\[\]]")
# A line's own label ("Not recommended: X, Y", "Avoid - X") governs every value after it on the line.
_LINE_LABEL = re.compile(r"^[ \t>*_#:-]{0,8}(?P<label>[^:\n]{1,60}?)[ \t]{0,3}(?::|[-–—][ \t])")
_LIST_ITEM = re.compile(r"^[ \t]{0,12}(?:[-*•+]|\d{1,3}[.)]|[A-Za-z][.)])[ \t]")
_CHECKBOX = re.compile(r"^[ \t]{0,12}(?:[-*+][ \t]{1,4})?\[(?P<mark>[ xX✓✔])\]")
_KEY_VALUE = re.compile(r"^[ \t]{0,12}[\w .\"'-]{1,40}[ \t]{0,4}[=:][ \t]{0,4}\S")
_HEADING = re.compile(
    r"^[ \t]{0,12}(?:#{1,6}[ \t].{1,120}|\[\[?[^\[\]\n]{1,80}\]\]?|\*\*[^*\n]{1,80}\*\*:?|[^\n]{1,80}:|<h[1-6][^\n]{0,120})[ \t]{0,4}$"
)

CHECKED, UNCHECKED = "checked", "unchecked"


def structure_text(final: str) -> str:
    """The final answer as verification reads it: NFKC-folded, HTML block and list tags turned into lines."""
    text = unicodedata.normalize("NFKC", final)
    text = _HTML_ITEM.sub("\n- ", text)
    text = _HTML_END_ITEM.sub("\n", text)
    text = _HTML_BLOCK.sub("\n", text)
    # Any other element (`<avoid>X</avoid>`) is a heading over its content, as a labelled block would be.
    text = _XML_OPEN.sub(lambda m: f"\n{m.group(1)}{_ELEMENT}:\n", text)
    return _XML_CLOSE.sub("\n", text)


def tokens_of(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end): numbers whole ("0.85" is one token) and words; single letters keep their case
    (an option letter "A" is not the article "a"), longer words are case-folded."""
    out = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        out.append((word if len(word) == 1 else word.casefold(), m.start(), m.end()))
    return out


def occurrences(quote: str, text: str) -> list[tuple[int, int]]:
    """Character spans of `text` where the quote's tokens occur as a whole-token run (punctuation ignored)."""
    wanted = [t for t, _, _ in tokens_of(structure_text(quote))]
    if not wanted:
        return []
    have = tokens_of(text)
    spans = []
    for i in range(len(have) - len(wanted) + 1):
        if have[i][0] == wanted[0] and all(have[i + k][0] == wanted[k] for k in range(1, len(wanted))):
            spans.append((have[i][1], have[i + len(wanted) - 1][2]))
    return spans


@dataclass(frozen=True)
class Place:
    """Where a value stands in the final answer, as verification reads its polarity."""

    sentence: str
    """The clause (or table cell, or JSON string) that holds the value."""
    statement: str
    """The whole sentence that holds it (what a hedge such as "guidelines list ..." governs)."""
    context: tuple[str, ...]
    """Enclosing headings and labels, JSON keys and the innermost object's other fields, the table column's
    header and the row's other cells."""
    checkbox: str | None
    line: str
    heading: bool
    """The value stands in a heading or label line ("Final answer:", "### Do not use"): it names a section, it states nothing."""
    before: str
    """The non-empty line above the value's line (a revision may be announced there)."""
    after: str
    """The final answer after the value."""

    def words(self) -> list[str]:
        return words_of(" ".join((self.sentence, *self.context)))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _structural(line: str) -> bool:
    return bool(_LIST_ITEM.match(line) or _CHECKBOX.match(line) or _KEY_VALUE.match(line) or "|" in line
                or line.lstrip().startswith(":") or _indent(line) > 0)


def _headings(lines: list[str], index: int) -> list[str]:
    """The headings that govern line `index`: walking up over structural lines (list items, indented lines,
    table rows, key-value lines), the nearest heading, then the headings outside it (less indented)."""
    out: list[str] = []
    limit = _indent(lines[index])
    item_structural = _structural(lines[index])
    blank = False
    j = index - 1
    while j >= 0 and len(out) < 3:
        line = lines[j]
        if not line.strip():
            blank = True
            j -= 1
            continue
        below = lines[j + 1] if j + 1 < len(lines) else ""
        next_is_definition = below.lstrip().startswith(":")
        # A short line without closing punctuation right above a list is that list's heading ("Preferred options").
        short_title = (not _structural(line) and len(line.strip()) <= 60 and not re.search(r"[.!?;,]$", line.strip())
                       and bool(_LIST_ITEM.match(below) or _CHECKBOX.match(below)))
        heading = bool(_HEADING.match(line)) or short_title or (next_is_definition and not line.lstrip().startswith(":"))
        if heading and _indent(line) <= limit:
            if blank and not item_structural:
                break
            out.append(line.strip())
            element = line.rstrip().rstrip(":").endswith(_ELEMENT)
            cue = words_of(line)
            if element and not (negated(cue) or has_stem(cue, POSITIVE_STEMS) or has_stem(cue, ANSWER_STEMS)):
                j -= 1  # an element that says nothing (`<item>`): the enclosing element governs
                continue
            if _indent(line) == 0:
                break
            limit = _indent(line) - 1
        elif not _structural(line) and not heading and blank:
            break  # a paragraph of its own above: the heading (if any) is not this line's
        j -= 1
    return out


def _json_context(text: str, position: int) -> tuple[list[str], str | None]:
    """The JSON keys enclosing `position` (when it lies inside a brace span) and the innermost object's text,
    and the JSON string that holds the position (the value's own sentence), if any."""
    if text.rfind("{", 0, position + 1) < 0:
        return [], None
    for span, span_start, _ in _brace_spans(text):
        if span_start <= position < span_start + len(span):
            break
    else:
        return [], None
    stack: list[dict[str, Any]] = []
    last_string, quote, escaped, buf, opened = None, None, False, [], 0
    for i in range(span_start, min(position, span_start + MAX_REPAIR_CHARS)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote, last_string = None, "".join(buf)
            else:
                buf.append(ch)
            continue
        if ch in "\"'":
            quote, buf, opened = ch, [], i
        elif ch in "{[":
            stack.append({"open": i, "key": None})
        elif ch in "}]" and stack:
            stack.pop()
        elif ch == ":" and stack and last_string is not None:
            stack[-1]["key"] = last_string
        elif ch == ",":
            last_string = None
    keys = [str(frame["key"]) for frame in stack if frame["key"]]
    inner = stack[-1]["open"] if stack and text[stack[-1]["open"]] == "{" else None
    if inner is not None:  # the value is a field of an object: the object's other fields are its own
        close = text.find("}", position)
        keys.append(text[inner: (close + 1) if close >= 0 else inner + 600][:600])
    string = None
    if quote:
        close = text.find(quote, position)
        string = text[opened + 1: close if close >= 0 else position + 200]
    return keys, string


def _table_context(lines: list[str], index: int, column_at: int) -> tuple[str, list[str]] | None:
    """(the cell holding the value, [column header, other cells of the row]) when line `index` is a table row."""
    line = lines[index]
    if line.count("|") < 2:
        return None
    cells = line.split("|")
    offset, cell_index = 0, 0
    for k, cell in enumerate(cells):
        if offset <= column_at <= offset + len(cell):
            cell_index = k
            break
        offset += len(cell) + 1
    top = index
    while top - 1 >= 0 and lines[top - 1].count("|") >= 2:
        top -= 1
    header = lines[top].split("|") if top != index else []
    context = [header[cell_index]] if cell_index < len(header) else []
    # The row's short cells ("Yes", "No", "✓") state the value's polarity; a long cell is a rationale.
    context += [c for k, c in enumerate(cells) if k != cell_index and c.strip() and len(words_of(c)) <= 3]
    return cells[cell_index], context


MAX_PLACES = 50
"""A quote occurring more often than this in the final answer is refused (and the work per quote stays bounded)."""


def places(quote: str, final: str, target: str | None = None) -> list[Place]:
    """Every place of the final answer where `quote` occurs as a whole-token span, at `target`'s position in it
    (the item, letter or number the reading claims; the quote's start when None). Empty when the quote does not
    occur, or the target is not inside it."""
    text = structure_text(final)
    out = []
    spans = occurrences(quote, text)
    if len(spans) > MAX_PLACES:
        return []  # a quote that occurs this often ("the", "A") settles nothing; verification then refuses it
    for start, end in spans:
        at, at_end = start, end
        if target is not None:
            inner = occurrences(target, text[start:end])
            if not inner:
                return []
            at, at_end = start + inner[0][0], start + inner[0][1]
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at_end)
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        cut = [m.end() for m in _SENTENCE_END.finditer(line, 0, at - line_start)]
        stop = _SENTENCE_END.search(line, at_end - line_start)
        sentence = line[(cut[-1] if cut else 0):(stop.start() if stop else len(line))]
        full_cut = [m.end() for m in _STATEMENT_END.finditer(line, 0, at - line_start)]
        full_stop = _STATEMENT_END.search(line, at_end - line_start)
        statement = line[(full_cut[-1] if full_cut else 0):(full_stop.start() if full_stop else len(line))]
        lines = text.split("\n")
        index = text.count("\n", 0, at)
        keys, string = _json_context(text, at)
        context = _headings(lines, index) + keys
        label = _LINE_LABEL.match(line)
        if label and label.end() <= at - line_start and string is None:
            context.append(label.group("label"))
        statement_start = line_start + (full_cut[-1] if full_cut else 0)
        colon = text.find(":", statement_start, at)
        if colon >= 0 and string is None:  # "... Answer: A": the label of the value's own sentence
            context.append(text[statement_start:colon])
        if string is not None:
            sentence = string
        table = _table_context(lines, index, at - line_start)
        if table:
            sentence, cells = table
            context += cells
        box = _CHECKBOX.match(line)
        checkbox = None if not box else (UNCHECKED if box.group("mark") == " " else CHECKED)
        after = text[at_end:]
        if stop is not None and line[stop.start()] == ":" and string is None:
            # "X: appropriate first-line option": what the line says after the value's name is its predicate.
            rest = line[stop.end():]
            nxt = _SENTENCE_END.search(rest)
            context.append(rest[: nxt.start() if nxt else len(rest)])
        above = next((ln for ln in reversed(lines[:index]) if ln.strip()), "")
        # A heading names a section ("### Do not use", "Final answer:", "[tables]"); a bold line may be the answer.
        bare_line = _EMPHASIS.sub("", line).strip()
        is_heading = bool(_HEADING.match(line)) and (bare_line.endswith(":") or bare_line.startswith("#")
                                                     or bool(re.fullmatch(r"\[\[?[^\[\]]{1,80}\]\]?", bare_line)))
        out.append(Place(sentence.strip(), statement.strip(), tuple(context), checkbox, line, is_heading, above, after))
    return out


NEGATION_WORDS = NEGATIVE_CUES | frozenset(
    "futile ineffective harmful unwarranted unnecessary reject rejected rejecting ruled exclude excluded skip forgo refrain "
    "discontinue discontinued cease deprescribe neither nor except excluding não nao nie nein ne inte ikke ei niet ni "
    "unchecked".split()
) | frozenset("✗✘❌🚫")
_CJK_NEGATION = frozenset("不勿禁無无非否")
# Negating endings written in kana or hangul, inside a word (Japanese "使用しない", "選ばない", "投与せず", "ません";
# Korean "않", "금지", "말 것"): issue 44's blind corpus negated an item with them.
_CJK_NEGATION_RUNS = ("ない", "なし", "ません", "せず", "않", "금지", "말것", "말아")
# Negations in the languages NEGATIVE_CUES knows, without their avoiding verbs: what refuses a selected MedPIC letter.
_FOREIGN_NEGATIONS = frozenset("nicht kein keine keinen nein ne pas non sin nunca nessun niet geen não nao nie ikke inte ei ni".split())
EXCLUDING_WORDS = EXCLUDING_CUES | frozenset("neither excluding isn't aren't ruled".split()) | _FOREIGN_NEGATIONS
"""The negations of a selection (MedPIC): an option is flagged by "avoid X", so only excluding words count."""
POSITIVE_STEMS = (
    "recommend", "recomend", "recomiend", "empfehl", "empfohl", "raccomand", "aanbevol", "prefer", "offer", "give", "start",
    "begin", "initiat", "use", "proceed", "plan", "propos", "favo", "choose", "chosen", "select", "yes", "indicated", "appropriat",
    "suggest", "endorse", "administer", "continue", "add", "receiv", "should", "deliver", "undergo", "pursue",
    "schedul", "refer", "✓", "✔", "✅",
)
ANSWER_STEMS = ("answer", "select", "chose", "choose", "chosen", "pick", "correct", "final", "flag", "boxed", "yes", "✓", "✔", "✅")
HEDGE_WORDS = frozenset(
    "likely probably possibly perhaps maybe might may could consider considered considering guideline guidelines typically "
    "usually generally often sometimes if unless pending once tentative tentatively draft initially initial lean leaning "
    "unsure uncertain depends depending discussed discussion".split()
)


def negated(words: list[str], negations: frozenset[str] | None = None) -> bool:
    vocabulary = NEGATION_WORDS if negations is None else negations
    return any(w in vocabulary or w.endswith(("n't", "n’t")) or any(c in _CJK_NEGATION for c in w)
               or any(run in w for run in _CJK_NEGATION_RUNS) for w in words)


_FREQUENCY = frozenset("daily weekly monthly nightly a every per or twice".split())


def hedged(words: list[str]) -> bool:
    """A tentative or general word among `words` (a refuser only); "once" before a frequency is a dose ("once daily")."""
    return any(w in HEDGE_WORDS and not (w == "once" and i + 1 < len(words) and words[i + 1] in _FREQUENCY) for i, w in enumerate(words))


def has_stem(words: list[str], stems: tuple[str, ...]) -> bool:
    return any(w.startswith(stems) for w in words)


# Where the value's sentence ends (a question mark: the reply asks, "Should I escalate this?"); a JSON string, a table
# cell or a line ends it first.
_CLAUSE_END = re.compile(r"[.!?:;\n\"{}\[\]|]")


def check_place(place: Place, polarity: Literal["positive", "negative", "neutral"], stems: tuple[str, ...] = POSITIVE_STEMS,
                revision: bool = False, own: tuple[str, ...] = (), negations: frozenset[str] | None = None,
                value_words: tuple[str, ...] = ()) -> str:
    """Why a place refuses the reading (or ""). These checks only refuse: what a reading states is confirmed by an
    independent second reader agreeing (`clinical_cf.replies.agreed_reading`), never by a word found here.

    Refused: a positive value with a negation in its sentence, headings, keys, column or row, or an unchecked box;
    a negative value with a checked box; a value in a heading (it names a section); a tentative or general sentence
    (the hedge words, the value's own words aside: "once daily" in a dose is not a hedge); a value followed by a
    revision; with `revision` (the reply's answers conflict) a value whose own line does not mark the revision.
    (Before issue 37 a positive value also needed a recommending word and a negative one a negation: those word
    lists proved readings, and refused every correct one worded otherwise.)"""
    # Words of the value's own stem are never its negation (ABSTAIN is stated by "decline").
    every = place.words()
    words = [w for w in every if not (own and w.startswith(own))]
    if hedged([w for w in words_of(place.statement) + words_of(place.sentence) if w not in value_words]):
        return "its sentence is tentative or general"
    tail = revision_in(place.after)
    if tail:
        return f"a revision follows it ({tail[:60]!r})"
    end = _CLAUSE_END.search(place.after[:400])
    if end and end.group(0) == "?":
        return "it stands in a question, which asks and states nothing"
    if revision and not (revision_in(place.line) or revision_in(place.before)):
        return "the reply's answers conflict and this is not the one it marks as its revision"
    if polarity == "neutral":  # a number: its place must not be hedged or revised, its polarity is not asked
        return ""
    if place.heading:
        return "it stands in a heading, which states no value"
    if polarity == "positive":
        if negated(words, negations) or place.checkbox == UNCHECKED:
            return "its place states a negation"
        return ""
    if place.checkbox == CHECKED:
        return "its place is a checked box"
    return ""


def verify_quote(quote: object, final: str, target: str | None, polarity: Literal["positive", "negative", "neutral"],
                 stems: tuple[str, ...] = POSITIVE_STEMS, revision: bool = False, own: tuple[str, ...] = (),
                 negations: frozenset[str] | None = None) -> str:
    """Why a quote does not ground the claimed value (or ""), checking every place it occurs (see `check_place`)."""
    if not isinstance(quote, str) or not quote.strip():
        return "empty quote"
    # The final answer is canonical text (`final_answer`); a quote copied from the reply as the provider sent it (with
    # its entities, citation markers or LaTeX) is compared in the same shape.
    quote, target = canonical_text(quote), canonical_text(target) if target else target
    if target and any(squash(target) in squash(passage) for passage in struck(final)):
        return "it is struck through"
    found = places(quote, final, target)
    if not found:
        count = len(occurrences(quote, structure_text(final)))
        if count > MAX_PLACES:
            return f"it occurs {count} times in the final answer"
        return "not a whole-token span of the final answer" if not count else "it does not contain its value"
    value_words = tuple(words_of(target)) if target else ()
    for place in found:
        why = check_place(place, polarity, stems, revision, own, negations, value_words)
        if why:
            return why
    return ""


def stated_extras(data: dict[str, Any], allowed: frozenset[str], stems: tuple[str, ...] = ()) -> list[str]:
    """The fields of a JSON answer beyond its schema (`allowed`) that may state something about the answer: a flag
    (`"recommend": false`, `"escalate": true`), a list or object, or a text or key with a negation, a hedge, a
    recommending word or one of `stems` (an action's words). A field that states none of these (`"priority": 1`,
    `"category": "immunotherapy"`, `"confidence": "high"`) changes nothing and is ignored (issue 44)."""
    out = []
    for key, value in data.items():
        if key in allowed:
            continue
        if isinstance(value, (bool, list, dict)) or value is None:
            out.append(key)
            continue
        words = words_of(f"{str(key).replace('_', ' ')} {value}")
        if negated(words) or hedged(words) or has_stem(words, POSITIVE_STEMS + stems):
            out.append(key)
    return sorted(out)

