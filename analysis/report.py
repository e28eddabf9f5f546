"""The comparison report over many logs: one section per suite, CSS's with the paper's Tables 2-4,
cross-judge replication, controls, paired comparisons and the side-by-side page.

    clinical-cf report LOGS_OR_DIRS... --out DIR

Logs are read once, through `clinical_cf.analysis.logs` (routed by the suite each task records;
a log it cannot use is named with the reason and skipped). Each suite's section is registered on
the `Suite` table (`clinical_cf.suites`, `report_section`) and built by `clinical_cf.analysis.sections`.
Writes `report.md`, a self-contained `report.html`, one CSV per table and the figures. Every number
is computed from per-tuple rows that keep their log path and sample id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from clinical_cf.analysis.logs import LogRows, column, input_text, read_logs, sample_views, score_columns, suite_samples
from clinical_cf.analysis.stats import (
    cluster_bootstrap_ci,
    cluster_resample_means,
    equivalence_upper,
    holm,
    mcnemar_exact,
    paired_difference,
    rank_correlation,
    ranks,
    tuples_for_power,
    verdict_kappa,
)

JUDGE_SCORES = ("judge_direction", "agent_judge_direction")
COLUMNS = {
    "model": "model",
    "task": "task",
    "log": "log",
    "sample_id": "sample_id",
    "epoch": "epoch",
    "metadata_case_id": "case_id",
    "metadata_family": "family",
    "metadata_intervention_id": "intervention_id",
    "metadata_split": "split",
}


@dataclass
class CSSRows:
    """Per-tuple rows from every usable log, and the logs that were skipped with why."""

    rows: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _has_score(frame: pd.DataFrame, col: str) -> bool:
    return f"{col}_metadata" in frame.columns and bool(frame[f"{col}_metadata"].map(lambda v: isinstance(v, dict)).any())


def css_rows(samples: pd.DataFrame) -> CSSRows:
    """Per-tuple CSS rows (single-shot and agent) from the log reader's rows of CSS logs.

    `css_0` is each log's first judge score, `css_1`, … the re-judgings `inspect score --action append`
    added; `css` is the original. A CSS log without family metadata or a CSS judge score is skipped.
    """
    if samples.empty:
        return CSSRows(pd.DataFrame())
    frames: list[pd.DataFrame] = []
    skipped: list[tuple[str, str]] = []
    judge_cols = score_columns(samples, JUDGE_SCORES)
    for path, frame in samples.groupby("log", sort=False):
        present = [c for c in judge_cols if _has_score(frame, c)]
        if "metadata_family" not in frame.columns or frame["metadata_family"].isna().all() or not present:
            skipped.append((str(path), "is not a CSS log (no family metadata or CSS judge score)"))
            continue
        rows = frame[[c for c in COLUMNS if c in frame.columns]].rename(columns=COLUMNS)
        for k, col in enumerate(present):
            rows[f"css_{k}"] = pd.to_numeric(frame[col], errors="coerce")
        rows["css"] = rows["css_0"]
        rows["cms"] = pd.to_numeric(column(frame, "score_cms"), errors="coerce")
        rows["setting"] = np.where(rows["task"].str.contains("agent"), "agent", "single_shot")
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return CSSRows(rows, skipped)


def load_css_rows(paths: list[str] | LogRows, progress: bool = True) -> CSSRows:
    """Read CSS logs (single-shot and agent) into per-tuple rows; name and skip anything else."""
    logs = read_logs(paths, progress=progress)
    loaded = css_rows(logs.suite("css"))
    others = [(p, "is not a CSS log (its suite is {})".format(s)) for p, s in zip(logs.logs["log"], logs.logs["suite"]) if s != "css"]
    return CSSRows(loaded.rows, logs.skipped + others + loaded.skipped)


def _interventional(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[(rows["family"] != "N") & rows["css"].notna()]


def table_cms_css(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Table 2: CMS and CSS per model with ranks, and the rank correlation between them."""
    out = []
    for model, group in rows.groupby("model"):
        scored = _interventional(group)
        cms = group.dropna(subset=["cms"]).groupby("case_id")["cms"].first().mean()
        low, high = cluster_bootstrap_ci(scored["css"], scored["case_id"]) if len(scored) else (np.nan, np.nan)
        out.append({"model": model, "cms": cms, "css": scored["css"].mean(), "css_ci_low": low, "css_ci_high": high, "tuples": len(scored)})
    table = pd.DataFrame(out)
    table["cms_rank"] = ranks(table["cms"])
    table["css_rank"] = ranks(table["css"])
    try:
        rc = rank_correlation(table["cms"], table["css"])
        note = (
            f"Spearman rho = {rc.rho:+.2f} (exact permutation p = {rc.p_exact:.3f} over all {len(table)}! pairings; "
            f"tied values share their average rank), Kendall tau-b = {rc.tau:+.2f} (p = {rc.p_tau:.3f}), n = {rc.n} models."
        )
    except ValueError as ex:
        note = f"Rank correlation between CMS and CSS not computed: {ex} (models: {len(table)})."
    return table.sort_values("css_rank"), note


