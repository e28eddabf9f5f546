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
