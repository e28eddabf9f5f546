"""CMS arithmetic and deterministic matching through the treatment lexicon."""

import json

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

from clinical_cf.catalog.css.lexicon import default_lexicon
from clinical_cf.scorers.cms import cms_from_coverage, consensus_match, lexicon_coverage
from clinical_cf.solvers.css import ArmResult, CSSArms, Recommendation, arm_result
from helpers import MockModel


def test_all_terms_defined():
    # strong: 1 of 2 covered; tacit: 1 of 1; refusal: 1 of 2 recommended; extras: 2 of 4 useful.
    labels = ["strong", "strong", "tacit", "refusal", "refusal", "mixed"]
    covered = {0: [0], 1: [], 2: [1], 3: [2], 4: [], 5: []}
    result = cms_from_coverage(labels, covered, n_recommendations=4)
    assert result.r_strong == 0.5 and result.r_tacit == 1.0 and result.v_refusal == 0.5
    assert result.p_extra == 0.5
    assert result.cms == pytest.approx(0.6 * 0.5 + 0.2 * 1.0 + 0.15 * 0.5 + 0.05 * 0.5)


def test_undefined_terms_are_dropped_and_weights_renormalised():
    result = cms_from_coverage(["strong", "refusal"], {0: [0], 1: [1]}, n_recommendations=2)
    assert result.r_tacit is None
    assert result.cms == pytest.approx((0.6 * 1.0 + 0.15 * 0.0 + 0.05 * 0.5) / 0.8)


def test_mixed_recommendation_is_not_an_extra():
    result = cms_from_coverage(["strong", "mixed"], {0: [0], 1: [1]}, n_recommendations=2)
    assert result.p_extra == 1.0


def test_no_recommendations_scores_zero_recall_and_precision():
    result = cms_from_coverage(["strong", "refusal"], {0: [], 1: []}, n_recommendations=0)
    assert result.cms == pytest.approx(0.15 / 0.8)


@pytest.mark.parametrize(
    "consensus, recommendation, expected",
    [
        ("FOLFOX + bevacizumab", "mFOLFOX6 with Avastin", True),
        ("FOLFOX + bevacizumab", "5-FU, leucovorin and oxaliplatin plus bev", True),
        ("FOLFOX + bevacizumab", "FOLFIRI + bevacizumab", False),
        ("adjuvant T-DM1", "Kadcyla x 14 cycles", True),
        ("adjuvant T-DM1", "trastuzumab + pertuzumab", False),
        ("trastuzumab + pertuzumab", "ado-trastuzumab emtansine", False),
        ("letrozole + CDK4/6 inhibitor (palbociclib/ribociclib/abemaciclib)", "Femara plus Kisqali", True),
        ("aromatase inhibitor", "anastrozole 1 mg daily", True),
        ("pembrolizumab", "Keytruda 200 mg q3w", True),
        ("osimertinib", "Tagrisso 80 mg daily", True),
        ("whole-breast radiotherapy", "adjuvant whole breast RT", True),
    ],
)
def test_lexicon_matching(consensus, recommendation, expected):
    covered = lexicon_coverage(
        [{"treatment": consensus, "label": "strong"}], [Recommendation(treatment=recommendation)], default_lexicon()
    )
    assert bool(covered[0]) is expected


def test_explicit_match_overrides_the_treatment_text():
    covered = lexicon_coverage(
        [{"treatment": "the board's preferred doublet", "label": "strong", "match": [["folfox", "capox"]]}],
        [Recommendation(treatment="XELOX")],
        default_lexicon(),
    )
    assert covered[0] == [0]


def test_judge_matching_uses_the_judge_role():
    @solver
    def baseline_only():
        async def solve(state, generate):
            state.store_as(CSSArms).baseline = ArmResult(
                summary="", raw="", parsed=True,
                recommendations=[Recommendation(treatment="the usual doublet"), Recommendation(treatment="radiation")],
            )
            return state

        return solve

    consensus = [
        {"treatment": "FOLFOX", "label": "strong"},
        {"treatment": "radiotherapy", "label": "tacit"},
        {"treatment": "cetuximab", "label": "refusal"},
    ]
    judge = MockModel("mockllm/judge", lambda prompt: json.dumps({"1": [1], "2": [2], "3": []}))
    sample = Sample(id="c:X", input="x", metadata={"case_id": "c", "consensus": consensus})
    log = eval(
        Task(dataset=[sample], solver=baseline_only(), scorer=consensus_match(matching="judge")),
        model=MockModel("mockllm/model", lambda p: "").model,
        model_roles={"judge": judge.model},
        display="none",
    )[0]
    score = log.samples[0].scores["cms"]
    # The lexicon cannot read "the usual doublet"; the judge says it is FOLFOX: every term is 1.
    assert score.value == pytest.approx(1.0)
    assert score.metadata["matching"] == "judge"
    assert judge.total_calls == 1


def test_invalid_baseline_is_unscored_not_a_zero_cms():
    @solver
    def echo():
        async def solve(state, generate):
            state.store_as(CSSArms).baseline = arm_result('{"recommendations": [{"treatment": "<regimen, drug(s), procedure or action>"}]}')
            return state

        return solve

    sample = Sample(id="c:D1", input="p", metadata={"case_id": "c", "consensus": [{"treatment": "FOLFOX", "label": "strong"}]})
    log = eval(Task(dataset=[sample], solver=echo(), scorer=consensus_match()), model=MockModel("mockllm/model", lambda _: "").model,
               display="none")[0]
    score = log.samples[0].scores["cms"]
    assert score.reason == "invalid_output" and score.metadata["invalid"] == "placeholder_echo"
    assert log.results.scores[0].unscored_samples == 1
