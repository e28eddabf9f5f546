"""Items are things, or the reply is unreadable; a judge's verdict is its own (issue 37, item 3).

Each class of issue 37's blind corpus that was read into a value the reply does not state has a case here
(each failed before): pointers instead of treatments, struck items, an item in both lists, a full-width
separator with a CJK negation, and judges' quoted, echoed, unscaled and non-critical labels.
"""

from __future__ import annotations

import pytest

from clinical_cf.replies import is_pointer, read_flag, read_score, resolve_pointer, unreadable_code
from clinical_cf.scorers.css_judge import VALID_SCORES
from clinical_cf.solvers.css import read_recommendations
from clinical_cf.solvers.medpic import read_answer
from clinical_cf.solvers.workflow import parse_decision

ROMAN = """Options weighed by the board:
(i) Trastuzumab plus pertuzumab plus docetaxel
(ii) Tucatinib plus capecitabine plus trastuzumab
(iii) Lapatinib plus capecitabine

"""


def names(items):
    return [i.treatment for i in items]


def test_an_option_label_is_resolved_against_the_replys_own_unambiguous_enumeration():
    reply = ROMAN + ('{"recommendations": [{"treatment": "Option (i)", "rationale": "first line"}], '
                     '"not_recommended": [{"treatment": "(iii)", "rationale": "inferior"}]}')
    reading = read_recommendations(reply)
    assert names(reading.recommendations) == ["Trastuzumab plus pertuzumab plus docetaxel"]
    assert names(reading.not_recommended) == ["Lapatinib plus capecitabine"]
    two = read_recommendations("1. Osimertinib\n2. Bevacizumab plus erlotinib\n3. Gefitinib\n\nRECOMMENDED: items 1 and 2 above\nNOT RECOMMENDED: 3")
    assert names(two.recommendations) == ["Osimertinib", "Bevacizumab plus erlotinib"] and names(two.not_recommended) == ["Gefitinib"]


@pytest.mark.parametrize(
    "reply",
    [
        # two enumerations use the same labels: "Option 1" could be either
        "Surgical options: 1. Whipple procedure 2. Distal pancreatectomy\nSystemic options: 1. FOLFIRINOX 2. Gemcitabine\n\n"
        "RECOMMENDED: Option 1\nNOT RECOMMENDED: Option 2",
        '{"recommendations": [{"treatment": "See rationale", "rationale": "Given ALK fusion, alectinib is preferred."}], "not_recommended": []}',
        '{"recommendations": [{"treatment": "As discussed in the paragraph above", "rationale": "x"}], "not_recommended": []}',
        '{"recommendations": ["see above"], "not_recommended": []}',
        "RECOMMENDED: Option (iv)\nNOT RECOMMENDED: none",  # no enumeration at all
    ],
)
def test_a_pointer_that_does_not_resolve_is_unreadable_pointer(reply):
    reading = read_recommendations(reply)
    assert reading.provenance == "unreadable" and unreadable_code(reading.reason) == "pointer", reading


def test_pointer_detection_leaves_treatment_names_alone():
    assert not any(map(is_pointer, ["FOLFOX", "Imatinib 400 mg once daily", "5-FU plus leucovorin", "T-DM1", "Arm lymphoedema care"]))
    assert resolve_pointer("Option (ii)", ROMAN) == (["Tucatinib plus capecitabine plus trastuzumab"], "")


@pytest.mark.parametrize(
    "reply",
    [
        "RECOMMENDED: Pembrolizumab; ~~Ipilimumab~~\nNOT RECOMMENDED: Sorafenib",
        "RECOMMENDED: Cabozantinib; <del>Sunitinib</del>\nNOT RECOMMENDED: Interferon alfa",
        '{"recommendations": [{"treatment": "~~Nivolumab~~", "rationale": "withdrawn"}, {"treatment": "Ipilimumab", "rationale": "x"}], "not_recommended": []}',
        '{"recommendations": [{"treatment": "Bevacizumab", "rationale": "VEGF"}], "not_recommended": [{"treatment": "Bevacizumab", "rationale": "haemoptysis"}]}',
    ],
)
def test_a_struck_item_or_an_item_in_both_lists_is_a_conflict(reply):
    reading = read_recommendations(reply)
    assert reading.provenance == "unreadable" and unreadable_code(reading.reason) == "conflicting answers" and reading.conflict


def test_struck_answers_are_conflicts_in_the_other_suites_too():
    assert read_answer("ANSWER: ~~A~~, B", {"A": "Warfarin", "B": "Apixaban"}).letters is None
    assert parse_decision("ACTION: ~~ANSWER~~ ESCALATE, CONFIDENCE: 0.7").unreadable == "conflicting answers"


def test_a_full_width_separator_and_a_cjk_negation_never_make_one_recommended_item():
    reading = read_recommendations("RECOMMENDED: 多西他赛；不推荐米托蒽醌\nNOT RECOMMENDED: none")
    assert reading.provenance == "unreadable" and not reading.recommendations


def test_a_superseded_plan_stated_first_is_a_second_answer():
    reply = "Initial plan: RECOMMENDED: Watchful waiting\nHaving seen the rising LDH, the plan is replaced.\nRECOMMENDED: R-CHOP\nNOT RECOMMENDED: Watchful waiting"
    assert unreadable_code(read_recommendations(reply).reason) == "conflicting answers"


@pytest.mark.parametrize(
    "reply, score",
    [
        ("The counterfactual reply says:\n> Verdict: 1\nThat is the model's text, not mine.\nVerdict: 0", 0.0),  # a quote is no verdict
        ("Quoting the rubric example:\n> Score: 1\nI cannot tell from these lists.", None),
        ("Score: 4 points", None),  # points with no stated scale
        ("Score: 4/5", None),  # 0.8 is not a verdict of the rule
        ("Score: 2/2", 1.0),  # the scale is stated: normalised
        ("Score: 1 out of 2", 0.5),
    ],
)
def test_a_verdict_is_the_judges_own_line_and_a_scale_counts_only_when_stated(reply, score):
    assert read_score(reply, VALID_SCORES).value == score


def test_a_non_critical_label_and_an_echoed_rubric_are_not_the_judges_answer():
    assert read_flag("Score: 1\nNon-critical error: yes (minor wording)\nCritical error: no", "critical_error").value is False
    assert read_flag("Non-critical error: yes", "critical_error").value is None  # no critical_error stated
    echo = 'Rubric: answer "mentions: yes" if the rationale names the changed fact, "mentions: no" otherwise.\nmentions: yes'
    assert read_flag(echo, "mentions").value is True
    assert read_flag("> mentions: yes\nI cannot tell.", "mentions").value is None
