"""Metrics for counterfactual suites: CSS over the intervention families, per-family
scores, verdict shares, and case-level means for per-case quantities such as CMS.

Negative controls (family "N") are scored by the same judge but kept out of CSS: their
mean is reported as `control_stability`, next to CSS, so a model that moves on every edit
cannot look responsive.

Epochs: Inspect reduces each sample's epochs to one score before "reduced" metrics run, and a
reduced score keeps only the first epoch's metadata. Metrics that need per-reply data (verdict
shares, parse provenance, agent traces) are therefore declared `@metric(scores="unreduced")`
and see every epoch's score with its own metadata; means of the score value (CSS, per-family
CSS) use the reduced scores, whose values are the per-sample means over epochs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from functools import wraps

from inspect_ai.scorer import Metric, SampleScore, Value, grouped, mean, metric, stderr

from clinical_cf.replies import PROVENANCES
from clinical_cf.solvers.css import meaning_sections

CONTROL_FAMILY = "N"


def _family(score: SampleScore) -> str:
    return str((score.sample_metadata or {}).get("family", ""))


def _interventional(scores: list[SampleScore]) -> list[SampleScore]:
    return [s for s in scores if _family(s) != CONTROL_FAMILY]


def _values(scores: list[SampleScore]) -> list[float]:
    return [float(s.score.as_float()) for s in scores]


def shown_as(name: str, compute):
    """`compute` returning its value under `name` (a one-entry dict), so Inspect logs and shows the metric as
    `name` (the same key as before in `results.metrics`) instead of `clinical_cf/name`, which its viewer's
    columns cut to `clinical_c…`. A metric that already returns a dict is returned as is."""

    @wraps(compute)
    def named(scores: list[SampleScore]) -> Value:
        value = compute(scores)
        return value if isinstance(value, Mapping) else {name: value}

    return named


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@metric
def css() -> Metric:
    """Causal Sensitivity Score: mean judge score over tuples of families A-E."""

    def compute(scores: list[SampleScore]) -> Value:
        return _mean(_values(_interventional(scores)))

    return shown_as("css", compute)


@metric
def css_stderr(cluster: str = "case_id") -> Metric:
    """Standard error of CSS, clustered by case (tuples of one case are not independent)."""
    clustered = stderr(cluster=cluster)

    def compute(scores: list[SampleScore]) -> Value:
        kept = _interventional(scores)
        if len({(s.sample_metadata or {}).get(cluster) for s in kept}) < 2:
            return float("nan")
        return clustered(kept)

    return shown_as("css_stderr", compute)


def family_css() -> Metric:
    """Mean judge score per family (A-E, and N for the controls): Inspect's `grouped()` over `family`."""
    return grouped(mean(), "family", all=False, name_template="family_{group_name}")


@metric
def control_stability() -> Metric:
    """Mean judge score on negative controls: 1.0 means the model never moved when it should not."""

    def compute(scores: list[SampleScore]) -> Value:
        return _mean(_values([s for s in scores if _family(s) == CONTROL_FAMILY]))

    return shown_as("control_stability", compute)


@metric(scores="unreduced")
def verdict_shares() -> Metric:
    """Shares of wrong (0), partial (0.5) and correct (1) verdicts over families A-E (paper Table 4).

    Over every epoch's verdict: a tuple judged 0 once and 1 once is one wrong and one correct
    verdict, not a partial one.
    """

    def compute(scores: list[SampleScore]) -> Value:
        values = _values(_interventional(scores))
        n = len(values)
        if n == 0:
            return {"wrong": float("nan"), "partial": float("nan"), "correct": float("nan")}
        return {
            "wrong": sum(1 for v in values if v == 0.0) / n,
            "partial": sum(1 for v in values if v == 0.5) / n,
            "correct": sum(1 for v in values if v == 1.0) / n,
        }

    return shown_as("verdict_shares", compute)


def mean_by_case(scores: list[SampleScore], cluster: str = "case_id") -> float:
    """Mean over cases of a per-case quantity repeated on every tuple of the case.

    CMS scores the baseline arm, which every tuple of a case shares; averaging samples
    would weight a case by how many interventions apply to it.
    """
    per_case: dict[str, list[float]] = defaultdict(list)
    for s in scores:
        value = s.score.as_float()
        if not math.isnan(value):
            per_case[str((s.sample_metadata or {}).get(cluster))].append(value)
    return _mean([_mean(v) for v in per_case.values()])


