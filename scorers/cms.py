"""Consensus Match Score (CMS): coverage of the consensus by the baseline recommendations.

    CMS = 0.6·R_strong + 0.2·R_tacit + 0.15·(1 − V_refusal) + 0.05·P_extra

with, for one case's baseline recommendation list L and consensus treatments C:

- R_strong = |{c ∈ C_strong : some item of L covers c}| / |C_strong|, and R_tacit likewise
  (recall per label class; `mixed` treatments are neither rewarded nor penalised).
- V_refusal = |{c ∈ C_refusal : some item of L covers c}| / |C_refusal| (the share of
  clear rejections that were recommended anyway).
- P_extra = |{l ∈ L : l covers some c ∈ C_strong ∪ C_tacit ∪ C_mixed}| / |L| (precision: the
  share of recommendations that are consensus options rather than extras); 0 when L is empty.
- A term whose class is empty for the case (no refusal treatments, say) is undefined; it is
  dropped and the remaining weights are renormalised to sum to 1.

"Covers" is deterministic by default: the item names every slot of the consensus
treatment through the treatment lexicon (`catalog/css/lexicon.yaml`; brand names,
abbreviations and regimen components count). With `matching="judge"` the judge model role
decides coverage instead, for free-text consensus the lexicon cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from clinical_cf.catalog.css.lexicon import Lexicon, default_lexicon
from clinical_cf.judging import Judgement, ResolvedJudge, ask_judge, resolve_judge
from clinical_cf.replies import DATA_NOTICE, boundary, data_block, normalise_for_judge
from clinical_cf.scorers.metrics import cases, mean_by_case, shown_as
from clinical_cf.solvers.css import CSSArms, Recommendation, first_json_object

WEIGHTS = {"strong": 0.6, "tacit": 0.2, "refusal": 0.15, "extra": 0.05}

MATCH_PROMPT = """For each numbered CONSENSUS treatment, list the numbers of the RECOMMENDATIONS that recommend it (same drugs/regimen or procedure; brand names and abbreviations count; a recommendation to avoid it does not).

CONSENSUS:
{consensus}

{notice}

{recommendations}

Reply with one JSON object that maps each consensus number (as a string) to the list of the numbers of the RECOMMENDATIONS that cover it (an empty list when none does)."""


@dataclass(frozen=True)
class CMSBreakdown:
    cms: float
    r_strong: float | None
    r_tacit: float | None
    v_refusal: float | None
    p_extra: float
    covered: dict[int, list[int]]


def cms_from_coverage(labels: list[str], covered: dict[int, list[int]], n_recommendations: int) -> CMSBreakdown:
    """CMS from which recommendations cover which consensus treatments (indices into the lists)."""

    def recall(label: str) -> float | None:
        members = [i for i, lab in enumerate(labels) if lab == label]
        if not members:
            return None
        return sum(1 for i in members if covered.get(i)) / len(members)

    r_strong, r_tacit, v_refusal = recall("strong"), recall("tacit"), recall("refusal")
    useful = {j for i, lab in enumerate(labels) if lab != "refusal" for j in covered.get(i, [])}
    p_extra = len(useful) / n_recommendations if n_recommendations else 0.0
    terms = {
        "strong": r_strong,
        "tacit": r_tacit,
        "refusal": None if v_refusal is None else 1.0 - v_refusal,
        "extra": p_extra,
    }
    defined = {k: v for k, v in terms.items() if v is not None}
    total_weight = sum(WEIGHTS[k] for k in defined)
    cms = sum(WEIGHTS[k] * v for k, v in defined.items()) / total_weight
    return CMSBreakdown(cms, r_strong, r_tacit, v_refusal, p_extra, covered)


def lexicon_coverage(
    consensus: list[dict], recommendations: list[Recommendation], lexicon: Lexicon
) -> dict[int, list[int]]:
    """Which recommendations cover which consensus treatments, through the lexicon."""
    texts = [r.treatment for r in recommendations]
    covered: dict[int, list[int]] = {}
    for i, treatment in enumerate(consensus):
        slots = [set(s) for s in treatment["match"]] if treatment.get("match") else lexicon.slots(treatment["treatment"])
        covered[i] = [j for j, text in enumerate(texts) if lexicon.covers(text, slots)]
    return covered


def read_coverage(text: str, n_consensus: int, n_recommendations: int) -> dict[int, list[int]] | None:
    """The coverage a judge's reply states (consensus index -> recommendation indices), or None when it holds no JSON object."""
    data = first_json_object(text)
    if data is None:
        return None
    covered: dict[int, list[int]] = {}
    for i in range(n_consensus):
        items = data.get(str(i + 1), [])
        covered[i] = [int(j) - 1 for j in items if str(j).isdigit() and 0 < int(j) <= n_recommendations]
    return covered


