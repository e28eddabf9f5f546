"""Statistics against hand-computed values."""

import math

import numpy as np
import pandas as pd
import pytest
from inspect_ai.scorer import Score, mode_score

from clinical_cf.analysis.report import _reduced, confirmatory, reduce_epochs, table_cms_css
from clinical_cf.analysis.stats import (
    cluster_bootstrap_ci,
    equivalence_upper,
    holm,
    mcnemar_exact,
    models_for_rank_test,
    paired_difference,
    rank_correlation,
    ranks,
    tuples_for_power,
    verdict_kappa,
)
from clinical_cf.catalog.css.predictions import PREDICTIONS_PATH


def test_rank_correlation_reproduces_the_css_paper():
    # Table 2 of the CSS paper as ranks: CMS order 1..6, CSS ranks 4,3,5,6,2,1.
    rc = rank_correlation([1, 2, 3, 4, 5, 6], [4, 3, 5, 6, 2, 1])
    assert rc.rho == pytest.approx(1 - 6 * 52 / (6 * 35))  # -0.486
    assert rc.exact and rc.p_permutation == pytest.approx(0.3556, abs=1e-4)  # the paper's p = 0.36
    assert rc.tau == pytest.approx(-1 / 3)


def test_exact_p_of_a_perfect_ranking():
    assert rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]).p_permutation == pytest.approx(2 / 24)


def test_kappa_unweighted_and_linear():
    a, b = [0, 0.5, 1, 1], [0, 0.5, 1, 0]
    assert verdict_kappa(a, b) == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert verdict_kappa(a, b, weighted=True) == pytest.approx(0.5)


@pytest.mark.parametrize("a, b", [([], []), ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]), ([0.5], [0.5])], ids=["no-pairs", "all-1", "one-pair"])
def test_kappa_is_undefined_not_an_error_when_chance_agreement_is_total(a, b, recwarn):
    """No pairs, or both raters giving one and the same verdict throughout: kappa's denominator is 0."""
    assert np.isnan(verdict_kappa(a, b)) and np.isnan(verdict_kappa(a, b, weighted=True))
    assert not [w for w in recwarn if "sklearn" in (w.filename or "") or "cohen" in str(w.message)]


def test_kappa_of_constant_raters_who_disagree_is_zero():
    assert verdict_kappa([1.0, 1.0], [0.0, 0.0]) == 0.0


def test_mcnemar_exact():
    assert mcnemar_exact(8, 2) == pytest.approx(112 / 1024)
    assert mcnemar_exact(0, 0) == 1.0


def test_cluster_bootstrap_is_seeded_and_resamples_cases():
    values = [1, 1, 1, 0, 0, 0]
    cases = ["a", "a", "a", "b", "b", "b"]
    first = cluster_bootstrap_ci(values, cases, seed=3)
    assert first == cluster_bootstrap_ci(values, cases, seed=3)
    # Two cases, one all 1 and one all 0: resampled means can only be 0, 0.5 or 1.
    assert first[0] in (0.0, 0.5) and first[1] in (0.5, 1.0)
    assert cluster_bootstrap_ci([0.5] * 4, ["x"] * 4) == (0.5, 0.5)


def test_ranks_best_first_with_average_ties():
    assert ranks([0.61, 0.575, 0.575, 0.48]) == [1.0, 2.5, 2.5, 4.0]
    assert np.isclose(sum(ranks([3, 1, 2])), 6)


