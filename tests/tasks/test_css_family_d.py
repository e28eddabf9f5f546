"""End to end: css_family_d on mock models with deterministic, input-dependent replies."""

import json

import pytest
from inspect_ai import eval, score

from clinical_cf.scorers.css_judge import judge_direction
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, data_blocks, recommendations_json

ADJUVANT = {
    "breast": recommendations_json("paclitaxel + trastuzumab (weekly x 12, then trastuzumab to 1 year)", "tamoxifen"),
    "pancreas": recommendations_json("modified FOLFIRINOX", "gemcitabine + capecitabine", avoid=("olaparib",)),
}
NEOADJUVANT = recommendations_json("neoadjuvant FOLFIRINOX then restaging for resection")


def tumor_board(prompt: str) -> str:
    """A model that notices a missing resection in pancreatic cases only."""
    if "<packet>" in prompt:
        organ = "pancreas" if "Pancreatic" in prompt else "breast"
        unresected = "No oncologic resection" in prompt and organ == "pancreas"
        return f"ORGAN={organ}; STATUS={'unresected' if unresected else 'resected'}"
    if "STATUS=unresected" in prompt:
        return NEOADJUVANT
    return ADJUVANT["pancreas" if "ORGAN=pancreas" in prompt else "breast"]


def judge(prompt: str) -> str:
    baseline, counterfactual = data_blocks(prompt)["BASELINE"], data_blocks(prompt)["COUNTERFACTUAL"]
    changed = baseline.strip() != counterfactual.strip()
    control = "No change in substance" in prompt
    score = (0 if changed else 1) if control else (1 if changed else 0)
    return json.dumps({"score": score, "rationale": "changed" if changed else "unchanged"})


@pytest.fixture
def run():
    model, judge_model = MockModel("mockllm/model", tumor_board), MockModel("mockllm/judge", judge)
    log = eval(
        css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
        model=model.model,
        model_roles={"judge": judge_model.model},
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log, model, judge_model


def metrics(log, scorer):
    return {name: m.value for s in log.results.scores if s.name == scorer for name, m in s.metrics.items()}


def test_metrics(run):
    log, _, _ = run
    css = metrics(log, "judge_direction")
    # Two Family D tuples (breast and pancreas lose their resection): only pancreas updates.
    assert css["css"] == 0.5
    assert css["family_D"] == 0.5
    assert (css["wrong"], css["partial"], css["correct"]) == (0.5, 0.0, 0.5)
    # One negative control per case; the model's lists never move on them.
    assert css["family_N"] == 1.0 and css["control_stability"] == 1.0
    cms = metrics(log, "cms")
    # pancreas: every term 1 -> 1.0. breast: R_strong 1/2, no tacit, tamoxifen (refusal)
    # recommended, 1 of 2 recommendations useful -> (0.6*0.5 + 0.15*0 + 0.05*0.5) / 0.8.
    assert cms["cms"] == pytest.approx((1.0 + 0.40625) / 2)
    assert cms["cases"] == 2


def test_samples_carry_both_arms_judge_and_registration(run):
    log, _, _ = run
    assert len(log.samples) == 4
    assert {s.metadata["family"] for s in log.samples} == {"D", "N"}
    for sample in log.samples:
        score = sample.scores["judge_direction"]
        assert score.metadata["judge_model"] == "mockllm/judge"
        assert "BASELINE:" in score.explanation and "COUNTERFACTUAL:" in score.explanation
        assert sample.store["CSSArms:baseline"]["recommendations"]
        assert sample.store["CSSArms:counterfactual"]["recommendations"]
        assert sample.metadata["catalog_registered"] is True
        assert sample.metadata["split"] in ("dev", "test")
    assert log.eval.metadata["intervention_counts"]["D1_remove_resection"]["scored"] == 2


def test_baseline_is_generated_once_per_case(run):
    _, model, judge_model = run
    baseline_summaries = [p for p, n in model.calls.items() if "<packet>" in p and "No oncologic resection" not in p]
    # 2 cases x 2 stages for the baselines, 4 tuples x 2 stages for the counterfactuals.
    assert model.total_calls == 2 * 2 + 4 * 2
    assert judge_model.total_calls == 4
    assert all(model.calls[p] == 1 for p in baseline_summaries if "=== DEMOGRAPHICS ===\n" in p)


def test_rejudging_a_log_with_another_judge_regenerates_nothing(run):
    log, model, _ = run
    calls_before = model.total_calls
    strict = MockModel("mockllm/strict-judge", lambda prompt: json.dumps({"score": 0, "rationale": "strict"}))
    rescored = score(log, judge_direction(), model_roles={"judge": strict.model}, action="append", display="none")
    assert model.total_calls == calls_before
    assert strict.total_calls == len(log.samples)
    names = [s.name for s in rescored.results.scores]
    assert "judge_direction" in names and "judge_direction1" in names
    for sample in rescored.samples:
        assert sample.scores["judge_direction1"].metadata["judge_model"] == "mockllm/strict-judge"
