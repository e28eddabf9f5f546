"""Workflow escalation suite: logs -> per-episode rows -> metrics with seed-clustered CIs, paired tests.

One row per (log, sample, epoch) of a `workflow` log: the episode's labels (seed, task class,
variant, parameterization, split, reference, acceptable set), the model's final action and stated
confidence, and the utility recomputed at 5:1 and 10:1 (formula in `clinical_cf.scorers.workflow`).

Statistics (seed 004, section V): every CI is a 95% percentile bootstrap resampling whole seeds
(the 8 episodes of a seed are not independent; 32 test seeds are the effective sample size).
Paired clean-vs-perturbed tests work at seed level: per seed, accuracy on the clean episodes minus
accuracy on the perturbed episodes of the same pair keys; an exact two-sided sign test over seeds
(ties dropped), mean difference with a seed-clustered CI, Holm correction across every test in
the table. Calibration: ECE over 10 equal-width bins; failure AUROC = ROC AUC of (1 - confidence)
for predicting a wrong action (0.5 = chance), episodes without a stated confidence left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from clinical_cf.analysis.logs import LogRows, input_text, sample_views, suite_samples
from clinical_cf.analysis.stats import cluster_bootstrap_ci, holm, mcnemar_exact, paired_difference
from clinical_cf.analysis.tables import markdown_table, write_table
from clinical_cf.scorers.workflow import ECE_BINS, expected_calibration_error, utility

SCORER = "workflow_action"
GROUP = ["model", "condition"]
PERTURBED = ("missing", "stale", "conflict", "late_risk")
REQUIRED_METADATA = ("reference_action", "acceptable_actions", "seed_id", "task_class", "variant")
"""Sample metadata an episode row cannot do without; samples missing any are left out and counted."""


def _user_text(sample) -> str:
    turns = sample.metadata.get("turns")
    if turns:
        return "\n\n".join(t["content"] for t in turns)
    return input_text(sample.input, roles=("user",), sep="\n\n")


def workflow_rows(paths: Sequence[str | Path] | LogRows | pd.DataFrame) -> pd.DataFrame:
    """Per-episode rows from every workflow log among `paths` (or rows the log reader gave); other logs are ignored."""
    rows = []
    for sample in sample_views(suite_samples(paths, "workflow")):
        score = sample.scores.get(SCORER)
        # Unscored samples (invalid output) are left out, as the log's own metrics leave them out;
        # the report's parse table counts them.
        if score is None or score.unscored:
            continue
        meta, sm = sample.metadata, score.metadata or {}
        if any(key not in meta for key in REQUIRED_METADATA):
            continue  # counted and named per log by the report (sections.missing_metadata)
        episode = {"reference_action": meta["reference_action"], "acceptable_actions": meta["acceptable_actions"]}
        action = sm.get("action")
        rows.append({
            "model": sample.model, "condition": meta.get("condition", "neutral"), "task_cost_ratio": meta.get("cost_ratio", 5.0),
            "episode_id": meta.get("episode_id", sample.id), "seed_id": meta["seed_id"], "pair_key": meta.get("pair_key"),
            "task_class": meta["task_class"], "variant": meta["variant"], "parameterization": meta.get("parameterization"),
            "split": meta.get("split"), "epoch": sample.epoch, "reference_action": meta["reference_action"],
            "acceptable_actions": tuple(meta["acceptable_actions"]), "action": action,
            "confidence": sm.get("confidence"), "parse_ok": bool(sm.get("parse_ok")),
            "first_action": (sm.get("turn_actions") or [action])[0],
            "correct": float(action in meta["acceptable_actions"]),
            "utility_5": utility(action, episode, 5.0), "utility_10": utility(action, episode, 10.0),
            "escalate_required": meta["reference_action"] == "ESCALATE",
            "escalate_acceptable": "ESCALATE" in meta["acceptable_actions"],
            "text": _user_text(sample), "log": sample.log,
        })
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["confidence"] = pd.to_numeric(frame["confidence"], errors="coerce")
    return frame


# ------------------------------------------------------------------ metrics

def failure_auroc(confidence: Sequence[float], correct: Sequence[float]) -> float:
    """ROC AUC of (1 - confidence) for predicting a failure; NaN when undefined (one class, no confidences)."""

    conf = np.asarray(confidence, dtype=float)
    fail = 1 - np.asarray(correct, dtype=float)
    keep = ~np.isnan(conf)
    if keep.sum() == 0 or len(np.unique(fail[keep])) < 2:
        return float("nan")
    return float(roc_auc_score(fail[keep], 1 - conf[keep]))


def action_metrics(frame: pd.DataFrame, action_col: str = "action", cost_ratio: float = 5.0) -> dict[str, float]:
    """Accuracy, utility, missed / unnecessary escalation, sensitivity, specificity for one action column."""
    actions = frame[action_col]
    correct = np.array([a in acc for a, acc in zip(actions, frame["acceptable_actions"], strict=False)], dtype=float)
    util = np.array([
        utility(a, {"reference_action": r, "acceptable_actions": acc}, cost_ratio)
        for a, r, acc in zip(actions, frame["reference_action"], frame["acceptable_actions"], strict=False)
    ])
    escalated = (actions == "ESCALATE").to_numpy()
    required = frame["escalate_required"].to_numpy(bool)
    not_ok = ~frame["escalate_acceptable"].to_numpy(bool)
    missed = float((~escalated[required]).mean()) if required.any() else float("nan")
    unnecessary = float(escalated[not_ok].mean()) if not_ok.any() else float("nan")
    return {"n": len(frame), "accuracy": float(correct.mean()) if len(frame) else float("nan"),
            "utility": float(util.mean()) if len(frame) else float("nan"), "missed_escalation": missed,
            "unnecessary_escalation": unnecessary, "sensitivity": 1 - missed, "specificity": 1 - unnecessary}


def _ci(values: Sequence[float], clusters: Sequence[str], n_resamples: int) -> tuple[float, float]:
    if len(values) == 0 or len(set(clusters)) < 2:
        return float("nan"), float("nan")
    return cluster_bootstrap_ci(values, clusters, n_resamples=n_resamples)


def summary_table(rows: pd.DataFrame, n_resamples: int = 2000) -> pd.DataFrame:
    """Per model and condition: parse rate, accuracy, 5:1 and 10:1 utility, missed / unnecessary
    escalation, sensitivity, specificity (seed-clustered 95% CIs), ECE and failure AUROC."""
    out = []
    for (model, condition), g in rows.groupby(GROUP):
        req, nok = g[g["escalate_required"]], g[~g["escalate_acceptable"]]
        missed = (req["action"] != "ESCALATE").astype(float)
        unnecessary = (nok["action"] == "ESCALATE").astype(float)
        row = {"model": model, "condition": condition, "episodes": len(g), "seeds": g["seed_id"].nunique(),
               "parse_rate": g["parse_ok"].mean()}
        for name, values, clusters in (
            ("accuracy", g["correct"], g["seed_id"]), ("utility_5", g["utility_5"], g["seed_id"]),
            ("utility_10", g["utility_10"], g["seed_id"]), ("missed_escalation", missed, req["seed_id"]),
            ("unnecessary_escalation", unnecessary, nok["seed_id"]),
        ):
            low, high = _ci(values.to_numpy(float), clusters.to_numpy(), n_resamples)
            row.update({name: float(values.mean()) if len(values) else float("nan"), f"{name}_low": low, f"{name}_high": high})
        row["sensitivity"] = 1 - row["missed_escalation"]
        row["specificity"] = 1 - row["unnecessary_escalation"]
        row["ece"] = expected_calibration_error(g["confidence"].to_numpy(float), g["correct"].to_numpy(float))
        row["failure_auroc"] = failure_auroc(g["confidence"].to_numpy(float), g["correct"].to_numpy(float))
        out.append(row)
    return pd.DataFrame(out)


def accuracy_by(rows: pd.DataFrame, key: str = "variant", n_resamples: int = 2000) -> pd.DataFrame:
    """Decision accuracy (and 5:1 utility) per model, condition and `key` (variant or task_class), seed-clustered CIs."""
    out = []
    for (model, condition, value), g in rows.groupby([*GROUP, key]):
        low, high = _ci(g["correct"].to_numpy(float), g["seed_id"].to_numpy(), n_resamples)
        out.append({"model": model, "condition": condition, key: value, "episodes": len(g), "accuracy": g["correct"].mean(),
                    "ci_low": low, "ci_high": high, "utility_5": g["utility_5"].mean(),
                    "escalated": float((g["action"] == "ESCALATE").mean())})
    return pd.DataFrame(out)


def reliability_table(rows: pd.DataFrame, bins: int = ECE_BINS) -> pd.DataFrame:
    """Per model, condition and confidence bin (equal width on [0, 1]): episodes, mean confidence, accuracy."""
    out = []
    known = rows.dropna(subset=["confidence"])
    for (model, condition), g in known.groupby(GROUP):
        index = np.minimum((g["confidence"].to_numpy(float) * bins).astype(int), bins - 1)
        for b in range(bins):
            mask = index == b
            if mask.any():
                out.append({"model": model, "condition": condition, "bin_low": b / bins, "bin_high": (b + 1) / bins,
                            "episodes": int(mask.sum()), "mean_confidence": float(g["confidence"].to_numpy(float)[mask].mean()),
                            "accuracy": float(g["correct"].to_numpy(float)[mask].mean())})
    return pd.DataFrame(out)


def risk_coverage(rows: pd.DataFrame) -> pd.DataFrame:
    """Risk-coverage curves from stated confidence, per model and condition.

    The agent handles the k most confident episodes and defers the rest (ties broken by episode id).
    selective_risk = error rate among handled episodes; missed_escalation_risk = required escalations
    that were handled and not escalated, over all required escalations (deferred episodes count as
    escalated, as in the paper's Fig. 4). Episodes without a confidence are deferred last-resort:
    they are treated as confidence 0.
    """
    out = []
    for (model, condition), g in rows.groupby(GROUP):
        g = g.assign(_c=g["confidence"].fillna(0.0)).sort_values(["_c", "episode_id"], ascending=[False, True])
        wrong = 1 - g["correct"].to_numpy(float)
        missed = (g["escalate_required"] & (g["action"] != "ESCALATE")).to_numpy(float)
        required = max(int(g["escalate_required"].sum()), 1)
        n = len(g)
        for k in range(1, n + 1):
            out.append({"model": model, "condition": condition, "coverage": k / n, "threshold": float(g["_c"].iloc[k - 1]),
                        "selective_risk": float(wrong[:k].mean()), "missed_escalation_risk": float(missed[:k].sum() / required)})
    return pd.DataFrame(out)


def paired_tests(rows: pd.DataFrame, n_resamples: int = 2000) -> pd.DataFrame:
    """Clean vs each perturbed variant at seed level, per model and condition, Holm-corrected across the table."""
    out = []
    for (model, condition), g in rows.groupby(GROUP):
        # Pairs are matched within one log (run), so two runs of one model are never cross-paired.
        clean = g[g["variant"] == "clean"][["log", "pair_key", "epoch", "seed_id", "correct"]]
        for variant in PERTURBED:
            other = g[g["variant"] == variant][["log", "pair_key", "epoch", "correct"]]
            both = clean.merge(other, on=["log", "pair_key", "epoch"], suffixes=("_clean", "_variant"))
            if both.empty:
                continue
            per_seed = both.groupby("seed_id")[["correct_clean", "correct_variant"]].mean()
            diff = per_seed["correct_clean"] - per_seed["correct_variant"]
            mean, low, high = paired_difference(per_seed["correct_clean"], per_seed["correct_variant"], per_seed.index.to_numpy(),
                                                n_resamples=n_resamples)
            out.append({"model": model, "condition": condition, "variant": variant, "seeds": len(per_seed),
                        "clean_accuracy": float(per_seed["correct_clean"].mean()),
                        "variant_accuracy": float(per_seed["correct_variant"].mean()), "difference": mean,
                        "ci_low": low, "ci_high": high, "seeds_clean_better": int((diff > 0).sum()),
                        "seeds_variant_better": int((diff < 0).sum()),
                        "sign_test_p": mcnemar_exact(int((diff > 0).sum()), int((diff < 0).sum()))})
    table = pd.DataFrame(out)
    if not table.empty:
        table["holm_p"] = holm(table["sign_test_p"].tolist())
        table["significant"] = table["holm_p"] < 0.05
    return table


def condition_effect(rows: pd.DataFrame, n_resamples: int = 2000) -> pd.DataFrame:
    """Uncertainty prompting minus neutral, per model and variant, on the episodes both conditions ran.

    Paired by episode (and epoch); seed-clustered CI on the accuracy difference; also the change in the
    share escalated, which shows the paper's "backfire" pattern (escalations turned into clarification).
    """
    keys = ["model", "episode_id", "epoch"]
    neutral = rows[rows["condition"] == "neutral"]
    uncertain = rows[rows["condition"] == "uncertainty"]
    cols = [*keys, "seed_id", "variant", "correct", "action"]
    both = neutral[cols].merge(uncertain[[*keys, "correct", "action"]], on=keys, suffixes=("_neutral", "_uncertainty"))
    out = []
    for (model, variant), g in both.groupby(["model", "variant"]):
        mean, low, high = paired_difference(g["correct_uncertainty"], g["correct_neutral"], g["seed_id"].to_numpy(),
                                            n_resamples=n_resamples)
        out.append({"model": model, "variant": variant, "episodes": len(g), "accuracy_neutral": g["correct_neutral"].mean(),
                    "accuracy_uncertainty": g["correct_uncertainty"].mean(), "difference": mean, "ci_low": low, "ci_high": high,
                    "escalated_neutral": float((g["action_neutral"] == "ESCALATE").mean()),
                    "escalated_uncertainty": float((g["action_uncertainty"] == "ESCALATE").mean())})
    return pd.DataFrame(out)


def late_risk_updates(rows: pd.DataFrame) -> pd.DataFrame:
    """On late_risk episodes: how often the model escalated only after the red flag arrived, kept a
    non-escalation decision, or had already escalated before it."""
    late = rows[rows["variant"] == "late_risk"]
    out = []
    for (model, condition), g in late.groupby(GROUP):
        first_esc = g["first_action"] == "ESCALATE"
        final_esc = g["action"] == "ESCALATE"
        out.append({"model": model, "condition": condition, "episodes": len(g),
                    "escalated_after_red_flag": float((~first_esc & final_esc).mean()),
                    "already_escalated": float(first_esc.mean()), "never_escalated": float((~first_esc & ~final_esc).mean())})
    return pd.DataFrame(out)


def select_split(rows: pd.DataFrame, split: str | None = "test") -> pd.DataFrame:
    """Rows of one split when the logs have any; otherwise every row (a log run on one split only)."""
    if split is None or rows.empty or not (rows["split"] == split).any():
        return rows
    return rows[rows["split"] == split]


def workflow_report_table(paths: Sequence[str | Path], split: str | None = "test", n_resamples: int = 2000) -> tuple[pd.DataFrame, str]:
    """For the comparison report: the per-model summary on the test split (or all rows) and its markdown.

    Returns (summary DataFrame, markdown with the summary, accuracy by variant and the paired tests).
    An empty DataFrame and "(no workflow logs)" when no log among `paths` is a workflow log.
    """
    rows = workflow_rows(paths)
    if rows.empty:
        return pd.DataFrame(), "(no workflow logs)"
    rows = select_split(rows, split)
    summary = summary_table(rows, n_resamples)
    shown = summary[["model", "condition", "episodes", "parse_rate", "accuracy", "accuracy_low", "accuracy_high", "utility_5",
                     "utility_5_low", "utility_5_high", "utility_10", "missed_escalation", "sensitivity", "specificity",
                     "ece", "failure_auroc"]]
    by_variant = accuracy_by(rows, "variant", n_resamples)
    tests = paired_tests(rows, n_resamples)
    md = "\n\n".join([
        "### Workflow escalation (seed 004)", markdown_table(shown),
        "Accuracy by variant (seed-clustered 95% CI):", markdown_table(by_variant),
        "Clean vs perturbed, seed-level sign test, Holm-corrected:", markdown_table(tests),
    ])
    return summary, md


def write_tables(paths: Sequence[str | Path], out_dir: str | Path, split: str | None = "test") -> Path:
    """All workflow tables as CSV plus `workflow.md` in `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = select_split(workflow_rows(paths), split)
    if rows.empty:
        raise ValueError("no workflow logs among the given paths")
    tables = {"summary": summary_table(rows), "by_variant": accuracy_by(rows, "variant"), "by_task_class": accuracy_by(rows, "task_class"),
              "reliability": reliability_table(rows), "risk_coverage": risk_coverage(rows), "paired_tests": paired_tests(rows),
              "condition_effect": condition_effect(rows), "late_risk_updates": late_risk_updates(rows)}
    for name, table in tables.items():
        write_table(table, out / f"workflow_{name}.csv")
    md = ["# Workflow escalation results", ""]
    for name in ("summary", "by_variant", "by_task_class", "paired_tests", "condition_effect", "late_risk_updates"):
        md += [f"## {name.replace('_', ' ')}", "", markdown_table(tables[name]), ""]
    (out / "workflow.md").write_text("\n".join(md), encoding="utf-8")
    return out / "workflow.md"


def calibration_by_class(rows: pd.DataFrame, bins: int = ECE_BINS) -> pd.DataFrame:
    """Calibration per model, condition and task class (ECE, 10 equal-width bins, over the episodes whose confidence
    was read): a model calibrated on one class and not on another shows it, where one overall ECE would hide it."""
    columns = ["model", "condition", "task_class", "episodes", "mean_confidence", "accuracy", "ece"]
    known = rows.dropna(subset=["confidence"]) if not rows.empty else rows
    out = []
    for (model, condition, task_class), g in (known.groupby([*GROUP, "task_class"]) if not known.empty else []):
        out.append({"model": model, "condition": condition, "task_class": task_class, "episodes": len(g),
                    "mean_confidence": float(g["confidence"].mean()), "accuracy": float(g["correct"].mean()),
                    "ece": expected_calibration_error(g["confidence"].to_numpy(float), g["correct"].to_numpy(float), bins)})
    return pd.DataFrame(out, columns=columns)