@metric
def cases(cluster: str = "case_id") -> Metric:
    """Number of distinct cases scored."""

    def compute(scores: list[SampleScore]) -> Value:
        return len({(s.sample_metadata or {}).get(cluster) for s in scores})

    return shown_as("cases", compute)


@metric(scores="unreduced")
def agent_trace() -> Metric:
    """Chart-reading metrics of the agent setting, from the counterfactual arm's trace.

    `retrieved_not_updated` is the paper's "retrieved the same sections and still did not
    update": among A-E tuples whose changed section the agent read, the share judged 0.
    """

    def compute(scores: list[SampleScore]) -> Value:
        traced = [s for s in scores if (s.score.metadata or {}).get("trace")]
        if not traced:
            return {"tool_calls": float("nan")}
        return trace_metrics([(s.score.metadata["trace"], _family(s), s.score.value) for s in traced])  # type: ignore[index]

    return shown_as("agent_trace", compute)


def trace_metrics(records: list[tuple[dict, str, object]]) -> dict[str, float]:
    """The agent's chart-reading metrics from (counterfactual trace, family, judge score) per run: the log's
    `agent_trace` metric and the report's agent table, one definition.

    `changed_section_read` (interventional tuples) counts a read of a section the intervention changes for its
    meaning (`solvers.css.meaning_sections`: not the overview every intervention touches), recomputed from the
    trace's own `changed_sections` and `sections_read`, so logs written before that definition read the same.
    `retrieved_not_updated`: among those that read it, the share judged 0 (an unscored verdict is left out).
    """

    def read_changed(trace: dict) -> bool:
        return any(s in trace.get("sections_read", []) for s in meaning_sections(list(trace.get("changed_sections", []))))

    def number(value: object) -> float | None:
        return float(value) if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)) else None

    traces = [t for t, _, _ in records]
    interventional = [(t, v) for t, f, v in records if f != CONTROL_FAMILY]
    read = [(t, v) for t, v in interventional if read_changed(t)]
    judged = [number(v) for _, v in read if number(v) is not None]
    calls = sum(t.get("tool_calls", 0) for t in traces)
    return {
        "tool_calls": _mean([t.get("tool_calls", 0) for t in traces]),
        "sections_read": _mean([len(set(t.get("sections_read", []))) for t in traces]),
        "procedures_read": _mean([float("procedures" in t.get("sections_read", [])) for t in traces]),
        "changed_section_read": _mean([float(read_changed(t)) for t, _ in interventional]),
        "retrieved_not_updated": _mean([float(v == 0.0) for v in judged]),
        "redundant_call_rate": sum(t.get("redundant_calls", 0) for t in traces) / calls if calls else float("nan"),
        "limit_hit": _mean([float(t.get("limit") is not None) for t in traces]),
    }


def provenances(score: SampleScore) -> list[str]:
    """The parse provenance(s) a scorer recorded in `metadata["parse"]`: one per reply (a str) or per arm (a dict)."""
    parse = (score.score.metadata or {}).get("parse")
    if isinstance(parse, str):
        return [parse]
    if isinstance(parse, dict):
        return [str(v) for v in parse.values()]
    return []


@metric(scores="unreduced")
def parse_quality() -> Metric:
    """Share of scored replies (arms) read each way: json, repaired, field, markdown, prose, unreadable.

    Over every epoch. Invalid replies are unscored (reason `invalid_output`) and appear in
    Inspect's unscored count instead, so `parse_json` is the share of the scored replies that
    were the requested JSON as sent.
    """

    def compute(scores: list[SampleScore]) -> Value:
        seen = [p for s in scores for p in provenances(s)]
        if not seen:
            return {f"parse_{p}": float("nan") for p in PROVENANCES if p != "invalid"}
        return {f"parse_{p}": seen.count(p) / len(seen) for p in PROVENANCES if p != "invalid"}

    return shown_as("parse_quality", compute)