def test_rank_correlation_refuses_constant_rankings():
    with pytest.raises(ValueError, match="undefined"):
        rank_correlation([0.5, 0.5, 0.5], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 3"):
        rank_correlation([1, 2], [1, 2])


def test_holm_adjustment():
    # m = 3: sorted p 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone).
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_power_and_models_needed():
    # (1.96 + 0.8416)^2 * (0.5 / 0.1)^2 = 196.2 -> 197 tuples.
    assert tuples_for_power(0.5, 0.1) == 197
    # A perfect ranking is first significant at n = 5 (exact two-sided p = 2/120).
    assert models_for_rank_test(1.0) == 5
    assert models_for_rank_test(0.49) is None or models_for_rank_test(0.49) > 6


def test_paired_difference_and_equivalence():
    mean, low, high = paired_difference([1, 1, 0, 1], [0, 1, 0, 0], ["a", "b", "c", "d"])
    assert mean == 0.5 and low <= mean <= high
    low, high, passed = equivalence_upper([0.0] * 6, list("aabbcc"))
    assert (low, high, passed) == (0.0, 0.0, True)
    assert not equivalence_upper([0.0, 0.5, 0.0, 0.5], list("abcd"))[2]


# Seeded results of the case-clustered bootstrap as the per-resample Python loop gave them before it
# was vectorised (pinned from that code): the same seed must give the same interval, so every table
# and confirmatory verdict printed before the change is reproduced after it.
PINNED_CLUSTERS_SEED = 42


def _pinned_inputs():
    rng = np.random.default_rng(PINNED_CLUSTERS_SEED)
    clusters = [f"case-{i:02d}" for i in rng.integers(0, 23, 160)]  # 23 cases of uneven size
    values = rng.choice([0.0, 0.5, 1.0], 160, p=[0.3, 0.2, 0.5])
    other = rng.choice([0.0, 0.5, 1.0], 160)
    return values, clusters, other


def test_cluster_bootstrap_reproduces_the_pinned_seeded_intervals():
    values, clusters, other = _pinned_inputs()
    exact = pytest.approx
    assert cluster_bootstrap_ci(values, clusters) == exact((0.5092408459595961, 0.6433212533860457), abs=1e-9)
    assert cluster_bootstrap_ci(values, clusters, seed=7, level=0.9) == exact((0.5191187659957114, 0.637729348994319), abs=1e-9)
    assert cluster_bootstrap_ci(values, clusters, n_resamples=500, seed=3) == exact((0.5125314613811547, 0.6437908496732027), abs=1e-9)
    assert paired_difference(values, other, clusters) == exact((0.078125, 0.0, 0.15162004899959164), abs=1e-9)
    low, high, passed = equivalence_upper(1 - values, clusters)
    assert (low, high) == exact((0.36734117375763864, 0.4785714285714286), abs=1e-9) and not passed
    # A statistic other than the mean still resamples the same cases.
    assert cluster_bootstrap_ci(values, clusters, statistic=np.median) == (0.5, 1.0)


def test_confirmatory_reproduces_the_pinned_seeded_results():
    rng = np.random.default_rng(11)
    n = 240
    rows = pd.DataFrame({
        "model": rng.choice(["m/a", "m/b"], n),
        "case_id": [f"k{i}" for i in rng.integers(0, 31, n)],
        "family": rng.choice(list("BDN"), n),
        "split": rng.choice(["test", "dev"], n, p=[0.8, 0.2]),
        "css": rng.choice([0.0, 0.5, 1.0], n, p=[0.35, 0.15, 0.5]),
    })
    table = confirmatory(rows, PREDICTIONS_PATH).set_index(["model", "prediction"])
    pinned = {
        ("m/a", "P1_surgery_blind_spot"): (0.3635971786833856, 0.651546717171717, 0.6135, 33),
        ("m/a", "P2_prior_line_easiest"): (0.25, 0.5833333333333334, 0.8745, 29),
        ("m/a", "P3_controls_stable"): (0.4354663394109397, 0.7037037037037037, 1.0, 29),
        ("m/b", "P1_surgery_blind_spot"): (0.4791666666666667, 0.7777777777777778, 0.963, 28),
        ("m/b", "P2_prior_line_easiest"): (0.3783783783783784, 0.68, 0.4665, 30),
        ("m/b", "P3_controls_stable"): (0.3548387096774194, 0.644747453310696, 1.0, 35),
    }
    assert set(table.index) == set(pinned)
    for key, (low, high, p, tuples) in pinned.items():
        row = table.loc[key]
        assert (row["ci_low"], row["ci_high"], row["p"]) == pytest.approx((low, high, p), abs=1e-9)
        assert row["tuples"] == tuples and row["verdict"] == "not supported"


# ---------------------------------------------------------------- the epoch mode as Inspect takes it (issue 38)

def _inspect_mode(values: list[float]) -> float:
    return float(mode_score()([Score(value=v) for v in values]).value)


@pytest.mark.parametrize("values", [
    [1.0, 0.5, 0.0], [0.0, 0.5, 1.0], [0.5, 1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.5, 0.5, 1.0, 1.0],
    [1.0, 1.0, 0.0, 0.0, 0.5, 0.5], [0.0, 1.0, 1.0, 0.0], [0.5], [1.0, 0.5, 0.5, 0.0, 0.0],
], ids=lambda v: ",".join(map(str, v)))
def test_mode_breaks_ties_as_inspects_mode_reducer_does(values):
    assert reduce_epochs(pd.Series(values), "mode") == _inspect_mode(values)


def test_mode_matches_inspect_on_random_epoch_sequences():
    rng = np.random.default_rng(7)
    for _ in range(300):
        values = list(rng.choice([0.0, 0.5, 1.0], size=int(rng.integers(1, 7))))
        assert reduce_epochs(pd.Series(values), "mode") == _inspect_mode(values), values


def test_mode_skips_unscored_epochs_as_inspect_does():
    values = [float("nan"), 0.0, 1.0]
    assert reduce_epochs(pd.Series(values), "mode") == _inspect_mode(values) == 0.0


def test_report_reduces_epochs_in_epoch_order_whatever_the_row_order():
    """Rows arrive in the log's order (completion order under concurrency); the mode is taken in epoch order."""

    verdicts = pd.DataFrame({"tuple": ["t"] * 3, "epoch": [3, 1, 2], "css": [0.0, 1.0, 0.5], "reducer": ["mode"] * 3})
    grouped = verdicts.groupby(["tuple"], sort=False)
    rows = grouped.agg(reducer=("reducer", "first")).reset_index()
    assert list(_reduced(verdicts, grouped, rows)) == [_inspect_mode([1.0, 0.5, 0.0])] == [1.0]


# ---------------------------------------------------------------- a sampled p-value says it was sampled (issue 38)

@pytest.mark.parametrize("n", [3, 6, 9])
def test_an_exact_p_value_says_exact_and_how_many_pairings(n):
    rng = np.random.default_rng(n)
    rc = rank_correlation(rng.permutation(n), rng.permutation(n))
    assert rc.exact and rc.pairings == math.factorial(n)
    assert "exact" in rc.p_text and f"{math.factorial(n):,}" in rc.p_text and "sampled" not in rc.p_text


@pytest.mark.parametrize("n", [10, 12, 20])
def test_a_sampled_p_value_says_sampled_never_exact(n):
    rng = np.random.default_rng(n)
    rc = rank_correlation(rng.permutation(n), rng.permutation(n))
    assert not rc.exact and rc.pairings < math.factorial(n)
    assert "exact" not in rc.p_text and "sampled" in rc.p_text and f"{rc.pairings:,}" in rc.p_text, rc.p_text
    assert f"{n}!" not in rc.p_text.replace(f"of {n}!", ""), rc.p_text


def test_the_report_note_labels_a_sampled_p_as_sampled():
    n = 12
    rng = np.random.default_rng(1)
    rows = pd.DataFrame([
        {"setting": "single_shot", "model": f"m{i}", "judge": "j", "run": "", "case_id": f"c{k}", "family": "D",
         "intervention_id": "i", "css": float(rng.integers(0, 3)) / 2, "cms": float(rng.random()), "rejudged": False}
        for i in range(n) for k in range(3)
    ])
    _, note = table_cms_css(rows)
    assert "exact" not in note and "sampled" in note, note
