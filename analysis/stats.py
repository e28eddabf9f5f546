"""Statistics for comparing models on counterfactual suites.

Thin, documented wrappers over scipy and scikit-learn, with the choices a report must state:
how ties are ranked, what is resampled, how exact a p-value is.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Literal

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

VERDICTS = (0.0, 0.5, 1.0)


EXACT_UP_TO = 9
"""Largest n whose n! pairings are all enumerated (9! = 362,880); above it the p-value is sampled."""

SAMPLED_PAIRINGS = 100_000


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p_permutation: float
    """Two-sided permutation p of rho: exact (every pairing) when `exact`, else from `pairings` random ones."""
    tau: float
    p_tau: float
    n: int
    exact: bool
    pairings: int
    """How many pairings the p-value was computed over: all n! when exact."""

    @property
    def p_text(self) -> str:
        """The p-value with how it was obtained, as a report prints it: a sampled p never reads as exact."""
        if self.exact:
            return f"exact permutation p = {self.p_permutation:.3f} over all {self.pairings:,} pairings ({self.n}!)"
        return (f"sampled permutation p = {self.p_permutation:.3f} from {self.pairings:,} random pairings "
                f"(of {self.n}! possible; seed 0)")


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> RankCorrelation:
    """Spearman's rho with a permutation p-value, and Kendall's tau-b.

    Ties get average ranks (scipy's default). The p-value is two-sided. Up to n = 9 it is exact:
    every pairing of the n values is enumerated (n! of them), which is what makes it meaningful
    at the handful of models a comparison usually has; above n = 9 it is sampled from 100,000
    random pairings with a fixed seed, and says so (`exact`, `p_text`).
    """
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x_arr)
    if n < 3:
        raise ValueError("rank correlation needs at least 3 models")
    if np.ptp(x_arr) == 0 or np.ptp(y_arr) == 0:
        raise ValueError("rank correlation is undefined when every model ties on one of the two scores")

    y_ranks = stats.rankdata(y_arr)
    y_centred = (y_ranks - y_ranks.mean()) / np.sqrt(((y_ranks - y_ranks.mean()) ** 2).sum())

    def rho(a: np.ndarray, axis: int = -1) -> np.ndarray:
        # Spearman's rho is Pearson's r of the average ranks; vectorised over the batch of pairings scipy passes.
        ranks = stats.rankdata(a, axis=axis)
        centred = ranks - ranks.mean(axis=axis, keepdims=True)
        return (centred * y_centred).sum(axis=axis) / np.sqrt((centred**2).sum(axis=axis))

    observed = float(stats.spearmanr(x_arr, y_arr).statistic)
    exact = n <= EXACT_UP_TO
    resamples = math.factorial(n) if exact else SAMPLED_PAIRINGS
    test = stats.permutation_test(
        (x_arr,),
        rho,
        permutation_type="pairings",
        n_resamples=resamples,
        alternative="two-sided",
        vectorized=True,
        random_state=np.random.default_rng(0),
    )
    tau = stats.kendalltau(x_arr, y_arr)
    return RankCorrelation(observed, float(test.pvalue), float(tau.statistic), float(tau.pvalue), n, exact, resamples)


def epoch_mode(values: Sequence[float]) -> float:
    """The most frequent of a sample's epoch scores, as Inspect's `mode` reducer takes it.

    Unscored (NaN) epochs are skipped, and a tie goes to the value that comes first in epoch order:
    Inspect's reducer counts the scores with `collections.Counter` and takes `most_common(1)`, which
    among equal counts returns the value first seen (inspect_ai/scorer/_reducer/reducer.py). The
    values must therefore be given in epoch order. NaN when no epoch was scored.
    """
    counts = Counter(float(v) for v in values if not math.isnan(float(v)))
    return float(counts.most_common(1)[0][0]) if counts else float("nan")


def verdict_kappa(a: Sequence[float], b: Sequence[float], weighted: bool = False) -> float:
    """Cohen's kappa between two raters on {0, 0.5, 1}; `weighted` uses linear weights (0 vs 1 counts twice 0 vs 0.5).

    NaN (undefined, shown as such) when there are no pairs or both raters gave one and the same verdict
    throughout: chance agreement is total and kappa's denominator is 0 (scikit-learn would raise or warn).
    """
    labels = [str(v) for v in VERDICTS]
    rater_a, rater_b = [str(float(v)) for v in a], [str(float(v)) for v in b]
    if len(set(rater_a) | set(rater_b)) < 2:
        return float("nan")
    return float(cohen_kappa_score(rater_a, rater_b, labels=labels, weights="linear" if weighted else None))


def cluster_resample_means(
    values: Sequence[float],
    clusters: Sequence[str],
    n_resamples: int = 2000,
    seed: int = 0,
    cluster_order: Literal["sorted", "appearance"] = "sorted",
) -> np.ndarray:
    """Means of `n_resamples` case-clustered bootstrap resamples, without building any resample.

    A resample's mean is the sum of its picked clusters' sums over the sum of their counts, so
    per-cluster sums and counts are computed once and each resample is two gathers. The draws are
    those of the per-resample loop this replaced (`rng.integers(0, k, k)` per resample, `k`
    clusters indexed in `cluster_order`), made in blocks, so a seed gives the interval it always did.
    """
    vals = np.asarray(values, dtype=float)
    ids = np.asarray(clusters)
    if cluster_order == "sorted":
        _, index = np.unique(ids, return_inverse=True)
    else:
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        # Relabel clusters by first appearance (what pandas' unique() gives).
        rank = np.empty(len(first), dtype=np.intp)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        index = rank[inverse]
    k = int(index.max()) + 1 if len(index) else 0
    if k == 0:
        return np.full(n_resamples, np.nan)
    sums = np.bincount(index, weights=vals, minlength=k)
    counts = np.bincount(index, minlength=k).astype(float)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    block = max(1, 2_000_000 // k)  # bounds the (resamples x clusters) index block to ~16 MB
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        picked = rng.integers(0, k, (stop - start, k))
        means[start:stop] = sums[picked].sum(axis=1) / counts[picked].sum(axis=1)
    return means


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
    case is the unit that is resampled. The seed makes the interval reproducible. The mean (every
    table's statistic) is computed from per-cluster sums (`cluster_resample_means`); any other
    statistic is evaluated on each resample built from the same draws.
    """
    alpha = (1 - level) / 2
    if statistic is np.mean:
        draws = cluster_resample_means(values, clusters, n_resamples, seed)
    else:
        vals = np.asarray(values, dtype=float)
        ids = np.asarray(clusters)
        unique = np.unique(ids)
        groups = [vals[ids == c] for c in unique]
        rng = np.random.default_rng(seed)
        draws = np.empty(n_resamples)
        for i in range(n_resamples):
            picked = rng.integers(0, len(groups), len(groups))
            draws[i] = statistic(np.concatenate([groups[j] for j in picked]))
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


def paired_difference(
    a: Sequence[float], b: Sequence[float], clusters: Sequence[str], n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of a - b over paired tuples, with a case-clustered bootstrap 95% CI."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    low, high = cluster_bootstrap_ci(diff, clusters, n_resamples=n_resamples, seed=seed)
    return float(diff.mean()), low, high


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (family-wise error across families), in the input order."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return [float(v) for v in adjusted]


def tuples_for_power(sd_diff: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Paired tuples needed to detect a mean CSS difference `delta` (normal approximation)."""
    if delta <= 0 or not np.isfinite(sd_diff):
        raise ValueError("delta must be positive and the SD finite")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return int(math.ceil((z * sd_diff / delta) ** 2))


def models_for_rank_test(rho: float, alpha: float = 0.05, max_models: int = 9) -> int | None:
    """Smallest number of models at which a Spearman rho this strong is significant by the exact test.

    For each n, ranks are built to give (as nearly as possible) the observed |rho|, and the exact
    permutation p-value is computed; None if even `max_models` is not enough.
    """

    target = abs(rho)
    for n in range(3, max_models + 1):
        perms = np.array(list(permutations(range(n))), dtype=np.int16)
        # Without ties, rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)) for each pairing.
        d2 = ((perms - np.arange(n)) ** 2).sum(axis=1)
        values = np.abs(1 - 6 * d2 / (n * (n * n - 1)))
        achievable = np.unique(np.round(values, 10))
        closest = achievable[np.argmin(np.abs(achievable - target))]
        if np.mean(values >= closest - 1e-12) < alpha:
            return n
    return None


def equivalence_upper(values: Sequence[float], clusters: Sequence[str], margin: float = 0.05, seed: int = 0) -> tuple[float, float, bool]:
    """Two one-sided tests at 5% each, as a 90% case-clustered interval for the mean movement.

    For controls, movement = 1 - judge score (0 when the recommendation did not move). The
    control passes when the whole 90% interval lies inside (-margin, +margin).
    """
    low, high = cluster_bootstrap_ci(values, clusters, level=0.90, seed=seed)
    return low, high, bool(low > -margin and high < margin)
