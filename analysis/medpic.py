"""MedPIC results from Inspect logs: per-sample rows, the paper's metrics with rule-clustered CIs,
per-dimension accuracy, joint pair outcomes and the rationale analysis (seed 002, §4).

    from clinical_cf.analysis.medpic import medpic_report_table
    table, markdown = medpic_report_table(["logs/"])

Confidence intervals are 95 % percentile cluster-bootstrap intervals with the rule as the cluster
(`analysis.stats.cluster_bootstrap_ci`): questions from one rule share its drug, source and
wording, so the rule is the unit that is resampled. Every number traces back to rows of
`medpic_rows`, one per scored sample and epoch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from clinical_cf.analysis.logs import LogRows, sample_views, suite_samples
from clinical_cf.analysis.stats import cluster_bootstrap_ci
from clinical_cf.analysis.tables import markdown_table
from clinical_cf.catalog.medpic.questions import DIMENSIONS
from clinical_cf.scorers.medpic import summarise

SCORER = "medpic_exact_set"
RATIONALE_SCORER = "rationale_mentions_change"
METRICS = ("accuracy", "gf_accuracy", "cf_accuracy", "gf_cf_gap", "activation_accuracy", "deactivation_accuracy", "pair_accuracy")


def medpic_rows(paths: str | Path | Sequence[str | Path] | LogRows | pd.DataFrame) -> pd.DataFrame:
    """One row per scored MedPIC sample and epoch: model, task, ids, kind, operation, pair, the six dimensions,
    correct (0/1), parsed (bool), `retained_selection` (wrong deactivation answers: the partner's gold kept) and,
    where the rationale judge ran, `mentions`.

    `paths` are log files or folders (read through `clinical_cf.analysis.logs`, MedPIC logs only), or rows
    that reader already gave. Samples without the MedPIC scorer are skipped."""
    rows = []
    for sample in sample_views(suite_samples(paths, "medpic")):
        score = sample.scores.get(SCORER)
        # Unscored samples (invalid output) are left out, as the log's own metrics leave them out;
        # the report's parse table counts them.
        if score is None or score.unscored:
            continue
        meta = sample.metadata
        smeta = score.metadata or {}
        judged = sample.scores.get(RATIONALE_SCORER)
        selected = sorted(smeta.get("parsed") or [])
        wrong_deactivation = meta.get("operation") == "deactivation" and score.value not in ("C", 1, 1.0, True)
        mention = judged.value if judged is not None and isinstance(judged.value, (int, float)) and not math.isnan(judged.value) else None
        rows.append({
            "model": sample.model, "task": sample.task, "log": str(sample.log), "sample_id": str(sample.id), "epoch": sample.epoch,
            "rule_id": meta.get("rule_id"), "kind": meta.get("kind"), "operation": meta.get("operation"),
            "pair_id": meta.get("pair_id"), **{d: meta.get(d) for d in DIMENSIONS},
            "correct": 1.0 if score.value in ("C", 1, 1.0, True) else 0.0,
            "parsed": bool(smeta.get("parsed_ok", True)), "answer": ",".join(meta.get("answer") or []),
            "selected": ",".join(smeta.get("parsed") or []),
            "catalog_sha256": meta.get("catalog_sha256"),
            "mentions": mention,
            # computed here, without the judge: a wrong deactivation answer that kept the partner's gold selection
            "retained_selection": (bool(selected) and selected == sorted(meta.get("partner_answer") or []))
            if wrong_deactivation else None,
        })
    return pd.DataFrame(rows)


def _with_pair_column(frame: pd.DataFrame) -> pd.DataFrame:
    """`pair_correct` on each member of a complete pair (both members right), NaN elsewhere."""
    frame = frame.copy()
    frame["pair_correct"] = np.nan
    paired = frame[frame["pair_id"].notna()]
    for _, group in paired.groupby(["model", "pair_id", "epoch"], dropna=False):
        if len(group) >= 2:
            frame.loc[group.index, "pair_correct"] = float(group["correct"].prod())
    return frame


def _statistic(frame: pd.DataFrame, key: str):
    """A function of row positions (with repeats, as a bootstrap draw gives) returning one metric."""
    correct = frame["correct"].to_numpy(float)
    kind = frame["kind"].to_numpy(object)
    op = frame["operation"].to_numpy(object)
    pair = frame["pair_correct"].to_numpy(float)

    def mean(mask: np.ndarray, values: np.ndarray) -> float:
        return float(values[mask].mean()) if mask.any() else math.nan

    def stat(idx: np.ndarray) -> float:
        idx = idx.astype(int)
        c, k, o, p = correct[idx], kind[idx], op[idx], pair[idx]
        return {
            "accuracy": lambda: float(c.mean()),
            "gf_accuracy": lambda: mean(k == "gf", c),
            "cf_accuracy": lambda: mean(k == "cf", c),
            "gf_cf_gap": lambda: mean(k == "gf", c) - mean(k == "cf", c),
            "activation_accuracy": lambda: mean(o == "activation", c),
            "deactivation_accuracy": lambda: mean(o == "deactivation", c),
            "pair_accuracy": lambda: mean(~np.isnan(p), p),
        }[key]()

    return stat


def medpic_summary(rows: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per model: each metric with its 95 % rule-clustered bootstrap CI, the number of questions and pairs,
    and the number of unparseable replies."""
    out = []
    for model, frame in rows.groupby("model", sort=True):
        frame = _with_pair_column(frame.reset_index(drop=True))
        point = summarise(frame[["kind", "operation", "pair_id", "correct", "parsed", "epoch"]].to_dict("records"))
        # Distinct questions and pairs (a question asked in three epochs is one question), with the epochs beside;
        # `pair_epochs` counts complete pairs per epoch, the denominator of pair accuracy.
        complete = frame[frame["pair_correct"].notna()]
        questions = frame["sample_id"].nunique() if "sample_id" in frame.columns else int((frame["epoch"] == frame["epoch"].min()).sum())
        record = {"model": model, "questions": questions, "pairs": int(complete["pair_id"].nunique()),
                  "epochs": int(frame["epoch"].nunique()), "pair_epochs": int(point["pairs"]),
                  "unparseable": int(point["unparseable"])}
        # Each epoch's accuracy beside the interval: the bootstrap resamples rules, so it cannot show epoch spread.
        for key, mask in (("accuracy", slice(None)), ("cf_accuracy", frame["kind"] == "cf")):
            per_epoch = frame[mask].groupby("epoch")["correct"].mean()
            record[f"{key}_by_epoch"] = [float(v) for v in per_epoch.to_numpy()]
        positions = np.arange(len(frame), dtype=float)
        clusters = frame["rule_id"].astype(str).to_numpy()
        for key in METRICS:
            record[key] = point[key]
            if math.isnan(point[key]) or frame["rule_id"].nunique() < 2:
                record[f"{key}_lo"] = record[f"{key}_hi"] = math.nan
                continue
            stat = _statistic(frame, key)
            # A draw with no rows of the metric's kind gives NaN, and so does the interval (tiny runs only).
            lo, hi = cluster_bootstrap_ci(positions, clusters, statistic=stat, n_resamples=n_resamples, seed=seed)
            record[f"{key}_lo"], record[f"{key}_hi"] = lo, hi
        out.append(record)
    return pd.DataFrame(out)


def dimension_accuracy(rows: pd.DataFrame, dimension: str, kind: str | None = None, n_resamples: int = 1000,
                       seed: int = 0) -> pd.DataFrame:
    """Accuracy per model and category of one of the six dimensions (optionally GF or CF only), with
    rule-clustered CIs where a category spans at least two rules."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}; one of {', '.join(DIMENSIONS)}")
    frame = rows if kind is None else rows[rows["kind"] == kind]
    out = []
    for (model, category), group in frame.groupby(["model", dimension], sort=True):
        lo = hi = math.nan
        if group["rule_id"].nunique() >= 2:
            lo, hi = cluster_bootstrap_ci(group["correct"].to_numpy(float), group["rule_id"].astype(str).to_numpy(),
                                          n_resamples=n_resamples, seed=seed)
        out.append({"model": model, dimension: category, "n": len(group), "rules": group["rule_id"].nunique(),
                    "accuracy": float(group["correct"].mean()), "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(out)


def joint_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model, complete pairs by outcome (paper Fig. 4b): both correct, trigger only (the activation member),
    control only (the deactivation member), neither."""
    out = []
    for model, frame in rows[rows["pair_id"].notna()].groupby("model"):
        counts = {"both": 0, "trigger_only": 0, "control_only": 0, "neither": 0}
        for _, group in frame.groupby(["pair_id", "epoch"]):
            members = dict(zip(group["operation"], group["correct"], strict=False))
            if {"activation", "deactivation"} <= set(members):
                a, d = members["activation"] >= 1, members["deactivation"] >= 1
                counts["both" if a and d else "trigger_only" if a else "control_only" if d else "neither"] += 1
        out.append({"model": model, **counts})
    return pd.DataFrame(out)


def rationale_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model, over wrong deactivation answers the judge read: the share whose rationale mentions the changed
    patient information and the share that kept the partner's (pre-change) selection (paper: 85.6 % / 69.8 %)."""
    out = []
    wrong = rows[(rows["operation"] == "deactivation") & (rows["correct"] < 1)]
    for model, frame in wrong.groupby("model"):
        judged = frame[frame["mentions"].notna()]
        retained = frame["retained_selection"].dropna()
        out.append({"model": model, "wrong_deactivation": len(frame), "judged": len(judged),
                    "mention_rate": float(judged["mentions"].mean()) if len(judged) else math.nan,
                    "retained_selection_rate": float(retained.astype(float).mean()) if len(retained) else math.nan})
    return pd.DataFrame(out)


def _fmt(value: float, lo: float, hi: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    ci = "" if math.isnan(lo) else f" [{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"{100 * value:.1f}{ci}"


def table_medpic(rows: pd.DataFrame, n_resamples: int = 2000, seed: int = 0, summary: pd.DataFrame | None = None) -> pd.DataFrame:
    """A display table for the comparison report: one row per model, metrics in % with 95 % rule-clustered CIs
    (from `summary` when the caller already computed `medpic_summary`)."""
    summary = medpic_summary(rows, n_resamples=n_resamples, seed=seed) if summary is None else summary
    labels = {"accuracy": "overall", "gf_accuracy": "GF", "cf_accuracy": "CF", "gf_cf_gap": "GF−CF gap (pp)",
              "activation_accuracy": "activation", "deactivation_accuracy": "deactivation", "pair_accuracy": "pair"}
    out = []
    for r in summary.to_dict("records"):
        record = {"model": r["model"], "questions": r["questions"], "epochs": r["epochs"]}
        record.update({labels[k]: _fmt(r[k], r[f"{k}_lo"], r[f"{k}_hi"]) for k in METRICS})
        record.update(pairs=r["pairs"], pair_epochs=r["pair_epochs"], unparseable=r["unparseable"])
        if r["epochs"] > 1:
            record["overall by epoch"] = ", ".join(f"{100 * v:.1f}" for v in r["accuracy_by_epoch"])
            record["CF by epoch"] = ", ".join(f"{100 * v:.1f}" for v in r["cf_accuracy_by_epoch"])
        out.append(record)
    return pd.DataFrame(out)


def medpic_report_table(paths: str | Path | Sequence[str | Path], n_resamples: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, str]:
    """For the comparison report: from log files or directories, the numeric per-model summary
    (`medpic_summary`) and a ready-to-paste markdown table of `table_medpic`. Logs without the
    MedPIC scorer are ignored."""
    rows = medpic_rows(paths)
    if rows.empty:
        return pd.DataFrame(), "(no MedPIC logs)"
    summary = medpic_summary(rows, n_resamples=n_resamples, seed=seed)
    display = table_medpic(rows, n_resamples=n_resamples, seed=seed)
    note = ("\n\nPercentages with 95 % cluster-bootstrap CIs (the rule is the cluster). Pair: both members of a "
            "linked CF pair correct. GF−CF gap in percentage points.")
    return summary, markdown_table(display) + note
