"""MedPIC zero-shot prompt and answer parsing (seed 002, §4.1); the task's solver is Inspect's `generate()`.

Every question is answered independently: the prompt asks for a brief rationale and then the
selected option letter(s) on a final `ANSWER:` line. Pair members are separate samples and the
prompt never mentions a partner.

`render_prompt` and `parse_answer` are pure functions (no Inspect state), so an export to another
harness can reuse them. The parser does not depend on this prompt's wording: it reads an answer
field however it is written (`ANSWER: B, D`, `**Answer:** B and D`, `Final answer: (A), (C)`,
`Answer - b/d`, `\\boxed{C}`), option text instead of letters ("None of the above", a drug name),
and falls back to the letters in free prose only when that is unambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clinical_cf.core.loading import record_field
from clinical_cf.replies import Provenance, as_flag, final_answer, find_object, invalid_reason, lowered_keys

PROMPT = """{vignette}

{question}

{options}

Answer with a brief rationale (two to four sentences), then give your final choice on the last line in exactly this form:
ANSWER: <letter or letters, comma-separated>"""

SINGLE_SELECT_NOTE = "Select one option."
NONE_TEXT = "none of the above"


def render_prompt(question: Any) -> str:
    """The zero-shot prompt for a question (a `Question`, or any mapping with vignette, question, options, multi_select)."""
    options: Mapping[str, str] = record_field(question, "options")
    stem = record_field(question, "question")
    multi = question.get("multi_select", True) if isinstance(question, Mapping) else getattr(question, "multi_select", True)
    if not multi:
        stem = f"{stem} {SINGLE_SELECT_NOTE}"
    return PROMPT.format(
        vignette=record_field(question, "vignette").strip(),
        question=stem.strip(),
        options="\n".join(f"{letter}. {text}" for letter, text in options.items()),
    )


# ---------------------------------------------------------------- parsing
_FIELD = re.compile(
    r"(?:^|[\n.;!?]|\s)\W{0,3}(?:final\s+answers?|correct\s+answers?|final\s+choices?|final\s+selection|selected\s+options?|"
    r"answers?|selections?|choices?)\s*(?:is|are|would\s+be|:)?\s*[:：=\-–—]\s*(?P<seg>[^\n]*)",
    re.IGNORECASE,
)
_ANSWER_IS = re.compile(
    r"\b(?:the\s+)?(?:correct|final|best)?\s*(?:answers?|options?|choices?|selections?)\s+(?:is|are|would\s+be)\s+(?P<seg>[^\n]*)",
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\boxed\{(?P<seg>[^}]*)\}")
_SEP = r"(?:\s*(?:,|;|/|&|\+|\band\b|\bor\b|,\s*and\b)\s*|\s+)"
_LETTER = r"[\(\[]?(?:option\s+)?([A-Za-z])(?![A-Za-z])[\)\]\.]?"
_LIST = re.compile(rf"^\s*{_LETTER}(?:{_SEP}{_LETTER})*", re.IGNORECASE)


def _clean(text: str) -> str:
    return re.sub(r"[*_`]+", "", text)


def _text_matches(segment: str, options: Mapping[str, str]) -> tuple[set[str], str]:
    """Letters whose option text appears in the segment, and the segment with those texts removed."""
    found: set[str] = set()
    low = segment
    for letter, text in sorted(options.items(), key=lambda kv: -len(kv[1])):
        t = text.strip().lower()
        if len(t) < 3:
            continue
        hits = [t]
        if t == NONE_TEXT:
            hits += ["none of these", "none of the options", "none of them"]
        base = re.sub(r"\s*\(.*?\)\s*", " ", t).strip()  # "acetaminophen (paracetamol)" -> "acetaminophen"
        if base and base != t and len(base) >= 4:
            hits.append(base)
        for h in hits:
            pattern = rf"(?<![a-z]){re.escape(h)}(?![a-z])"
            if re.search(pattern, low, re.IGNORECASE):
                found.add(letter)
                low = re.sub(pattern, " ", low, flags=re.IGNORECASE)
    if re.fullmatch(r"\W*none\W*", low, re.IGNORECASE) and any(t.strip().lower() == NONE_TEXT for t in options.values()):
        found.add(next(k for k, t in options.items() if t.strip().lower() == NONE_TEXT))
        low = ""
    return found, low


def _collapse_labels(segment: str, options: Mapping[str, str]) -> str:
    """Replace a letter written with its option text ("A (diphenhydramine)", "E: None of the above") by the letter."""
    for letter, text in options.items():
        t = re.escape(text.strip())
        segment = re.sub(rf"(?<![A-Za-z])[\(\[]?{letter}[\)\]]?\s*[.):\-–—]?\s*[\(\[]?\s*{t}\s*[\)\]]?",
                         f" {letter} ", segment, flags=re.IGNORECASE)
    return segment


def _letters_in_segment(segment: str, options: Mapping[str, str]) -> set[str] | None:
    """Letters named in an answer field; option text counts only when no letter is named."""
    valid = set(options)
    rest = _collapse_labels(segment, options)
    run = re.match(r"\s*([A-Z]{2,6})(?![A-Za-z])(?!\s+[A-Za-z]{2,})", rest)
    if run and len(set(run.group(1))) == len(run.group(1)) and set(run.group(1)) <= valid:
        return set(run.group(1))  # "ANSWER: BD"
    letters: set[str] = set()
    # A bare list of letters at the start of the field: "B, D", "(a) and (c)", "A/C", "b d".
    match = _LIST.match(rest)
    if match:
        tail = rest[match.end():]
        listed = re.findall(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])", match.group(0))
        upper = all(x.isupper() for x in listed)
        # Lowercase letters count only when nothing wordy follows ("a risk ..." is prose, "a, c." is a list).
        if upper or not re.match(r"\s*[A-Za-z]{2,}", tail):
            letters = {x.upper() for x in listed}
    if not letters:
        head = re.split(r"(?<=[.!?])\s", rest.strip(), maxsplit=1)[0]
        letters = set(re.findall(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", head))
        if "I" not in valid or re.search(r"\bI\s+(?:think|would|believe|am|will)\b", head):
            letters.discard("I")
    if letters:
        return letters & valid or None  # letters outside the options (a sixth letter) are unreadable, not a guess
    by_text, _ = _text_matches(rest, options)
    return by_text or None


PLACEHOLDERS = ("<letter or letters, comma-separated>",)
_ANSWER_KEYS = ("answer", "answers", "final_answer", "selected", "selection", "selected_options", "choice", "choices",
                "options", "letters", "correct_answer", "correct_options")


@dataclass(frozen=True)
class AnswerReading:
    """The option letters a reply selects (None when unread) and how they were read."""

    letters: frozenset[str] | None
    provenance: Provenance
    invalid: str | None = None


def read_answer(text: str | None, options: Mapping[str, str]) -> AnswerReading:
    """Read a MedPIC reply with its provenance.

    Only the final answer counts (reasoning blocks dropped). Empty replies, template echo and
    degenerate repetition are `invalid`. A JSON object with an answer-like key (`{"answer": ["A",
    "B"]}`, `{"selected": "B, D"}`) is read first; then the answer field, "the answer is"
    sentence, bare letter list and unambiguous option references of `parse_answer`'s order.
    """
    invalid = invalid_reason(text, PLACEHOLDERS)
    if invalid is not None:
        return AnswerReading(None, "invalid", invalid)
    final = final_answer(text)
    found = find_object(final, lambda d: any(k in lowered_keys(d) for k in _ANSWER_KEYS))
    if found is not None:
        data = lowered_keys(found.value)
        value = next(data[k] for k in _ANSWER_KEYS if k in data)
        letters = _json_letters(value, options)
        return AnswerReading(letters, found.provenance if letters else "unreadable")
    letters, provenance = _text_answer(final, options)
    return AnswerReading(letters, provenance)


def _json_letters(value: Any, options: Mapping[str, str]) -> frozenset[str] | None:
    if isinstance(value, dict) and value and all(str(k).strip().upper() in options for k in value):
        # {"A": false, "B": true}: the letters marked selected; any value that is not a yes/no is unreadable.
        flags = {str(k).strip().upper(): as_flag(v) for k, v in value.items()}
        if None in flags.values():
            return None
        chosen = frozenset(k for k, v in flags.items() if v)
        return chosen or None
    items = value if isinstance(value, list) else [value]
    letters: set[str] = set()
    for item in items:
        if isinstance(item, dict):
            item = next((v for k, v in lowered_keys(item).items() if k in ("letter", "option", "id", "answer")), None)
        if not isinstance(item, str) or not item.strip():
            return None
        got = _letters_in_segment(item, options)
        if not got:
            return None  # one unreadable element makes the whole selection unreadable, not a smaller set
        letters |= got
    return frozenset(letters) if letters else None


def parse_answer(text: str | None, options: Mapping[str, str]) -> frozenset[str] | None:
    """The set of option letters a reply selects, or None when it cannot be read (see `read_answer`)."""
    return read_answer(text, options).letters


def _text_answer(text: str, options: Mapping[str, str]) -> tuple[frozenset[str] | None, Provenance]:
    """Order of evidence: the last answer field (`ANSWER:`, `Final answer -`, `\\boxed{}`), then an
    "the answer is ..." sentence, then a reply that is nothing but a letter list, then, as a last
    resort, option references in prose when exactly one option is referred to.
    """
    clean = _clean(text)
    segments = [m.group("seg") for m in _FIELD.finditer(clean)] + [m.group("seg") for m in _BOXED.finditer(clean)]
    for segment in reversed(segments):
        got = _letters_in_segment(segment, options)
        if got:
            return frozenset(got), "field"
    for m in reversed(list(_ANSWER_IS.finditer(clean))):
        got = _letters_in_segment(m.group("seg"), options)
        if got:
            return frozenset(got), "field"
    stripped = clean.strip()
    if len(stripped) <= 40:
        got = _letters_in_segment(stripped, options)
        if got:
            return frozenset(got), "field"
    refs = {m.upper() for m in re.findall(r"\b(?:option|choice)\s+\(?([A-Za-z])\b\)?", clean, re.IGNORECASE)}
    refs |= set(re.findall(r"(?:^|\s)\(([A-Z])\)", clean))
    refs &= set(options)
    if len(refs) == 1:
        return frozenset(refs), "prose"
    return None, "unreadable"


def format_answer(letters: frozenset[str] | set[str] | list[str] | None) -> str:
    return ",".join(sorted(letters)) if letters else ""
