"""Statistics against hand-computed values."""

import numpy as np
import pytest

from clinical_cf.analysis.stats import cluster_bootstrap_ci, mcnemar_exact, rank_correlation, ranks, verdict_kappa


def test_rank_correlation_reproduces_the_css_paper():
    # Table 2 of the CSS paper as ranks: CMS order 1..6, CSS ranks 4,3,5,6,2,1.
    rc = rank_correlation([1, 2, 3, 4, 5, 6], [4, 3, 5, 6, 2, 1])
    assert rc.rho == pytest.approx(1 - 6 * 52 / (6 * 35))  # -0.486
    assert rc.p_exact == pytest.approx(0.3556, abs=1e-4)  # the paper's p = 0.36
    assert rc.tau == pytest.approx(-1 / 3)


def test_exact_p_of_a_perfect_ranking():
    assert rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]).p_exact == pytest.approx(2 / 24)


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
    from clinical_cf.analysis.stats import holm

    # m = 3: sorted p 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone).
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_power_and_models_needed():
    from clinical_cf.analysis.stats import models_for_rank_test, tuples_for_power

    # (1.96 + 0.8416)^2 * (0.5 / 0.1)^2 = 196.2 -> 197 tuples.
    assert tuples_for_power(0.5, 0.1) == 197
    # A perfect ranking is first significant at n = 5 (exact two-sided p = 2/120).
    assert models_for_rank_test(1.0) == 5
    assert models_for_rank_test(0.49) is None or models_for_rank_test(0.49) > 6


def test_paired_difference_and_equivalence():
    from clinical_cf.analysis.stats import equivalence_upper, paired_difference

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
    from clinical_cf.analysis.stats import equivalence_upper, paired_difference

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
    import pandas as pd

    from clinical_cf.analysis.report import confirmatory
    from clinical_cf.catalog.css.predictions import PREDICTIONS_PATH

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
