"""MedPIC zero-shot prompt, solver and answer reading (seed 002, §4.1).

Every question is answered independently: the prompt asks for a brief rationale and the selected
option letter(s), as structured output (`medpic_answer(json_schema=True)`, the task's default) or
on a final `ANSWER:` line (the paper's format, kept for exports and `-T json_schema=false`). Pair
members are separate samples and the prompt never mentions a partner.

`render_prompt` and `read_answer` are pure functions (no Inspect state), so an export to another
harness can reuse them. `read_answer` reads by contract (steps a-c of `clinical_cf.replies`):
the answer JSON, then a closing `ANSWER:` line; anything else is left to the reader role
(`read_answer_with_reader`, step d) or is unreadable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ResponseSchema
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, json_schema
from pydantic import BaseModel, ConfigDict, Field

from clinical_cf.core.loading import record_field
from clinical_cf.replies import (
    ANSWER_STEMS,
    EXCLUDING_WORDS,
    ReaderTask,
    SuiteReading,
    agreed_reading,
    conflict_reason,
    elision,
    final_answer,
    invalid_reason,
    is_conflict,
    item_in_quote,
    json_objects,
    lowered_keys,
    not_whole,
    number_problem,
    occurrences,
    places,
    quoted_items,
    reply_cut,
    revision_in,
    stated_extras,
    struck_conflict,
    trailing_lines,
    verify_quote,
)
from clinical_cf.replies.provider import generate_reply

PROMPT = """{vignette}

{question}

{options}

{instruction}"""

INSTRUCTION_PLAIN = (
    "Answer with a brief rationale (two to four sentences). Then, on the last line, write ANSWER: followed by the "
    "letter of each option you select, separated by commas."
)
"""The paper's zero-shot answer format (exports to other harnesses use it): the closed answer-line grammar of step (c)."""

INSTRUCTION_JSON = (
    "Reply with one JSON object with two fields: \"rationale\", a brief rationale of two to four sentences, and "
    "\"answer\", the list of the letters of the options you select."
)
"""The same request as structured output (`json_schema=True`, the default in the task)."""

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
        instruction=INSTRUCTION_PLAIN,
    )


def answer_schema(options: Mapping[str, str]) -> ResponseSchema:
    """The MedPIC reply as structured output: a rationale and the selected letters (from this question's options)."""
    return ResponseSchema(
        name="medpic_answer",
        description="A brief rationale and the letters of the selected options.",
        json_schema=JSONSchema(
            type="object",
            properties={
                "rationale": JSONSchema(type="string", maxLength=1200),
                "answer": JSONSchema(type="array", items=JSONSchema(type="string", enum=sorted(options))),
            },
            required=["rationale", "answer"],
            additionalProperties=False,
        ),
    )