async def judge_coverage(
    consensus: list[dict], recommendations: list[Recommendation], judge: ResolvedJudge
) -> Judgement[dict[int, list[int]]]:
    """Ask the judge which recommendations cover which consensus treatments (asked once, as CMS always has)."""
    body = "\n".join(f"{j + 1}. {normalise_for_judge(r.treatment, 160)}" for j, r in enumerate(recommendations)) or "(none)"
    tag = boundary(body)
    prompt = MATCH_PROMPT.format(
        consensus="\n".join(f"{i + 1}. {c['treatment']}" for i, c in enumerate(consensus)),
        notice=DATA_NOTICE.format(tag=tag),
        recommendations=data_block("RECOMMENDATIONS", body, tag),
    )
    return await ask_judge(judge, prompt, lambda text: read_coverage(text, len(consensus), len(recommendations)), retries=0)


@metric(name="cms")
def cms_metric() -> Metric:
    """Mean CMS over cases (each case counted once, however many tuples it has)."""

    def compute(scores: list[SampleScore]) -> Value:
        return mean_by_case(scores)

    return shown_as("cms", compute)


@scorer(metrics=[cms_metric(), cases()], name="cms")
def consensus_match(matching: str = "lexicon") -> Scorer:
    """CMS of the baseline recommendations against the case's consensus treatments.

    Args:
        matching: "lexicon" (deterministic, default) or "judge" (the judge model role decides coverage).
    """
    if matching not in ("lexicon", "judge"):
        raise ValueError(f"cms matching must be 'lexicon' or 'judge', not {matching!r}")

    async def score(state: TaskState, target: Target) -> Score:
        arms = state.store_as(CSSArms)
        consensus: list[dict] = state.metadata["consensus"]
        if arms.baseline is None or arms.baseline.is_invalid:
            why = arms.baseline.invalid if arms.baseline else "no output"
            return Score.unscored(reason="invalid_output", explanation=f"Baseline arm is not an answer ({why}); CMS not computed.",
                                  metadata={"parse": "invalid", "invalid": why, "unreadable": why, "matching": matching})
        if arms.baseline.is_unreadable:
            return Score.unscored(
                reason="unreadable",
                explanation=f"Baseline arm could not be read ({arms.baseline.unreadable_reason}); CMS not computed.",
                metadata={"parse": "unreadable", "unreadable": arms.baseline.unreadable_code, "unreadable_reason": arms.baseline.unreadable_reason,
                          "max_tokens": arms.baseline.max_tokens, "matching": matching},
            )
        recommendations = arms.baseline.recommendations
        judged: dict = {}
        if matching == "judge":
            judgement = await judge_coverage(consensus, recommendations, resolve_judge())
            judged = judgement.metadata()
            if judgement.verdict is None:
                return Score.unscored(reason="grader_failed", explanation="CMS judge matching reply could not be parsed",
                                      metadata={"matching": matching, **judged})
            covered = judgement.verdict
        else:
            covered = lexicon_coverage(consensus, recommendations, default_lexicon())
        result = cms_from_coverage([c["label"] for c in consensus], covered, len(recommendations))
        matched = [
            f"[{c['label']}] {c['treatment']}: " + (", ".join(str(j + 1) for j in covered[i]) or "not covered")
            for i, c in enumerate(consensus)
        ]
        return Score(
            value=result.cms,
            explanation="Coverage of consensus by baseline recommendation numbers:\n" + "\n".join(matched),
            metadata={
                "r_strong": result.r_strong,
                "r_tacit": result.r_tacit,
                "v_refusal": result.v_refusal,
                "p_extra": result.p_extra,
                "matching": matching,
                "parse": arms.baseline.provenance,
                **judged,
            },
        )

    return score