def table_families(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3: CSS per model and family with 95% CIs clustered by case, and the winner per family."""
    out = []
    for (model, family), group in rows[rows["css"].notna()].groupby(["model", "family"]):
        low, high = cluster_bootstrap_ci(group["css"], group["case_id"])
        out.append({"family": family, "model": model, "css": group["css"].mean(), "ci_low": low, "ci_high": high, "tuples": len(group)})
    table = pd.DataFrame(out)
    if not table.empty:
        best = table.groupby("family")["css"].transform("max")
        table["winner"] = table["css"] == best
    return table


def table_verdicts(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 4: shares of wrong (0), partial (0.5) and correct (1) verdicts over A-E, with case-clustered 95% CIs."""
    out = []
    for model, group in _interventional(rows).groupby("model"):
        row: dict[str, object] = {"model": model}
        for name, value in (("wrong", 0.0), ("partial", 0.5), ("correct", 1.0)):
            hits = (group["css"] == value).astype(float)
            low, high = cluster_bootstrap_ci(hits, group["case_id"])
            row |= {name: hits.mean(), f"{name}_ci": f"{low:.2f}-{high:.2f}"}
        row["tuples"] = len(group)
        out.append(row)
    return pd.DataFrame(out)


def table_cross_judge(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Cross-judge replication: the original judge vs a re-judging of the same samples."""
    if "css_1" not in rows.columns:
        return pd.DataFrame(), "No log carries a second judge score (run `inspect score ... --action append` with another judge)."
    both = _interventional(rows).dropna(subset=["css_1"])
    out = []
    for model, group in both.groupby("model"):
        out.append(
            {
                "model": model,
                "agreement": float((group["css_0"] == group["css_1"]).mean()),
                # Undefined (NaN) when both judges give one verdict throughout: no chance baseline.
                "kappa": verdict_kappa(group["css_0"], group["css_1"]),
                "kappa_linear": verdict_kappa(group["css_0"], group["css_1"], weighted=True),
                "css_judge_1": group["css_0"].mean(),
                "css_judge_2": group["css_1"].mean(),
                "shift": group["css_1"].mean() - group["css_0"].mean(),
                "tuples": len(group),
            }
        )
    table = pd.DataFrame(out)
    try:
        rc = rank_correlation(table["css_judge_1"], table["css_judge_2"])
        note = f"Rank preservation between judges: Spearman rho = {rc.rho:+.2f} (exact p = {rc.p_exact:.3f}), n = {rc.n}."
    except ValueError as ex:
        note = f"Rank preservation between judges not computed: {ex} (models: {len(table)})."
    return table, note


def sensitivity_rows(paths: list[str] | LogRows | pd.DataFrame) -> pd.DataFrame:
    """Per-pair rows from sensitivity logs (scorer `direction_consistency`); unscored pairs are left out."""
    rows = []
    for sample in sample_views(suite_samples(paths, "sensitivity")):
        score = sample.scores.get("direction_consistency")
        if score is None or not isinstance(score.value, (int, float)) or score.value != score.value:
            continue
        meta = score.metadata or {}
        rows.append({"model": sample.model, "type": meta.get("type"), "vignette_id": sample.metadata.get("vignette_id"),
                     "consistent": float(score.value), "flip": float(meta.get("flip", False)), "js": meta.get("js"),
                     "relative": meta.get("relative"), "entropy_change": meta.get("entropy_change"), "log": sample.log,
                     "sample_id": sample.id, "epoch": sample.epoch})
    return pd.DataFrame(rows)


def table_sensitivity(rows: pd.DataFrame) -> pd.DataFrame:
    """Sensitivity profile per model and perturbation type, with vignette-clustered 95% CIs on consistency."""
    out = []
    for (model, kind), group in rows.groupby(["model", "type"]):
        low, high = cluster_bootstrap_ci(group["consistent"], group["vignette_id"])
        out.append({"model": model, "type": kind, "consistency": group["consistent"].mean(), "ci_low": low, "ci_high": high,
                    "flip_rate": group["flip"].mean(), "js": group["js"].mean(), "relative_change": group["relative"].mean(),
                    "entropy_change": group["entropy_change"].mean(), "pairs": len(group)})
    return pd.DataFrame(out)


def table_controls(rows: pd.DataFrame, margin: float = 0.05) -> pd.DataFrame:
    """Negative controls: mean movement (1 - judge score) with a 90% case-clustered interval (TOST at margin)."""
    out = []
    for model, group in rows[(rows["family"] == "N") & rows["css"].notna()].groupby("model"):
        movement = 1 - group["css"]
        low, high, passed = equivalence_upper(movement, group["case_id"], margin)
        out.append({"model": model, "movement": movement.mean(), "ci90_low": low, "ci90_high": high,
                    "equivalent": passed, "verdict": "stable" if passed else "FAILS: moves on meaning-preserving edits", "tuples": len(group)})
    return pd.DataFrame(out)


def table_instability(rows: pd.DataFrame) -> pd.DataFrame:
    """Instability floor: how often the verdict differs between epochs of the same sample (fresh generations)."""
    scored = rows.dropna(subset=["css"])
    if scored.empty or scored["epoch"].nunique() < 2:
        return pd.DataFrame()
    out = []
    for (model, family), group in scored.groupby(["model", "family"]):
        by_sample = group.groupby("sample_id")["css"]
        multi = by_sample.nunique()[by_sample.size() >= 2]
        if len(multi):
            out.append({"model": model, "family": family, "instability": float((multi > 1).mean()), "samples": len(multi)})
    return pd.DataFrame(out)


def table_paired(rows: pd.DataFrame, delta: float = 0.05) -> pd.DataFrame:
    """Every pair of models on the tuples both scored, per family: paired difference, CI, McNemar, Holm, power."""
    from itertools import combinations

    scored = _interventional(rows)
    models = sorted(scored["model"].unique())
    out = []
    for a, b in combinations(models, 2):
        keys = ["case_id", "intervention_id", "family", "epoch"]
        both = scored[scored["model"] == a][keys + ["css"]].merge(scored[scored["model"] == b][keys + ["css"]], on=keys, suffixes=("_a", "_b"))
        family_rows = []
        for family, group in both.groupby("family"):
            mean, low, high = paired_difference(group["css_a"], group["css_b"], group["case_id"])
            only_a = int(((group["css_a"] == 1) & (group["css_b"] < 1)).sum())
            only_b = int(((group["css_b"] == 1) & (group["css_a"] < 1)).sum())
            sd = float((group["css_a"] - group["css_b"]).std(ddof=1)) if len(group) > 1 else float("nan")
            family_rows.append({"model_a": a, "model_b": b, "family": family, "difference": mean, "ci_low": low, "ci_high": high,
                                "mcnemar_p": mcnemar_exact(only_a, only_b), "tuples": len(group),
                                "tuples_for_80pct_power": tuples_for_power(sd, delta) if sd > 0 else None})
        for row, adjusted in zip(family_rows, holm([r["mcnemar_p"] for r in family_rows]) if family_rows else []):
            row["holm_p"] = adjusted
        out += family_rows
    return pd.DataFrame(out)


def write_report(paths: list[str] | LogRows, out_dir: str | Path, predictions: str | Path | None = None) -> Path:
    """Write report.md, a self-contained report.html, the figures as PNG and the tables as CSV.

    Reads every log once and hands each suite's rows to the section its `Suite` entry registers.
    With `predictions`, the CSS section adds the confirmatory results (pre-registered predictions
    tested on the test split) at the top; every other number is then labelled exploratory.
    """
    from clinical_cf.analysis.sections import build_report

    return build_report(read_logs(paths, progress=True), Path(out_dir), predictions)


def export_rewards(paths: list[str] | LogRows, file: str | Path) -> int:
    """Per-tuple reward records as JSONL; returns how many were written.

    One record per scored CSS sample: task, model, case, intervention, family, the SHA-256 of
    the prompt the model saw, the counterfactual output, the CSS score and the judge. Read
    as a dense reward for RL: 1 = the output moved as the pre-registered change says.
    """
    import hashlib
    import json

    written = 0
    with open(file, "w", encoding="utf-8") as handle:
        for sample in sample_views(suite_samples(paths, "css")):
            name = next((n for n in JUDGE_SCORES if n in sample.scores), None)
            if name is None or sample.metadata.get("family") is None:
                continue
            value = sample.scores[name].value
            if not isinstance(value, (int, float)) or value != value:  # unscored (NaN)
                continue
            record = {
                "task": sample.task,
                "model": sample.model,
                "case_id": sample.metadata.get("case_id"),
                "intervention_id": sample.metadata.get("intervention_id"),
                "family": sample.metadata.get("family"),
                "prompt_sha256": hashlib.sha256(input_text(sample.input).encode()).hexdigest(),
                "output": (sample.store.get("CSSArms:counterfactual") or {}).get("raw"),
                "css": float(value),
                "judge": (sample.scores[name].metadata or {}).get("judge_model"),
                "log": sample.log,
                "sample_id": sample.id,
                "epoch": sample.epoch,
            }
            handle.write(json.dumps(record) + "\n")
            written += 1
    return written


def regression_gate(paths: list[str] | LogRows, baseline: list[str] | LogRows, margin: float = 0.05) -> tuple[pd.DataFrame, bool]:
    """Compare each model in `paths` with the baseline logs' model on the same tuples, per family.

    A family fails when the new model's CSS is lower by more than `margin` and the paired
    difference is significant (case-clustered 95% interval entirely below zero). Returns the
    table and whether every family passed.
    """
    new = css_rows(suite_samples(paths, "css")).rows
    base = css_rows(suite_samples(baseline, "css")).rows
    if new.empty or base.empty:
        raise ValueError("the gate needs CSS logs on both sides")
    keys = ["case_id", "intervention_id", "family", "epoch"]
    out = []
    for model, group in _interventional(new).groupby("model"):
        both = group[keys + ["css"]].merge(_interventional(base)[keys + ["css"]], on=keys, suffixes=("_new", "_base"))
        for family, fam in both.groupby("family"):
            mean, low, high = paired_difference(fam["css_new"], fam["css_base"], fam["case_id"])
            failed = mean < -margin and high < 0
            out.append({"model": model, "family": family, "difference": mean, "ci_low": low, "ci_high": high,
                        "tuples": len(fam), "failed": failed,
                        "why": f"CSS lower by {-mean:.3f} (> {margin}) and the 95% interval excludes 0" if failed else ""})
    table = pd.DataFrame(out)
    return table, bool(table.empty or not table["failed"].any())


def confirmatory(rows: pd.DataFrame, predictions_path: str | Path, alpha: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """Test the pre-registered predictions per model on the test split, BH-adjusted across predictions.

    The one-sided p-value is the share of case-level bootstrap resamples (2,000, seeded) whose
    family mean falls on the wrong side of the threshold.
    """
    from clinical_cf.analysis.registration import annotate_verdicts, confirmatory_predictions

    # Only the published predictions are tested: a threshold re-locked after release matches its
    # lock but not the published hash, and is refused here (CatalogError naming the file).
    checked = confirmatory_predictions(predictions_path)
    predictions = [p.model_dump() for p in checked.predictions]
    test = rows[(rows["split"] == "test") & rows["css"].notna()]
    out = []
    for model, group in test.groupby("model"):
        for pred in predictions:
            fam = group[group["family"] == pred["family"]]
            if fam.empty:
                continue
            # Cases indexed in order of appearance: the draws the per-resample loop made, so seeds keep their verdicts.
            means = cluster_resample_means(fam["css"], fam["case_id"], 2000, seed, cluster_order="appearance")
            wrong = means >= pred["threshold"] if pred["direction"] == "below" else means <= pred["threshold"]
            low, high = np.quantile(means, [0.025, 0.975])
            out.append({"model": model, "prediction": pred["id"], "statement": pred["statement"], "family": pred["family"],
                        "css": fam["css"].mean(), "ci_low": float(low), "ci_high": float(high), "tuples": len(fam),
                        "p": max(float(wrong.mean()), 1 / 2000)})
    table = pd.DataFrame(out)
    if table.empty:
        return table
    from scipy.stats import false_discovery_control

    table["p_bh"] = false_discovery_control(table["p"].to_numpy(), method="bh")
    table["verdict"] = np.where(table["p_bh"] < alpha, "supported", "not supported")
    return annotate_verdicts(table, checked)
