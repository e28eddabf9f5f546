"""Sensitivity measures (seed 001, section 3.2) and the direction-consistency scorer.

For the distribution over candidates before (P) and after (P') a perturbation, with y the gold:

- relative confidence change  |P'(y) - P(y)| / P(y), and its signed version (P'(y) - P(y)) / P(y);
- Jensen-Shannon divergence   JS(P, P') = 1/2 KL(P || M) + 1/2 KL(P' || M), M = (P + P') / 2, in bits;
- top-1 flip                   argmax P != argmax P';
- entropy change               H(P') - H(P), in bits.

Inputs are clipped at 0 and renormalised; P(y) = 0 is floored at 1e-6 so the relative change
stays finite. Direction consistency (1 or 0) compares the change with the pre-registered
direction within the catalog's tolerances, as CheckList's directional and invariance tests do.
"up" asks for a gain of a share of the headroom, (P'(y) - P(y)) / (1 - P(y)) >= headroom_gain, so it is
reachable from any baseline (a 10 % relative rise is impossible from P(y) >= 0.91), and where that share rounds to
nothing at two decimals (P(y) above 0.95) not falling is enough; "down" a relative fall
of relative_change; "flip_to_target" a confident move to the candidate a diagnostic result establishes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, mean, metric, scorer, stderr
from inspect_ai.solver import TaskState

from clinical_cf.catalog.sensitivity.perturbations import Tolerance
from clinical_cf.replies import per_arm, read_by
from clinical_cf.scorers.metrics import parse_quality, shown_as
from clinical_cf.solvers.sensitivity import SensitivityArms

FLOOR = 1e-6


def normalise(p: list[float] | np.ndarray) -> np.ndarray:
    arr = np.clip(np.asarray(p, dtype=float), 0, None)
    total = arr.sum()
    if total <= 0:
        raise ValueError("a distribution needs positive mass")
    return arr / total


def entropy(p: np.ndarray) -> float:
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    m = (p + q) / 2

    def kl(a: np.ndarray) -> float:
        mask = a > 0
        return float((a[mask] * np.log2(a[mask] / m[mask])).sum())

    return 0.5 * kl(p) + 0.5 * kl(q)


@dataclass(frozen=True)
class Change:
    relative: float
    signed: float
    js: float
    flip: bool
    entropy_change: float
    confident_flip: bool
    gold_before: float = 0.0
    gold_after: float = 0.0
    top_after: int = 0


def measure(before: list[float], after: list[float], gold: int, tolerance: Tolerance = Tolerance()) -> Change:
    p, q = normalise(before), normalise(after)
    base = max(p[gold], FLOOR)
    flip = int(np.argmax(p)) != int(np.argmax(q))
    return Change(
        relative=abs(q[gold] - p[gold]) / base,
        signed=(q[gold] - p[gold]) / base,
        js=js_divergence(p, q),
        flip=flip,
        entropy_change=entropy(q) - entropy(p),
        confident_flip=flip and float(q.max()) > tolerance.confident_flip,
        gold_before=float(p[gold]),
        gold_after=float(q[gold]),
        top_after=int(np.argmax(q)),
    )


def consistent(change: Change, expected: str, tolerance: Tolerance = Tolerance(), target_index: int | None = None) -> bool:
    """Whether the change matches the pre-registered direction (`target_index`: the candidate of flip_to_target)."""
    if expected == "invariant":
        return change.relative <= tolerance.relative_change and not change.flip
    if expected == "up":
        # A share of the headroom 1 - P(y). Where that share rounds to nothing at the step models state
        # probabilities in (under half of `resolution`: P(y) above 0.95 at two decimals), no gain can be asked
        # for: not falling (by a stated step) is consistent, so 0.99 -> 0.99 counts as 1.0 -> 1.0 does.
        required = tolerance.headroom_gain * (1 - change.gold_before)
        if required < tolerance.resolution / 2 - 1e-12:
            return change.gold_after >= change.gold_before - tolerance.resolution / 2
        return change.gold_after - change.gold_before >= required - 1e-12
    if expected == "down":
        return change.signed <= -tolerance.relative_change
    if expected == "shift":
        return change.js >= tolerance.js_divergence
    if expected == "entropy_up_no_flip":
        return change.entropy_change > 0 and not change.confident_flip
    if expected == "flip_to_target":
        if target_index is None:
            raise ValueError("flip_to_target needs the target candidate's index")
        return change.top_after == target_index and change.confident_flip
    raise ValueError(f"unknown expected direction {expected!r}")


@metric(scores="unreduced")
def sensitivity_profile() -> Metric:
    """Per perturbation type: mean of each measure, flip rate, consistency (with stderr clustered by
    vignette), and over/under-sensitivity. Over every epoch's pair (each epoch's measures are in
    its own score's metadata; a reduced score would keep only the first epoch's).

    Over-sensitive: an invariance type violated in more than 20% of pairs. Under-sensitive: a
    directional type met in fewer than half.
    """

    clustered = stderr(cluster="vignette_id")

    def compute(scores: list[SampleScore]) -> Value:
        groups: dict[str, list[SampleScore]] = defaultdict(list)
        for s in scores:
            groups[str((s.score.metadata or {}).get("type"))].append(s)
        out: dict[str, float] = {}
        for kind, items in sorted(groups.items()):
            metas = [s.score.metadata or {} for s in items]
            for key in ("relative", "signed", "js", "entropy_change"):
                out[f"{kind}_{key}"] = float(np.mean([m[key] for m in metas]))
            out[f"{kind}_flip_rate"] = float(np.mean([m["flip"] for m in metas]))
            rate = float(np.mean([s.score.as_float() for s in items]))
            out[f"{kind}_consistency"] = rate
            vignettes = {(s.sample_metadata or {}).get("vignette_id") for s in items}
            out[f"{kind}_consistency_stderr"] = float(clustered(items)) if len(vignettes) > 1 else float("nan")
            invariant = all(m["expected"] == "invariant" for m in metas)
            out[f"{kind}_over_sensitive"] = float(invariant and rate < 0.8)
            out[f"{kind}_under_sensitive"] = float(not invariant and rate < 0.5)
        return out

    return shown_as("sensitivity_profile", compute)


@scorer(metrics=[mean(), stderr(cluster="vignette_id"), sensitivity_profile(), parse_quality()])
def direction_consistency(distribution: str = "verbalised") -> Scorer:
    """1 when the candidate distribution moved as pre-registered, else 0; the measures are in metadata.

    Args:
        distribution: "verbalised" (the JSON probabilities) or "logprob" (option-letter logprobs,
            falling back to verbalised for a pair where either arm has none; the score says which).
    """

    async def score(state: TaskState, target: Target) -> Score:
        arms = state.store_as(SensitivityArms)
        meta = state.metadata
        tolerance = Tolerance(**meta["tolerance"])
        used = distribution
        before, after = arms.baseline or {}, arms.perturbed or {}
        if distribution == "logprob" and not (before.get("logprob") and after.get("logprob")):
            used = "verbalised (no logprobs from this provider)"
        key = "logprob" if used == "logprob" else "verbalised"
        fields = per_arm({"baseline": before, "perturbed": after})
        parse = fields["parse"]
        by = read_by(*parse.values())
        invalid = {arm: a["invalid"] for arm, a in (("baseline", before), ("perturbed", after)) if a.get("invalid")}
        if invalid and key == "verbalised":
            return Score.unscored(
                reason="invalid_output",
                explanation="Not scored: " + "; ".join(f"{a} arm {w}" for a, w in invalid.items()),
                metadata={"type": meta["type"], **fields, "read_by": by, "invalid": invalid},
            )
        reading = {"reader": {a: arm["reader"] for a, arm in (("baseline", before), ("perturbed", after)) if arm.get("reader")} or None,
                   "reply_cut": {a: True for a, arm in (("baseline", before), ("perturbed", after)) if arm.get("reply_cut")} or None,
                   "baseline_cache_scope": arms.baseline_cache_scope}
        if not before.get(key) or not after.get(key):
            why = {
                a: arm.get("unreadable_reason") or "no distribution"
                for a, arm in (("baseline", before), ("perturbed", after))
                if not arm.get(key)
            }
            return Score.unscored(
                reason="invalid_response_format",
                explanation="A distribution over the candidates could not be read: " + "; ".join(f"{a} arm: {w}" for a, w in why.items()),
                metadata={"type": meta["type"], **fields, "unreadable": fields["unreadable"] or {a: "no answer" for a in why},
                          "unreadable_reason": why, "read_by": by, "raw": [before.get("raw"), after.get("raw")], **reading},
            )
        change = measure(before[key], after[key], meta["gold_index"], tolerance)
        target = meta.get("expected_target")
        ok = consistent(change, meta["expected"], tolerance, meta["candidates"].index(target) if target else None)
        return Score(
            value=1.0 if ok else 0.0,
            answer=json.dumps([round(x, 3) for x in after[key]]),
            explanation=(f"expected {meta['expected']}: relative {change.relative:.3f} (signed {change.signed:+.3f}), "
                         f"JS {change.js:.3f} bits, flip {change.flip}, entropy change {change.entropy_change:+.3f} bits"),
            metadata={**asdict(change), "expected": meta["expected"], "type": meta["type"], "distribution": used, **fields, "read_by": by,
                      "before": before[key], "after": after[key], **reading},
        )

    return score

