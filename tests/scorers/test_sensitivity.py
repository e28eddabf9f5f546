"""The four sensitivity measures on hand-computed distributions, direction rules, and parsing."""

import math

import pytest
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs, ModelOutput, TopLogprob

from clinical_cf.catalog.sensitivity.perturbations import Tolerance
from clinical_cf.scorers.sensitivity import consistent, entropy, js_divergence, measure, normalise
from clinical_cf.solvers.sensitivity import letter_distribution, parse_distribution


def test_measures_on_a_hand_computed_pair():
    change = measure([0.5, 0.5], [1.0, 0.0], gold=0)
    assert change.relative == pytest.approx(1.0) and change.signed == pytest.approx(1.0)
    kl_p = 0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25)
    kl_q = math.log2(1 / 0.75)
    assert change.js == pytest.approx(0.5 * kl_p + 0.5 * kl_q)  # 0.3113 bits
    assert change.entropy_change == pytest.approx(-1.0)
    assert not change.flip  # argmax of [0.5, 0.5] is the first option


def test_unnormalised_inputs_and_zero_gold():
    assert normalise([2, 2]).tolist() == [0.5, 0.5]
    change = measure([0, 3, 1], [1, 2, 1], gold=0)  # P(gold) = 0 is floored, not divided by
    assert math.isfinite(change.relative) and change.signed > 0
    assert entropy(normalise([1, 1, 1, 1])) == pytest.approx(2.0)
    assert js_divergence(normalise([1, 0]), normalise([1, 0])) == 0.0
    with pytest.raises(ValueError):
        normalise([0, 0])


def test_direction_rules():
    tol = Tolerance()
    assert consistent(measure([0.6, 0.4], [0.62, 0.38], 0), "invariant", tol)
    assert not consistent(measure([0.6, 0.4], [0.45, 0.55], 0), "invariant", tol)  # flip
    assert consistent(measure([0.6, 0.4], [0.8, 0.2], 0), "up", tol)
    assert consistent(measure([0.6, 0.4], [0.4, 0.6], 0), "down", tol)
    assert consistent(measure([0.6, 0.2, 0.2], [0.2, 0.6, 0.2], 0), "shift", tol)
    assert not consistent(measure([0.6, 0.2, 0.2], [0.55, 0.25, 0.2], 0), "shift", tol)
    assert consistent(measure([0.8, 0.2], [0.55, 0.45], 0), "entropy_up_no_flip", tol)
    assert not consistent(measure([0.8, 0.2], [0.1, 0.9], 0), "entropy_up_no_flip", tol)  # confident flip


@pytest.mark.parametrize(
    "reply, expected",
    [
        ('{"A": 0.7, "B": 0.2, "C": 0.1}', [0.7, 0.2, 0.1]),
        ('```json\n{"probabilities": {"a": 70, "b": 20, "c": 10}}\n```', [0.7, 0.2, 0.1]),
        ('{"Pneumonia": "50%", "Bronchitis": "50%"}', [0.5, 0.5, 0.0]),
        ("I think it is pneumonia.", None),
    ],
)
def test_distribution_parsing_and_renormalisation(reply, expected):
    result = parse_distribution(reply, ["Pneumonia", "Bronchitis", "Lung cancer"])
    assert result == (None if expected is None else pytest.approx(expected))


def test_logprob_distribution_from_a_recorded_response():
    top = [TopLogprob(token=" B", logprob=math.log(0.6)), TopLogprob(token="A", logprob=math.log(0.3)),
           TopLogprob(token="The", logprob=math.log(0.05)), TopLogprob(token="C.", logprob=math.log(0.05))]
    output = ModelOutput(model="m", choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content="B"),
        logprobs=Logprobs(content=[Logprob(token="B", logprob=math.log(0.6), top_logprobs=top)]),
    )])
    assert letter_distribution(output, 3) == pytest.approx([0.3 / 0.95, 0.6 / 0.95, 0.05 / 0.95])
    assert letter_distribution(ModelOutput.from_content("m", "B"), 3) is None