@solver
def medpic_answer(json_schema: bool = True) -> Solver:
    """One zero-shot generation. With `json_schema` (default) the reply is requested as structured
    output (`answer_schema`) and the prompt's last paragraph asks for the JSON object instead of the
    `ANSWER:` line; turn it off for providers that reject `response_schema`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not json_schema:
            return await generate_reply(generate, state, tool_calls="none")
        text = state.user_prompt.text
        if text.endswith(INSTRUCTION_PLAIN):
            state.user_prompt.text = text[: -len(INSTRUCTION_PLAIN)] + INSTRUCTION_JSON
        return await generate_reply(generate, state, tool_calls="none", response_schema=answer_schema(state.metadata["options"]))

    return solve


# ---------------------------------------------------------------- reading
# Step (c) of `clinical_cf.replies`: the closing `ANSWER:` line. Its value is a list of option
# letters (`B, D`, `(a) and (c)`, `[A, C]`, `BD`), or one option's full text, or "none" where
# "None of the above" is an option; a letter followed by its own option text is that letter.
_ANSWER_LINE = re.compile(
    r"^(?:final[ \t]{1,3})?(?:answers?|selected[ \t]{1,3}options?(?:\(s\))?|selections?|selected|correct[ \t]{1,3}(?:answers?|options?)(?:\(s\))?)"
    r"[ \t]{0,3}(?:[:=]|[-–—](?=[ \t]))[ \t]{0,3}(?P<value>.{0,400})$",
    re.IGNORECASE,
)
_REASON_LINE = re.compile(r"^(?:reason|rationale|because|explanation|justification)[ \t]{0,3}[:=]", re.IGNORECASE)
ANSWER_KEYS = frozenset({"answer", "rationale", "reason"})
_LETTER_TOKEN = re.compile(r"^[\(\[]?([A-Za-z])[\)\]]?$")
_LETTER_WITH_TEXT = re.compile(r"(?<![A-Za-z])([A-Za-z])[ \t]{0,3}\(([^()]{1,200})\)")
_SEPARATORS = re.compile(r"[ \t]{0,3}(?:,|;|/|&|\band\b|[ \t])[ \t]{0,3}", re.IGNORECASE)


def _line_letters(value: str, options: Mapping[str, str]) -> frozenset[str] | None:
    """The letters an answer line's value names, or None when it is not in the closed grammar."""
    value = value.strip().rstrip(".").strip()
    value = re.sub(r"^\$?\\boxed\{([^{}]{1,40})\}\$?$", r"\1", value).strip()  # "Final Answer: \\boxed{A}"
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1].strip()
    if not value:
        return None
    valid = {k.upper(): k for k in options}
    texts = {" ".join(t.lower().split()): k for k, t in options.items()}
    folded = " ".join(value.lower().split())
    if folded in texts:
        return frozenset({texts[folded]})
    none = next((k for k, t in options.items() if t.strip().lower() == NONE_TEXT), None)
    if none and folded in ("none", "none of the above", "none of these"):
        return frozenset({none})
    # A letter written with its own option text ("E (None of the above)", "A (diphenhydramine) and C
    # (atorvastatin)", "E: None of the above") is that letter; with another option's text it is not this grammar.
    for match in list(_LETTER_WITH_TEXT.finditer(value)):
        letter, text = match.group(1).upper(), " ".join(match.group(2).lower().split())
        if letter not in valid or texts.get(text) != valid[letter]:
            return None
    value = _LETTER_WITH_TEXT.sub(lambda m: m.group(1), value)
    labelled = re.fullmatch(r"([A-Za-z])[ \t]{0,3}[.:\-–—][ \t]{0,3}(?P<text>[^()]{1,200})", value)
    if labelled:
        letter, text = labelled.group(1).upper(), " ".join(labelled.group("text").lower().split())
        return frozenset({letter}) if letter in valid and texts.get(text) == valid[letter] else None
    if re.fullmatch(r"[A-Z]{2,6}", value) and len(set(value)) == len(value):
        return frozenset(value) if set(value) <= set(valid) else None  # "ANSWER: BD"
    letters = set()
    for token in _SEPARATORS.split(value):
        if not token or token.lower() == "and":
            continue
        match = _LETTER_TOKEN.match(token)
        if not match or match.group(1).upper() not in valid:
            return None
        letters.add(match.group(1).upper())
    return frozenset(letters) or None


def _answer_value(data: Mapping[str, Any], options: Mapping[str, str]) -> frozenset[str] | None:
    """The letters in a schema object's `answer`: a list of letters or a closed-grammar string."""
    value = lowered_keys(dict(data)).get("answer")
    items = value if isinstance(value, list) else [value]
    letters: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            return None
        got = _line_letters(item, options)
        if not got:
            return None
        letters |= got
    return frozenset(letters) or None


PLACEHOLDERS = ("<letter or letters, comma-separated>",)


@dataclass(frozen=True)
class AnswerReading(SuiteReading):
    """The option letters a reply selects (`value`, None when unread) and how they were read."""

    @property
    def letters(self) -> frozenset[str] | None:
        return self.value  # type: ignore[no-any-return]


