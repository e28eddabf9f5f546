"""Statistics for comparing models on counterfactual suites.

Thin, documented wrappers over scipy and scikit-learn, with the choices a report must state:
how ties are ranked, what is resampled, how exact a p-value is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

VERDICTS = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p_exact: float
    tau: float
    p_tau: float
    n: int


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> RankCorrelation:
    """Spearman's rho with an exact permutation p-value, and Kendall's tau-b.

    Ties get average ranks (scipy's default). The p-value is two-sided and exact: every
    pairing of the n values is enumerated (n! of them), which is what makes it meaningful
    at the handful of models a comparison usually has; above n = 9 it falls back to 100,000
    random pairings with a fixed seed.
    """
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x_arr)
    if n < 3:
        raise ValueError("rank correlation needs at least 3 models")
    if np.ptp(x_arr) == 0 or np.ptp(y_arr) == 0:
        raise ValueError("rank correlation is undefined when every model ties on one of the two scores")

    def rho(a: np.ndarray) -> float:
        return float(stats.spearmanr(a, y_arr).statistic)

    observed = rho(x_arr)
    resamples = math.factorial(n) if n <= 9 else 100_000
    test = stats.permutation_test(
        (x_arr,),
        rho,
        permutation_type="pairings",
        n_resamples=resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(0),
    )
    tau = stats.kendalltau(x_arr, y_arr)
    return RankCorrelation(observed, float(test.pvalue), float(tau.statistic), float(tau.pvalue), n)


def verdict_kappa(a: Sequence[float], b: Sequence[float], weighted: bool = False) -> float:
    """Cohen's kappa between two raters on {0, 0.5, 1}; `weighted` uses linear weights (0 vs 1 counts twice 0 vs 0.5)."""
    labels = [str(v) for v in VERDICTS]
    return float(
        cohen_kappa_score(
            [str(float(v)) for v in a], [str(float(v)) for v in b], labels=labels, weights="linear" if weighted else None
        )
    )


def cluster_bootstrap_ci(
    values: Sequence[float],
    clusters: Sequence[str],
    statistic: Callable[[np.ndarray], float] = np.mean,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile CI of `statistic`, resampling whole clusters (cases) with replacement.

    Tuples of one case share its baseline and its chart, so they are not independent; the
    case is the unit that is resampled. The seed makes the interval reproducible.
    """
    vals = np.asarray(values, dtype=float)
    ids = np.asarray(clusters)
    unique = np.unique(ids)
    groups = [vals[ids == c] for c in unique]
    rng = np.random.default_rng(seed)
    draws = np.empty(n_resamples)
    for i in range(n_resamples):
        picked = rng.integers(0, len(groups), len(groups))
        draws[i] = statistic(np.concatenate([groups[j] for j in picked]))
    alpha = (1 - level) / 2
    return float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar (sign) test on the discordant pairs: a right where b wrong, and vice versa."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(stats.binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)


def ranks(values: Sequence[float], descending: bool = True) -> list[float]:
    """Ranks with 1 = best, ties sharing their average rank."""
    arr = -np.asarray(values, dtype=float) if descending else np.asarray(values, dtype=float)
    return [float(r) for r in stats.rankdata(arr, method="average")]
