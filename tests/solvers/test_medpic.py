"""MedPIC prompt rendering and the answer parser on messy replies (wording other than our own prompt's)."""

import pytest
from clinical_cf.catalog.medpic.questions import load_questions
from clinical_cf.solvers.medpic import (
    PROMPT,
    format_answer,
    parse_answer,
    render_prompt,
)

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
        # prose fallback only when one option is referred to
        ("I think option C is the one to avoid because of the interaction.", "C"),
        ("The answers are A and C.", "AC"),
    ],
)
def test_parser_reads_messy_replies(reply, expected):
    assert parse_answer(reply, OPTIONS) == frozenset(expected)


@pytest.mark.parametrize(
    "reply",
    ["", "   ", "I cannot answer this.", "Options A and C are both fine but B is risky.", "ANSWER: F", "ANSWER: ",
     "It depends on the indication."],
)
def test_unparseable_replies_give_none(reply):
    assert parse_answer(reply, OPTIONS) is None


def test_parser_does_not_depend_on_option_count_or_prompt_wording():
    options = {"A": "warfarin", "B": "None of the above"}
    assert parse_answer("Selection = B", options) == frozenset("B")
    assert parse_answer("Final choice: warfarin", options) == frozenset("A")
    assert format_answer(frozenset("CA")) == "A,C" and format_answer(None) == ""


def test_render_prompt_is_pure_and_never_mentions_a_partner():
    questions = load_questions()
    cf = next(q for q in questions if q.operation == "deactivation")
    text = render_prompt(cf)
    assert text == render_prompt(cf.model_dump())
    assert cf.vignette in text and "E. None of the above" in text and text.rstrip().endswith("comma-separated>")
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
    assert parse_answer(reply, OPTIONS) == frozenset(expected)


def test_json_answers_reasoning_and_invalid_output():
    from clinical_cf.solvers.medpic import read_answer

    options = {"A": "Glyburide", "B": "Metformin", "C": "Linagliptin", "D": "None of the above"}
    assert read_answer('{"answer": ["A", "C"]}', options).letters == frozenset("AC")
    assert read_answer('{"selection": {"A": true, "B": false, "C": "yes", "D": false}}', options).letters == frozenset("AC")
    assert read_answer("<think>ANSWER: B</think>\nGlyburide is the one to avoid.\nANSWER: A", options).letters == frozenset("A")
    assert read_answer('{"answer": ["A", "maybe"]}', options).letters is None  # one unreadable element: unreadable, not {A}
    echo = read_answer("ANSWER: <letter or letters, comma-separated>", options)
    assert echo.letters is None and echo.provenance == "invalid" and echo.invalid == "placeholder_echo"