# Answers stated inside a line ("..., so the answer is A.", "\\boxed{B}"): candidates for the conflict check only.
_INLINE_ANSWER = re.compile(
    r"\b(?:answers?|choice|selection)[ \t]{1,3}(?:is|are|would be|=)[ \t:]{0,3}(?:options?[ \t]{1,3})?"
    r"(?P<value>[A-Z](?:[ \t]{0,2}(?:,|and|&)[ \t]{0,2}[A-Z]){0,5})(?![A-Za-z])",
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\boxed\{(?P<value>[^{}]{1,40})\}")


def _answer_line_candidates(final: str, options: Mapping[str, str]) -> list[tuple[int, str, frozenset[str] | None]]:
    """Every answer the final answer states: each `ANSWER:` line wherever it stands, each `\\boxed{X}` and each
    "the answer is X" inside a line: (end offset, text, letters or None)."""
    out = []
    offset = 0
    for raw in final.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        line = re.sub(r"\*\*|__|`+|~~", "", raw[:2000]).strip()
        match = _ANSWER_LINE.match(line)
        if match:
            out.append((offset, line, _line_letters(match.group("value"), options)))
            continue
        for inline in (*_BOXED.finditer(raw[:2000]), *_INLINE_ANSWER.finditer(raw[:2000])):
            letters = _line_letters(inline.group("value"), options)
            if letters is not None:
                out.append((start + inline.end(), inline.group(0), letters))
    return out


def read_answer(text: str | None, options: Mapping[str, str], stop_reason: str | None = None, max_tokens: int | None = None) -> AnswerReading:
    """Read a MedPIC reply by contract, steps (a)-(c) of `clinical_cf.replies`.

    (a)/(b) a JSON object with the answer schema's `answer` (a list of option letters, or a string
    in the answer-line grammar), strict or syntax-repaired; objects that disagree are left to the reader. (c) a closing `ANSWER:` line (a line the reply later takes
    back is not final). Anything else (prose, option names, set operators such as "all except C",
    letter ranges) is left to the reader role (step d): unreadable here, `needs_reader`. Empty
    replies, template echo and degenerate repetition of the answer are `invalid`.
    """
    cut = reply_cut(text)
    cut_off = not_whole(text, stop_reason)
    if cut_off:  # cut or filtered by the provider, or JSON cut before it closed: never read, never repaired
        return AnswerReading(None, "unreadable", reply_cut=cut).cut_short(cut_off, max_tokens)  # type: ignore[return-value]
    final = final_answer(text)
    if not final or not re.search(r"\w", final):
        return AnswerReading(None, "invalid", "empty", reply_cut=cut)
    bad_number = number_problem(final)
    if bad_number:
        return AnswerReading(None, "unreadable", reason=f"unreadable number: {bad_number}", reply_cut=cut, bounds=True)
    elided = elision(final)
    if elided:  # JSON with items left out ([X, ...]): what it elides is in the reply for no one to read
        return AnswerReading(None, "unreadable", reason=elided, reply_cut=cut, bounds=True)
    withdrawn = struck_conflict(final)
    if withdrawn:  # part of the answer struck through: a conflict, never read with or without it
        return AnswerReading(None, "unreadable", reason=withdrawn, reply_cut=cut, conflict=(withdrawn,))
    objects = [f for f in json_objects(final) if "answer" in lowered_keys(f.value)]
    # Every candidate answer: each answer object and each answer line, wherever it stands.
    lines = _answer_line_candidates(final, options)
    stated = [(f.end, json.dumps(f.value)[:160], _answer_value(f.value, options)) for f in objects] + lines
    distinct = {letters for _, _, letters in stated if letters is not None}
    if len(distinct) > 1:
        shown = tuple(text for _, text, _ in stated)
        return AnswerReading(None, "unreadable", reason=conflict_reason(shown), reply_cut=cut, conflict=shown[:4])
    if stated:
        revision = revision_in(final[max(end for end, _, _ in stated):])
        if revision:
            shown = (stated[-1][1], revision)
            return AnswerReading(None, "unreadable", reason=conflict_reason(shown), reply_cut=cut, conflict=shown)
    if objects:
        chosen = objects[-1]
        if len({json.dumps(f.value, sort_keys=True) for f in objects}) > 1:
            return AnswerReading(None, "unreadable", reason="answer objects disagree", reply_cut=cut)
        data = lowered_keys(chosen.value)
        # A field beyond the schema is ignored when it states nothing (`"confidence": "high"`); one that may state an
        # answer (a flag, a list, a letter, a negation or an answer word) leaves the reply to the reader.
        extra = sorted(set(stated_extras(data, ANSWER_KEYS, ANSWER_STEMS))
                       | {k for k, v in data.items() if k not in ANSWER_KEYS and isinstance(v, str) and re.search(r"\b[A-Z]\b", v)})
        if extra:
            return AnswerReading(None, "unreadable", reason=f"the JSON has fields outside the schema ({', '.join(extra)[:60]})",
                                 reply_cut=cut)
        invalid = invalid_reason(final[chosen.start:chosen.end], PLACEHOLDERS)
        if invalid is not None:
            return AnswerReading(None, "invalid", invalid, reply_cut=cut)
        letters = _answer_value(chosen.value, options)
        if letters is None:
            return AnswerReading(None, "unreadable", reason="the answer field names no valid option letters", reply_cut=cut)
        return AnswerReading(letters, chosen.provenance, reply_cut=cut)
    block = trailing_lines(final, lambda line: bool(_ANSWER_LINE.match(line)), allowed_after=lambda line: bool(_REASON_LINE.match(line)))
    if block is not None:
        line = block[-1]
        invalid = invalid_reason(line, PLACEHOLDERS)
        if invalid is not None:
            return AnswerReading(None, "invalid", invalid, reply_cut=cut)
        letters = _line_letters(_ANSWER_LINE.match(line).group("value"), options)  # type: ignore[union-attr]
        if letters is not None:
            return AnswerReading(letters, "field", reply_cut=cut)
        return AnswerReading(None, "unreadable", reason=f"answer line {line[:80]!r} is not a list of option letters", reply_cut=cut)
    # A reply that is nothing but a letter list ("A", "a, c", "\\boxed{C}") states exactly those letters.
    bare = re.sub(r"^\$?\\boxed\{([^{}]{1,40})\}\$?$", r"\1", final.strip())
    if len(bare) <= 40:
        letters = _line_letters(bare, options)
        if letters is not None:
            return AnswerReading(letters, "field", reply_cut=cut)
    invalid = invalid_reason(final, PLACEHOLDERS)
    if invalid is not None:
        return AnswerReading(None, "invalid", invalid, reply_cut=cut)
    return AnswerReading(None, "unreadable", reason="no answer JSON and no ANSWER: line ends the reply", reply_cut=cut)


def parse_answer(text: str | None, options: Mapping[str, str]) -> frozenset[str] | None:
    """The set of option letters a reply selects, or None when it cannot be read (see `read_answer`)."""
    return read_answer(text, options).letters


class _QuotedLetter(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false

    letter: str = Field(description="One selected option letter.")
    quote: str = Field(description="The exact words of the reply that select this option.")


class _ReaderReply(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false

    answer: list[_QuotedLetter] = Field(default_factory=list)
    unreadable: bool = False
    reason: str = ""


MEDPIC_READER = ReaderTask(
    name="medpic answer",
    instructions=(
        "The reply answers a multiple-choice question whose options are given by letter. Record under \"answer\" "
        "each option the reply finally selects, as its \"letter\" with a \"quote\" that names that option (by its "
        "letter or by its text). Options the reply rules out, or selected and then took back, are not recorded."
    ),
    schema=ResponseSchema(name="medpic_reading", json_schema=json_schema(_ReaderReply)),
)


def verify_medpic_reading(data: Mapping[str, Any], final: str, options: Mapping[str, str],
                          conflict: bool = False) -> tuple[frozenset[str] | None, str]:
    """The reader's letters checked against the reply's structure: each quote is a whole-token span of the final
    answer naming its option (the capital letter as a token, or the option's text), at a place that selects it
    (an answer, select, choose or correct word, or a checked box or a "yes" cell; no negation such as "not" or
    "except"; not hedged; not followed by a revision), see `clinical_cf.replies.verify_quote`."""
    entries = quoted_items(dict(data), "answer")
    if entries is None:
        return None, "reader reply does not have the answer list"
    letters: set[str] = set()
    for entry in entries:
        letter, quote = str(entry.get("letter", "")).strip().upper().strip("()."), entry.get("quote")
        if letter not in options:
            return None, f"reader letter {letter!r} is not an option"
        text = options[letter]
        base = re.sub(r"\s*\([^()]*\)\s*", " ", text).strip()  # "acetaminophen (paracetamol)" -> "acetaminophen"
        quote_text = str(quote or "")
        target = letter if occurrences(letter, quote_text) else next(
            (t for t in (text, base) if len(t) >= 4 and item_in_quote(t, quote_text)), None)
        if target is None:
            return None, f"quote for {letter} names neither the letter nor its option"
        why = verify_quote(quote, final, target, "positive", ANSWER_STEMS, revision=conflict, negations=EXCLUDING_WORDS)
        if why:
            return None, f"quote for {letter}: {why}"
        # "B (nitrofurantoin)" where nitrofurantoin is A: a letter written with another option's text settles neither.
        texts = {" ".join(t.lower().split()): k for k, t in options.items()}
        for place in places(quote_text, final, target):
            for match in _LETTER_WITH_TEXT.finditer(place.line):
                named, text = match.group(1).upper(), texts.get(" ".join(match.group(2).lower().split()))
                if text is not None and named != text and letter in (named, text):
                    return None, f"quote for {letter}: its line writes option {named} with the text of option {text}"
        letters.add(letter)
    if not letters:
        return None, "reader selected no option"
    return frozenset(letters), ""


async def read_answer_with_reader(text: str | None, options: Mapping[str, str], reader: Any | None, stop_reason: str | None = None,
                                  max_tokens: int | None = None) -> AnswerReading:
    """`read_answer`, then step (d) when it read nothing: the reader role's verified reading (told when the
    reply's answers conflict, and then held to the revision the reply marks)."""
    reading = read_answer(text, options, stop_reason, max_tokens)
    if not reading.needs_reader or reader is None:
        return reading
    final = final_answer(text)
    conflict = is_conflict(reading.reason)
    prefix = reading.reason + "; " if conflict else ""
    agreed = await agreed_reading(
        reader, MEDPIC_READER, final, f"Options: {json.dumps(dict(options))}\n\n{final}", conflict=reading.reason if conflict else None,
        verify=lambda data: verify_medpic_reading(data, final, options, conflict), same=lambda a, b: a == b)
    if agreed.value is None:
        return AnswerReading(None, "unreadable", reason=prefix + agreed.reason, reply_cut=reading.reply_cut,
                             reader=agreed.record, conflict=reading.conflict)
    return AnswerReading(agreed.value, "agreement", reply_cut=reading.reply_cut, reader=agreed.record)


def format_answer(letters: frozenset[str] | set[str] | list[str] | None) -> str:
    return ",".join(sorted(letters)) if letters else ""
