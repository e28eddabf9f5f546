"""MedPIC prompt rendering and the answer reading on messy replies (wording other than our own prompt's).

Issue 21 changed the reading deliberately: `parse_answer` (steps a-c) reads the answer JSON and a
closing `ANSWER:` line only; every other wording is left to the reader role, whose reading is
verified against the reply's words. The expected letter sets below are unchanged: each reply is
either read by the closed grammar, or left unread by it (never read differently) and read through a
faithful scripted reader whose quotes the verification accepts.
"""

import json
import re

import anyio
import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.solvers.medpic import (
    INSTRUCTION_PLAIN,
    PROMPT,
    format_answer,
    parse_answer,
    read_answer,
    read_answer_with_reader,
    render_prompt,
)


def faithful_reader(reply: str, options: dict, letters: str):
    """A mockllm reader that quotes, for each letter, the shortest piece of the reply naming it."""
    pieces = [p.strip() for p in re.split(r"[,;\n]|\band\b|(?<=[.!?])\s", reply) if p.strip()]

    def quote(letter: str) -> str:
        base = re.sub(r"\s*\(.*?\)", "", options[letter]).lower()
        named = [p for p in pieces if re.search(rf"(?<![A-Za-z]){letter}(?![A-Za-z])", p, re.IGNORECASE if len(p) < 4 else 0)
                 or options[letter].lower() in p.lower() or base in p.lower()]
        return min(named, key=len) if named else letter

    def respond(messages, tools, tool_choice, config):
        answer = [{"letter": letter, "quote": quote(letter)} for letter in letters]
        out = ModelOutput.from_content("mockllm/model", json.dumps({"answer": answer}))
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    # Two independent readers giving the same reading (issue 37: one reader's reading is only `unconfirmed`).
    return (get_model("mockllm/model", custom_outputs=respond, memoize=False),
            get_model("mockllm/second_reader", custom_outputs=respond, memoize=False))


def read_in_full(reply: str, options: dict, expected: str):
    """(letters read by steps a-c, letters read in the full order with a faithful reader)."""
    reading = anyio.run(read_answer_with_reader, reply, options, faithful_reader(reply, options, expected))
    return parse_answer(reply, options), reading.letters

OPTIONS = {"A": "diphenhydramine", "B": "acetaminophen (paracetamol)", "C": "atorvastatin", "D": "levothyroxine",
           "E": "None of the above"}


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("The patient is 81.\nANSWER: B, D", "BD"),
        ("**Answer:** B and D", "BD"),
        ("Final answer: (A), (C)", "AC"),
        ("answer: b, d", "BD"),
        ("Answer - b/d", "BD"),
        ("ANSWER: [A, C]", "AC"),
        ("ANSWER: AC", "AC"),
        ("Final Answer: A, C\n", "AC"),
        ("My answer would be: C", "C"),
        ("Selected options: a and c.", "AC"),
        ("\\boxed{C}", "C"),
        ("A", "A"),
        ("a, c", "AC"),
        # "None of the above" as text, letter or both
        ("ANSWER: E (None of the above)", "E"),
        ("The correct answer is None of the above.", "E"),
        ("Answer: none", "E"),
        ("None of these apply to her, so my answer: none of the above", "E"),
        # option text instead of letters
        ("Diphenhydramine is anticholinergic.\nAnswer: diphenhydramine", "A"),
        ("Answer: acetaminophen", "B"),
        ("answer: a risk exists with A", "A"),
        # the last answer field wins
        ("Answer: A\n\nOn reflection, the CrCl changes this.\nFinal answer: C", "C"),
        # prose is read (by the reader) only where a word selects the option: "I think option C is the one to
        # avoid" selects nothing by its words and is left unreadable (tests/test_replies.py)
        ("I select option C, the one to avoid because of the interaction.", "C"),
        ("The answers are A and C.", "AC"),
    ],
)
def test_parser_reads_messy_replies(reply, expected):
    closed, full = read_in_full(reply, OPTIONS, expected)
    assert closed in (frozenset(expected), None)  # the closed grammar reads it right or leaves it to the reader
    assert full == frozenset(expected)


@pytest.mark.parametrize(
    "reply",
    ["", "   ", "I cannot answer this.", "Options A and C are both fine but B is risky.", "ANSWER: F", "ANSWER: ",
     "It depends on the indication."],
)
def test_unparseable_replies_give_none(reply):
    assert parse_answer(reply, OPTIONS) is None


def test_parser_does_not_depend_on_option_count_or_prompt_wording():
    options = {"A": "warfarin", "B": "None of the above"}
    assert read_in_full("Selection = B", options, "B")[1] == frozenset("B")
    assert read_in_full("Final choice: warfarin", options, "A")[1] == frozenset("A")
    assert parse_answer("Answer: warfarin", options) == frozenset("A")
    assert format_answer(frozenset("CA")) == "A,C" and format_answer(None) == ""


def test_render_prompt_is_pure_and_never_mentions_a_partner():
    questions = load_questions()
    cf = next(q for q in questions if q.operation == "deactivation")
    text = render_prompt(cf)
    assert text == render_prompt(cf.model_dump())
    # Issue 21: no template slot a model can copy; the answer line is described in words.
    assert cf.vignette in text and "E. None of the above" in text and text.rstrip().endswith(INSTRUCTION_PLAIN)
    assert "<" not in text.split(cf.question)[-1]
    for word in ("pair", "counterfactual", "partner", "activation", cf.pair_id):
        assert word not in text.lower() or word not in PROMPT
    assert cf.pair_id not in text
    single = render_prompt({**cf.model_dump(), "multi_select": False})
    assert "Select one option." in single


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("ANSWER: A (diphenhydramine) and C (atorvastatin)", "AC"),
        ("ANSWER: B. Diphenhydramine would be fine here.", "B"),
        ("Answer: E: None of the above", "E"),
        ("Answer: Diphenhydramine and atorvastatin", "AC"),
        ("Answer: I would avoid diphenhydramine", "A"),
        ("Answer: Options B and D", "BD"),
    ],
)
def test_letters_take_precedence_over_option_text(reply, expected):
    closed, full = read_in_full(reply, OPTIONS, expected)
    assert closed in (frozenset(expected), None)
    assert full == frozenset(expected)


def test_json_answers_reasoning_and_invalid_output():
    options = {"A": "Glyburide", "B": "Metformin", "C": "Linagliptin", "D": "None of the above"}
    assert read_answer('{"answer": ["A", "C"]}', options).letters == frozenset("AC")
    # A per-letter flag object is not the answer schema: left to the reader (issue 21), never guessed.
    flags = '{"selection": {"A": true, "B": false, "C": "yes", "D": false}}'
    assert read_answer(flags, options).letters is None and read_answer(flags, options).needs_reader
    assert read_answer("<think>ANSWER: B</think>\nGlyburide is the one to avoid.\nANSWER: A", options).letters == frozenset("A")
    assert read_answer('{"answer": ["A", "maybe"]}', options).letters is None  # one unreadable element: unreadable, not {A}
    echo = read_answer("ANSWER: <letter or letters, comma-separated>", options)
    assert echo.letters is None and echo.provenance == "invalid" and echo.invalid == "placeholder_echo"
