"""The comparison report over many logs: one section per suite, CSS's with the paper's Tables 2-4,
cross-judge replication, controls, paired comparisons and the side-by-side page.

    clinical-cf report LOGS_OR_DIRS... --out DIR

Logs are read once, through `clinical_cf.analysis.logs` (routed by the suite each task records;
a log it cannot use is named with the reason and skipped). Each suite's section is registered on
the `Suite` table (`clinical_cf.suites`) and built by `clinical_cf.analysis.sections` (`SECTIONS`).
Writes `report.md`, a self-contained `report.html`, one CSV per table and the figures. Every number
is computed from per-tuple rows that keep their log path and sample id.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from inspect_ai.log import read_eval_log
from scipy.stats import false_discovery_control

from clinical_cf.analysis.logs import (
    EXCLUDED_FIELDS,
    LogRows,
    column,
    input_text,
    read_logs,
    sample_views,
    score_columns,
    suite_samples,
)
from clinical_cf.analysis.registration import (
    annotate_verdicts,
    confirmatory_predictions,
)
from clinical_cf.analysis.stats import (
    cluster_bootstrap_ci,
    cluster_resample_means,
    epoch_mode,
    equivalence_upper,
    holm,
    mcnemar_exact,
    paired_difference,
    rank_correlation,
    ranks,
    tuples_for_power,
    verdict_kappa,
)
from clinical_cf.core.errors import CatalogError
from clinical_cf.solvers.css import CSSArms

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
    "metadata_invariance_attribute": "invariance_attribute",
}
REQUIRED_METADATA = ("case_id", "family", "intervention_id")
"""Sample metadata a CSS row cannot do without; samples missing any are counted per log and left out."""
ENTRY = ["setting", "model", "judge", "run"]
"""What a row of every CSS table is keyed by: two judges or two labelled runs of one model never pool."""
TUPLE = ["case_id", "intervention_id", "family"]


@dataclass
class CSSRows:
    """CSS rows from every usable log, and the logs (or samples) that were left out with why.

    `rows`: one row per tuple and entry (setting, model, judge, run), epochs reduced as the log's
    reducer says; `verdicts`: one row per epoch (the judge's actual verdicts), reruns deduplicated;
    `coverage`: per entry, how many tuples, on which cases, and what was dropped.
    Re-judgings appended with `inspect score --action append` carry `rejudged=True`: they feed the
    cross-judge table, the main tables use each log's own judge.
    """

    rows: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)
    verdicts: pd.DataFrame = field(default_factory=pd.DataFrame)
    coverage: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: list[str] = field(default_factory=list)
    logs_read: dict[str, list[str]] = field(default_factory=dict)
    """Per setting, every log that gave verdicts, the ones a later run replaced entirely included."""


def _has_score(frame: pd.DataFrame, col: str) -> bool:
    return f"{col}_metadata" in frame.columns and bool(frame[f"{col}_metadata"].map(lambda v: isinstance(v, dict)).any())


def _judge_names(frame: pd.DataFrame, col: str, fallback: str) -> pd.Series:
    """The judge model each score names in its metadata (`judge_model`), else the log's judge role, else the scorer."""
    meta = column(frame, f"{col}_metadata")
    return meta.map(lambda m: m.get("judge_model") if isinstance(m, dict) and m.get("judge_model") else None).fillna(fallback)


def reduce_epochs(values: pd.Series, reducer: str) -> float:
    """One tuple's epochs reduced as Inspect's reducer of that name does (mean, median, mode, max, at_least_k)."""
    scored = values.dropna().astype(float)
    if scored.empty:
        return float("nan")
    if reducer == "median":
        return float(scored.median())
    if reducer == "mode":
        return epoch_mode(scored.to_numpy())  # ties as Inspect breaks them: the value first seen in epoch order
    if reducer == "max":
        return float(scored.max())
    if reducer.startswith("at_least_"):
        return float((scored >= 1.0).sum() >= int(reducer.removeprefix("at_least_")))
    return float(scored.mean())


def _reduced(verdicts: pd.DataFrame, grouped, rows: pd.DataFrame) -> np.ndarray:
    """Each tuple's epochs reduced by its log's reducer: mean, median and max vectorised, the rest per tuple."""
    out = grouped["css"].mean().to_numpy()
    reducers = rows["reducer"].to_numpy()
    for name, fast in (("median", "median"), ("max", "max")):
        if (reducers == name).any():
            values = getattr(grouped["css"], fast)().to_numpy()
            out = np.where(reducers == name, values, out)
    other = ~np.isin(reducers, ["mean", "median", "max"])
    if other.any():
        # In epoch order (the rows come in the log's order): the mode's ties go to the earliest epoch, as in Inspect.
        slow = grouped.apply(lambda g: reduce_epochs(g.sort_values("epoch", kind="stable")["css"], g["reducer"].iloc[0]),
                             include_groups=False).to_numpy()
        out = np.where(other, slow, out)
    return out


def css_rows(samples: pd.DataFrame, labels_given: bool = False) -> CSSRows:
    """CSS rows (single-shot and agent) from the log reader's rows of CSS logs (see `CSSRows`).

    The setting (single_shot / agent) is the one the task logged in its eval metadata. A rerun of the
    same tuple under the same entry keeps one sample (from a complete log first, then scored and error-free, then the newest log);
    the rows it replaced are counted in `coverage.rerun_rows_dropped`.
    """
    if samples.empty:
        return CSSRows(pd.DataFrame())
    frames: list[pd.DataFrame] = []
    skipped: list[tuple[str, str]] = []
    warnings: list[str] = []
    missing_counts: dict[str, int] = {}
    judge_cols = score_columns(samples, JUDGE_SCORES)
    for path, frame in samples.groupby("log", sort=False):
        present = [c for c in judge_cols if _has_score(frame, c)]
        lacking = np.zeros(len(frame), dtype=bool)
        absent = []
        for key in REQUIRED_METADATA:
            values = column(frame, f"metadata_{key}")
            miss = values.isna().to_numpy()
            if miss.any():
                absent.append(key)
            lacking |= miss
        # A log whose every sample errored before scoring (read with --include-incomplete) has no judge score: its
        # samples are counted as errored under its judge role, never skipped as "not a CSS log".
        all_errored = not present and bool(column(frame, "error").notna().all()) and not lacking.all()
        if (not present and not all_errored) or lacking.all():
            why = "no CSS judge score" if not present else f"no sample carries the CSS metadata ({', '.join(absent)})"
            skipped.append((str(path), f"is not a usable CSS log ({why})"))
            continue
        if lacking.any():
            missing_counts[str(path)] = int(lacking.sum())
            warnings.append(f"{path}: {int(lacking.sum())} of {len(frame)} samples lack CSS metadata "
                            f"({', '.join(absent)}); left out")
            frame = frame[~lacking]
        base = frame[[c for c in COLUMNS if c in frame.columns]].rename(columns=COLUMNS)
        if "split" not in base.columns:
            base["split"] = None
        base["setting"] = column(frame, "eval_setting").fillna("single_shot").astype(str).to_numpy()
        base["run"] = column(frame, "run", "").fillna("").astype(str).to_numpy()
        base["created"] = column(frame, "created", "").astype(str).to_numpy()
        base["reducer"] = column(frame, "reducer", "mean").fillna("mean").astype(str).to_numpy()
        errored = column(frame, "error").notna().to_numpy()
        limited = column(frame, "limit").notna().to_numpy()
        # A sample that errored or was stopped by a limit is counted as such, never as a verdict (or an invalid reply).
        base["complete"] = ~errored & ~limited
        base["outcome"] = np.where(errored, "error", np.where(limited, "limit", ""))
        base["log_complete"] = (column(frame, "status", "success").fillna("success") == "success").to_numpy()
        base["cms"] = np.where(base["complete"], pd.to_numeric(column(frame, "score_cms"), errors="coerce"), np.nan)
        for k, col in enumerate(present or [None]):
            fallback = column(frame, "judge").dropna()
            part = base.copy()
            if col is None:  # every sample errored: no verdict, the log's judge role names the entry
                part["judge"] = str(fallback.iloc[0]) if len(fallback) else ""
                part["css"] = np.nan
            else:
                part["judge"] = _judge_names(frame, col, str(fallback.iloc[0]) if len(fallback) else col).to_numpy()
                part["css"] = np.where(part["complete"], pd.to_numeric(frame[col], errors="coerce"), np.nan)
            part["outcome"] = np.where(part["outcome"] != "", part["outcome"], np.where(np.isnan(part["css"]), "unscored", "scored"))
            part["rejudged"] = k > 0
            frames.append(part)
    if not frames:
        return CSSRows(pd.DataFrame(), skipped, warnings=warnings)
    verdicts = pd.concat(frames, ignore_index=True)
    if "invariance_attribute" not in verdicts.columns:  # logs from before issue 47, or no invariance control run
        verdicts["invariance_attribute"] = None
    logs_read = {str(k): sorted(map(str, v)) for k, v in verdicts.groupby("setting")["log"].unique().items()}
    verdicts["case_id"] = verdicts["case_id"].astype(str)
    verdicts["intervention_id"] = verdicts["intervention_id"].astype(str)
    verdicts["family"] = verdicts["family"].astype(str)
    # Reruns: per entry, tuple and epoch one sample wins: from a complete log first (a log that did not complete,
    # scored by --include-incomplete, never replaces a complete run), then scored and error-free, then the newest log.
    key = ENTRY + ["rejudged"] + TUPLE + ["epoch"]
    verdicts["_rank"] = verdicts["complete"] & verdicts["css"].notna()
    ordered = verdicts.sort_values(["log_complete", "_rank", "created", "log"], kind="stable")
    kept = ordered.drop_duplicates(key, keep="last")
    dropped = ordered.drop(kept.index)
    verdicts = kept.drop(columns=["_rank"]).sort_index().reset_index(drop=True)
    # Epochs reduced per tuple as each log's reducer says.
    group_keys = ENTRY + ["rejudged"] + TUPLE
    verdicts["_errored"] = verdicts["outcome"] == "error"
    verdicts["_limited"] = verdicts["outcome"] == "limit"
    grouped = verdicts.groupby(group_keys, sort=False, dropna=False)
    rows = grouped.agg(split=("split", "first"), cms=("cms", "first"), epochs=("epoch", "nunique"),
                       errored=("_errored", "sum"), limited=("_limited", "sum"),
                       log=("log", "last"), sample_id=("sample_id", "first"), task=("task", "first"),
                       reducer=("reducer", "first"), invariance_attribute=("invariance_attribute", "first")).reset_index()
    rows["css"] = _reduced(verdicts, grouped, rows)
    verdicts = verdicts.drop(columns=["_errored", "_limited"])
    rows["epoch"] = 1  # reduced: kept so per-tuple tables that pair on epoch still work
    coverage = _coverage(rows, dropped, missing_counts)
    if not dropped.empty:
        kept_logs = verdicts.groupby(ENTRY)["log"].unique()
        for entry, group in dropped.groupby(ENTRY):
            by = ", ".join(sorted(map(str, kept_logs.get(entry, []))))
            warnings.append(f"{' / '.join(map(str, entry))}: {len(group)} verdicts of {', '.join(sorted(map(str, group['log'].unique())))} "
                            f"replaced by another sample of the same tuple and epoch (complete log first, then scored, then "
                            f"newest) from {by} (label runs with --label NAME=PATH to keep both)")
    return CSSRows(rows, skipped, verdicts, coverage, warnings, logs_read)


def _coverage(rows: pd.DataFrame, dropped: pd.DataFrame, missing: dict[str, int]) -> pd.DataFrame:
    """Per entry: logs, tuples, cases (count and ids), epochs, rows a rerun replaced, samples without metadata,
    and whether the entry was measured on the same cases as the others of its judge."""
    primary = rows[~rows["rejudged"]]
    out = []
    for entry, group in primary.groupby(ENTRY, sort=True):
        # Scored tuples and their cases: a tuple every epoch of which errored, hit a limit or was unscored is not
        # a tuple the entry was measured on.
        scored = group[group["css"].notna()]
        cases = sorted(scored["case_id"].unique())
        logs = sorted(group["log"].unique())
        out.append(
            {
                **dict(zip(ENTRY, entry, strict=False)),
                "logs": len(logs),
                "tuples": len(scored),
                "unscored_tuples": len(group) - len(scored),
                "cases": len(cases),
                "case_ids": ", ".join(cases[:12]) + (f" … (+{len(cases) - 12})" if len(cases) > 12 else ""),
                "epochs": int(group["epochs"].max()),
                "rerun_rows_dropped": int(((dropped[ENTRY] == pd.Series(entry, index=ENTRY)).all(axis=1)).sum())
                if not dropped.empty
                else 0,
                "samples_without_metadata": sum(missing.get(log, 0) for log in logs),
                "samples_errored": int(group["errored"].sum()),
                "samples_at_limit": int(group["limited"].sum()),
                "_cases": frozenset(cases),
            }
        )
    table = pd.DataFrame(out)
    if table.empty:
        return table
    same = []
    for (_setting, _judge), group in table.groupby(["setting", "judge"]):
        reference = group["_cases"].value_counts().idxmax()
        same += [(i, c == reference) for i, c in group["_cases"].items()]
    table["same_cases"] = pd.Series(dict(same))
    return table.drop(columns=["_cases"])


def load_css_rows(paths: list[str] | LogRows, progress: bool = True) -> CSSRows:
    """Read CSS logs (single-shot and agent) into per-tuple rows; name and skip anything else."""
    logs = read_logs(paths, progress=progress)
    loaded = css_rows(logs.suite("css"))
    others = [(p, f"is not a CSS log (its suite is {s})") for p, s in zip(logs.logs["log"], logs.logs["suite"], strict=False) if s != "css"]
    return CSSRows(loaded.rows, logs.skipped + others + loaded.skipped, loaded.verdicts, loaded.coverage, loaded.warnings)


def _interventional(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows[~rows["rejudged"]] if "rejudged" in rows.columns else rows
    return rows[(rows["family"] != "N") & rows["css"].notna()]


def _primary(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[~rows["rejudged"]] if "rejudged" in rows.columns else rows


def _entries(rows: pd.DataFrame) -> list[str]:
    return [c for c in ENTRY if c in rows.columns and c != "setting"]


SMALL_CASES = 5
"""Fewer cases than this: a case-clustered interval rests on too few clusters to mean much."""


def interval_flags(table: pd.DataFrame, low: str, high: str) -> pd.Series:
    """Per row: 'small sample' (fewer than SMALL_CASES cases), 'degenerate interval' (low == high: every
    resample gave one value), or empty."""
    def flag(row) -> str:
        out = []
        if row.get("cases", SMALL_CASES) < SMALL_CASES:
            out.append(f"small sample ({int(row['cases'])} cases)")
        if pd.notna(row[low]) and row[low] == row[high]:
            out.append("degenerate interval")
        return "; ".join(out)

    return table.apply(flag, axis=1) if not table.empty else pd.Series(dtype=object)


def _within_judge_ranks(table: pd.DataFrame, col: str) -> pd.Series:
    """Ranks (1 = best) among the entries scored by the same judge: a judge's scale is its own."""
    if "judge" not in table.columns:
        return ranks(table[col])
    out = pd.Series(np.nan, index=table.index)
    for _, group in table.groupby("judge"):
        out.loc[group.index] = np.asarray(ranks(group[col]), dtype=float)
    return out


def table_cms_css(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Table 2: CMS and CSS per model, judge and run with ranks within each judge, and the rank correlation between them."""
    out = []
    keys = _entries(rows)
    for entry, group in _primary(rows).groupby(keys):
        scored = _interventional(group)
        # CMS on the cases the row's CSS was scored on, so both numbers of a row rest on the same cases.
        on_cases = group[group["case_id"].isin(set(scored["case_id"]))]
        cms = on_cases.dropna(subset=["cms"]).groupby("case_id")["cms"].first().mean()
        low, high = cluster_bootstrap_ci(scored["css"], scored["case_id"]) if len(scored) else (np.nan, np.nan)
        out.append({**dict(zip(keys, entry, strict=False)), "cms": cms, "css": scored["css"].mean() if len(scored) else np.nan,
                    "css_ci_low": low, "css_ci_high": high, "tuples": len(scored), "cases": scored["case_id"].nunique()})
    table = pd.DataFrame(out)
    table["cms_rank"] = _within_judge_ranks(table, "cms")
    table["css_rank"] = _within_judge_ranks(table, "css")
    table["flags"] = interval_flags(table, "css_ci_low", "css_ci_high")
    notes = []
    for judge, group in table.groupby("judge") if "judge" in table.columns else [("", table)]:
        by = f" (judge {judge})" if judge else ""
        try:
            rc = rank_correlation(group["cms"], group["css"])
            notes.append(
                f"Spearman rho{by} = {rc.rho:+.2f} ({rc.p_text}; "
                f"tied values share their average rank), Kendall tau-b = {rc.tau:+.2f} (p = {rc.p_tau:.3f}), n = {rc.n} models."
            )
        except ValueError as ex:
            notes.append(
                f"Rank correlation between CMS and CSS not computed: {ex} ({by.strip(' ()') + ', ' if by else ''}models: {len(group)})."
            )
    sort = [c for c in ("judge", "css_rank") if c in table.columns]
    return table.sort_values(sort), " ".join(notes)


def table_families(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3: CSS per model, judge, run and family with 95% CIs clustered by case, and the winner per family and judge.

    A family's winner is the one entry with the strictly highest CSS among its judge's entries; none
    when entries tie at the top (a tie at zero wins nothing) or when only one entry was measured.
    """
    out = []
    keys = _entries(rows)
    for entry, group in _primary(rows)[lambda r: r["css"].notna()].groupby(keys + ["family"]):
        low, high = cluster_bootstrap_ci(group["css"], group["case_id"])
        out.append({"family": entry[-1], **dict(zip(keys, entry[:-1], strict=False)), "css": group["css"].mean(), "ci_low": low,
                    "ci_high": high, "tuples": len(group), "cases": group["case_id"].nunique()})
    table = pd.DataFrame(out)
    if not table.empty:
        by = ["family", "judge"] if "judge" in table.columns else ["family"]
        best = table.groupby(by)["css"].transform("max")
        at_top = (table["css"] == best).groupby([table[c] for c in by]).transform("sum")
        entries = table.groupby(by)["css"].transform("size")
        table["winner"] = (table["css"] == best) & (at_top == 1) & (entries > 1)
        table["flags"] = interval_flags(table, "ci_low", "ci_high")
    return table


def table_verdicts(rows: pd.DataFrame, verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 4: shares of wrong (0), partial (0.5) and correct (1) verdicts over A-E, with case-clustered 95% CIs.

    Shares are over the judge's verdicts (every epoch, reruns deduplicated): a reduced mean is not a verdict.
    `tuples` counts distinct tuples, `verdicts` the verdicts behind the shares.
    """
    source = verdicts if verdicts is not None and not verdicts.empty else rows
    out = []
    keys = _entries(source)
    for entry, group in _interventional(source).groupby(keys):
        row: dict[str, object] = dict(zip(keys, entry if isinstance(entry, tuple) else (entry,), strict=False))
        for name, value in (("wrong", 0.0), ("partial", 0.5), ("correct", 1.0)):
            hits = (group["css"] == value).astype(float)
            low, high = cluster_bootstrap_ci(hits, group["case_id"])
            row |= {name: hits.mean(), f"{name}_ci": f"{low:.2f}-{high:.2f}"}
        row["tuples"] = int(group[TUPLE].drop_duplicates().shape[0])
        row["verdicts"] = len(group)
        out.append(row)
    return pd.DataFrame(out)


def table_cross_judge(rows: pd.DataFrame, verdicts: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str]:
    """Cross-judge replication: every pair of judges that scored the same model and run on the same tuples.

    The judges come from logs of one model run with different judges (a sweep) or from re-judgings
    appended to one log (`same_replies` = True: both judges read the same replies; False: each judge
    read its own run's replies, so generation noise is part of the disagreement). Agreement and kappa
    are over verdicts paired by tuple and epoch; the CSS columns are each judge's reduced CSS.
    """
    source = verdicts if verdicts is not None and not verdicts.empty else rows
    scored = source[(source["family"] != "N") & source["css"].notna()]
    reduced = rows[(rows["family"] != "N") & rows["css"].notna()]
    out = []
    for (model, run), group in scored.groupby(["model", "run"]):
        # Each log's own judges first, then re-judgings; by name within each, so every model's pair reads the same way.
        order = group.sort_values(["rejudged", "judge"])["judge"].drop_duplicates().tolist()
        if len(order) < 2:
            continue
        for i, first in enumerate(order):
            for second in order[i + 1:]:
                a = group[group["judge"] == first]
                b = group[group["judge"] == second]
                both = a.merge(b, on=TUPLE + ["epoch"], suffixes=("_1", "_2"))
                if both.empty:
                    continue
                ra = reduced[(reduced["model"] == model) & (reduced["run"] == run) & (reduced["judge"] == first)]
                rb = reduced[(reduced["model"] == model) & (reduced["run"] == run) & (reduced["judge"] == second)]
                paired = ra.merge(rb, on=TUPLE, suffixes=("_1", "_2"))
                out.append({
                    "model": model, "run": run, "judge_1": first, "judge_2": second,
                    "same_replies": bool((both["log_1"] == both["log_2"]).all()),
                    "agreement": float((both["css_1"] == both["css_2"]).mean()),
                    # Undefined (NaN) when both judges give one verdict throughout: no chance baseline.
                    "kappa": verdict_kappa(both["css_1"], both["css_2"]),
                    "kappa_linear": verdict_kappa(both["css_1"], both["css_2"], weighted=True),
                    "css_judge_1": paired["css_1"].mean(), "css_judge_2": paired["css_2"].mean(),
                    "shift": paired["css_2"].mean() - paired["css_1"].mean(),
                    "tuples": len(paired), "verdicts": len(both),
                })
    table = pd.DataFrame(out)
    if table.empty:
        return table, ("No model was scored by two judges: run the sweep with a second judge (one log per judge) "
                       "or re-judge a log with `inspect score ... --action append`.")
    notes = []
    for (first, second), group in table.groupby(["judge_1", "judge_2"]):
        try:
            rc = rank_correlation(group["css_judge_1"], group["css_judge_2"])
            notes.append(f"Rank preservation between judges ({first} vs {second}): Spearman rho = {rc.rho:+.2f} "
                         f"({rc.p_text}), n = {rc.n}.")
        except ValueError as ex:
            notes.append(f"Rank preservation between judges not computed: {ex} ({first} vs {second}, models: {len(group)}).")
    return table, " ".join(notes)


def sensitivity_rows(paths: list[str] | LogRows | pd.DataFrame) -> pd.DataFrame:
    """Per-pair rows from sensitivity logs (scorer `direction_consistency`); unscored pairs are left out."""
    rows = []
    for sample in sample_views(suite_samples(paths, "sensitivity")):
        score = sample.scores.get("direction_consistency")
        if score is None or not isinstance(score.value, (int, float)) or score.value != score.value:
            continue
        meta = score.metadata or {}
        rows.append({"model": sample.model, "type": meta.get("type"), "vignette_id": sample.metadata.get("vignette_id"),
                     "attribute": sample.metadata.get("invariance_attribute"),
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


def table_sensitivity_invariance(rows: pd.DataFrame, margin: float = 0.05) -> pd.DataFrame:
    """Sensitivity invariance changes (issue 47) per model and attribute: the share of pairs that broke invariance
    (moved the gold beyond the surface tolerance or flipped the top candidate), its 90% vignette-clustered interval,
    equivalence (TOST) at `margin`, and the vignettes where the answer moved."""
    if rows.empty or "attribute" not in rows.columns or rows["attribute"].isna().all():
        return pd.DataFrame()
    out = []
    for (model, attribute), group in rows.dropna(subset=["attribute"]).groupby(["model", "attribute"]):
        moved = 1 - group["consistent"]
        low, high, passed = equivalence_upper(moved, group["vignette_id"], margin)
        names = sorted(group.loc[group["consistent"] < 1, "vignette_id"].unique())
        out.append({"model": model, "attribute": attribute, "moved_share": moved.mean(), "ci90_low": low, "ci90_high": high,
                    "margin": margin, "equivalent": passed, "flip_rate": group["flip"].mean(), "pairs": len(group),
                    "vignettes_moved": len(names), "moved_vignettes": ", ".join(names[:MOVED_CASES_SHOWN])
                    + (f", ... (+{len(names) - MOVED_CASES_SHOWN})" if len(names) > MOVED_CASES_SHOWN else "")})
    return pd.DataFrame(out)


CONTROL_MOVEMENT = "movement (1 - judge score)"
"""The controls' movement column, named for what it is: the judge scores a control 1 when the recommendations
held, so 1 - score is how far they moved in the judge's eyes (not a distance between the lists)."""


def table_controls(rows: pd.DataFrame, margin: float = 0.05) -> pd.DataFrame:
    """Negative controls: mean movement (1 - judge score) with a 90% case-clustered interval (TOST at margin)."""
    out = []
    keys = _entries(rows)
    primary = _primary(rows)
    classic = primary["invariance_attribute"].isna() if "invariance_attribute" in primary.columns else True
    # Invariance controls (issue 47) have their own per-attribute table (`table_invariance`).
    for entry, group in primary[(primary["family"] == "N") & primary["css"].notna() & classic].groupby(keys):
        movement = 1 - group["css"]
        low, high, passed = equivalence_upper(movement, group["case_id"], margin)
        out.append({**dict(zip(keys, entry, strict=False)), CONTROL_MOVEMENT: movement.mean(), "ci90_low": low, "ci90_high": high,
                    "equivalent": passed, "verdict": "stable" if passed else "FAILS: moves on meaning-preserving edits",
                    "tuples": len(group)})
    return pd.DataFrame(out)


MOVED_CASES_SHOWN = 12
"""How many moved case ids a row of the invariance table names (the count is always given)."""


def _margin(floor: pd.DataFrame, entry: dict, default: float) -> tuple[float, str]:
    """The equivalence margin of one entry: its family N instability floor where measured and above `default`."""
    if floor.empty:
        return default, "default (no floor: run --epochs 2)"
    match = floor[(floor["family"] == "N") & np.logical_and.reduce([floor[k] == v for k, v in entry.items()])]
    if match.empty or float(match["instability"].iloc[0]) <= default:
        return default, "default"
    return float(match["instability"].iloc[0]), "instability floor"


def table_invariance(rows: pd.DataFrame, floor: pd.DataFrame | None = None, margin: float = 0.05) -> pd.DataFrame:
    """Invariance controls (issue 47) per attribute: mean movement (1 - judge score), its 90% case-clustered interval,
    equivalence (TOST) against the entry's instability floor (family N verdict changes between epochs) or `margin`
    when that is smaller or unmeasured, and the cases where the answer moved."""
    primary = _primary(rows)
    if "invariance_attribute" not in primary.columns:
        return pd.DataFrame()
    scored = primary[(primary["family"] == "N") & primary["css"].notna() & primary["invariance_attribute"].notna()]
    keys = _entries(scored)
    out = []
    for entry, group in scored.groupby(keys + ["invariance_attribute"]):
        fields = dict(zip(keys, entry[:-1], strict=False))
        used, source = _margin(floor if floor is not None else pd.DataFrame(), fields, margin)
        movement = 1 - group["css"]
        low, high, passed = equivalence_upper(movement, group["case_id"], used)
        moved = sorted(group.loc[group["css"] < 1, "case_id"].unique())
        more = len(moved) - MOVED_CASES_SHOWN
        shown = ", ".join(moved[:MOVED_CASES_SHOWN]) + (f", ... (+{more})" if more > 0 else "")
        out.append({**fields, "attribute": entry[-1], "movement": movement.mean(), "ci90_low": low, "ci90_high": high,
                    "margin": used, "margin_from": source, "equivalent": passed,
                    "verdict": "invariant" if passed else "FAILS: the answer moves with this attribute",
                    "tuples": len(group), "cases_moved": len(moved), "moved_cases": shown})
    return pd.DataFrame(out)


def table_instability(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Instability floor: how often the verdict differs between epochs of the same tuple (fresh generations),
    per model, judge, run and family; reruns are deduplicated first, so two runs never count as epochs."""
    scored = _primary(verdicts).dropna(subset=["css"]) if not verdicts.empty else verdicts
    if scored.empty or scored["epoch"].nunique() < 2:
        return pd.DataFrame()
    out = []
    keys = _entries(scored)
    for entry, group in scored.groupby(keys + ["family"]):
        by_tuple = group.groupby(TUPLE)["css"]
        multi = by_tuple.nunique()[by_tuple.size() >= 2]
        if len(multi):
            out.append({**dict(zip(keys, entry[:-1], strict=False)), "family": entry[-1], "instability": float((multi > 1).mean()),
                        "samples": len(multi)})
    return pd.DataFrame(out)


def table_paired(rows: pd.DataFrame, delta: float = 0.05) -> pd.DataFrame:
    """Every pair of entries scored by the same judge, on the tuples both scored, per family: paired difference,
    CI, McNemar, Holm, power. Entries are models (and run labels, when runs are labelled)."""

    scored = _interventional(rows)
    out = []
    for judge, by_judge in scored.groupby("judge") if "judge" in scored.columns else [(None, scored)]:
        entries = sorted(by_judge[["model", "run"]].drop_duplicates().itertuples(index=False, name=None)) \
            if "run" in by_judge.columns else [(m, "") for m in sorted(by_judge["model"].unique())]
        for (a, run_a), (b, run_b) in combinations(entries, 2):
            side_a = by_judge[(by_judge["model"] == a) & (by_judge.get("run", "") == run_a)]
            side_b = by_judge[(by_judge["model"] == b) & (by_judge.get("run", "") == run_b)]
            both = side_a[TUPLE + ["css"]].merge(side_b[TUPLE + ["css"]], on=TUPLE, suffixes=("_a", "_b"))
            family_rows = []
            for family, group in both.groupby("family"):
                mean, low, high = paired_difference(group["css_a"], group["css_b"], group["case_id"])
                only_a = int(((group["css_a"] == 1) & (group["css_b"] < 1)).sum())
                only_b = int(((group["css_b"] == 1) & (group["css_a"] < 1)).sum())
                sd = float((group["css_a"] - group["css_b"]).std(ddof=1)) if len(group) > 1 else float("nan")
                family_rows.append({"judge": judge, "model_a": a, "run_a": run_a, "model_b": b, "run_b": run_b,
                                    "family": family, "difference": mean, "ci_low": low, "ci_high": high,
                                    "mcnemar_p": mcnemar_exact(only_a, only_b), "tuples": len(group),
                                    "tuples_for_80pct_power": tuples_for_power(sd, delta) if sd > 0 else None})
            for row, adjusted in zip(family_rows, holm([r["mcnemar_p"] for r in family_rows]) if family_rows else [], strict=False):
                row["holm_p"] = adjusted
            out += family_rows
    return pd.DataFrame(out)


def export_rewards(paths: list[str] | LogRows, file: str | Path) -> int:
    """Per-tuple reward records as JSONL; returns how many were written.

    One record per scored CSS sample: task, model, case, intervention, family, the SHA-256 of
    the prompt the model saw, the counterfactual output (read with `store_as(CSSArms)`), the CSS
    score and the judge. Read as a dense reward for RL: 1 = the output moved as the pre-registered
    change says. Each CSS log is read in full (transcript excluded), one at a time.
    """

    rows = paths if isinstance(paths, LogRows) else read_logs(paths, suites=["css"], mode="summaries")
    written = 0
    with open(file, "w", encoding="utf-8") as handle:
        for path in rows.suite_logs("css")["log"]:
            log = read_eval_log(path, exclude_fields=set(EXCLUDED_FIELDS))
            for sample in log.samples or []:
                scores, meta = sample.scores or {}, sample.metadata or {}
                name = next((n for n in JUDGE_SCORES if n in scores), None)
                if name is None or meta.get("family") is None:
                    continue
                value = scores[name].value
                if not isinstance(value, (int, float)) or value != value:  # unscored (NaN)
                    continue
                arms = sample.store_as(CSSArms)
                record = {
                    "task": log.eval.task,
                    "model": log.eval.model,
                    "case_id": meta.get("case_id"),
                    "intervention_id": meta.get("intervention_id"),
                    "family": meta.get("family"),
                    "prompt_sha256": hashlib.sha256(
                        input_text(
                            sample.input if isinstance(sample.input, str) else [{"role": m.role, "text": m.text} for m in sample.input]
                        ).encode()
                    ).hexdigest(),
                    "output": arms.counterfactual.raw if arms.counterfactual else None,
                    "css": float(value),
                    "judge": (scores[name].metadata or {}).get("judge_model"),
                    "log": path,
                    "sample_id": sample.id,
                    "epoch": sample.epoch,
                }
                handle.write(json.dumps(record) + "\n")
                written += 1
            del log
    return written


def regression_gate(paths: list[str] | LogRows, baseline: list[str] | LogRows, margin: float = 0.05) -> tuple[pd.DataFrame, bool]:
    """Compare each model in `paths` with the baseline logs' one model on the same tuples and judge, per family.

    A family fails when the new model's CSS is lower by more than `margin` and the paired
    difference is significant (case-clustered 95% interval entirely below zero). Returns the
    table and whether every family passed. A baseline holding several models, one sharing no
    tuple (and judge) with the candidate, or a margin outside 0 to 1 (or not finite) is a `CatalogError`.
    """

    if not isinstance(margin, (int, float)) or not math.isfinite(margin) or not 0 <= margin <= 1:
        # CSS lies in [0, 1]: a larger margin would pass every candidate (the CLI's --margin has the same range).
        raise CatalogError("--margin", f"must be a finite number from 0 to 1 (got {margin!r})")
    new = css_rows(suite_samples(paths, "css")).rows
    base_read = baseline if isinstance(baseline, LogRows) else read_logs(baseline, suites=["css"], strict=True)
    base = css_rows(base_read.suite("css")).rows
    where = ", ".join(map(str, baseline)) if not isinstance(baseline, LogRows) else "the baseline"
    if new.empty:
        raise CatalogError("(report logs)", "the gate needs CSS logs to test; none was usable")
    if base.empty:
        raise CatalogError(where, "the gate's baseline holds no usable CSS log")
    base = _interventional(base)
    models = sorted(base["model"].unique())
    if len(models) != 1:
        raise CatalogError(where, f"the gate's baseline must hold one model; it holds {len(models)}: {', '.join(models)}")
    keys = TUPLE + ["judge"]
    out = []
    base_judges = set(base["judge"].unique())
    for (model, run), group in _interventional(new).groupby(["model", "run"]):
        both = group[keys + ["css"]].merge(base[keys + ["css"]], on=keys, suffixes=("_new", "_base"))
        if both.empty:
            judges = f"judges {sorted(group['judge'].unique())} vs {sorted(base['judge'].unique())}"
            raise CatalogError(where, f"shares no (case, intervention, judge) tuple with {model}"
                                      f"{f' run {run}' if run else ''} ({judges}); nothing to gate on")
        for (family, judge), fam in both.groupby(["family", "judge"]):
            mean, low, high = paired_difference(fam["css_new"], fam["css_base"], fam["case_id"])
            failed = bool(mean < -margin and high < 0)
            out.append({"model": model, "judge": judge, "run": run, "baseline_model": models[0], "baseline_judge": judge,
                        "family": family, "gated": True, "difference": mean, "ci_low": low, "ci_high": high,
                        "tuples": len(fam), "failed": failed,
                        "why": f"CSS lower by {-mean:.3f} (> {margin}) and the 95% interval excludes 0" if failed else ""})
        # A judge of the candidate the baseline was not scored by is not gated: said, never skipped in silence.
        for judge in sorted(set(group["judge"].unique()) - base_judges):
            out.append({"model": model, "judge": judge, "run": run, "baseline_model": models[0], "baseline_judge": "",
                        "family": "", "gated": False, "difference": float("nan"), "ci_low": float("nan"),
                        "ci_high": float("nan"), "tuples": 0, "failed": False,
                        "why": f"not gated: the baseline has no verdicts of judge {judge} "
                               f"(its judges: {', '.join(sorted(base_judges))})"})
    table = pd.DataFrame(out)
    return table, bool(table.empty or not table["failed"].any())


def gate_lines(table: pd.DataFrame) -> list[str]:
    """One terminal line per candidate entry and family, naming the model, judge, run and the baseline it is compared with."""
    lines = []
    for row in table.itertuples():
        who = f"{row.model} (judge {row.judge}{f', run {row.run}' if row.run else ''})"
        if not row.gated:
            lines.append(f"GATE NOT APPLIED: {who}: {row.why}")
            continue
        against = f"baseline {row.baseline_model} (judge {row.baseline_judge})"
        verdict = f"FAILED: {row.why}" if row.failed else "passed"
        lines.append(f"gate {verdict.split(':')[0].lower()}: {who} vs {against}, family {row.family}: "
                     f"difference {row.difference:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}] over {row.tuples} tuples"
                     + (f"; {row.why}" if row.failed else ""))
    return lines


def confirmatory(rows: pd.DataFrame, predictions_path: str | Path, alpha: float = 0.05, seed: int = 0) -> pd.DataFrame:
    """Test the pre-registered predictions per model on the test split, BH-adjusted across predictions.

    The one-sided p-value is the share of case-level bootstrap resamples (2,000, seeded) whose
    family mean falls on the wrong side of the threshold.
    """

    # Only the published predictions are tested: a threshold re-locked after release matches its
    # lock but not the published hash, and is refused here (CatalogError naming the file).
    checked = confirmatory_predictions(predictions_path)
    predictions = [p.model_dump() for p in checked.predictions]
    test = _primary(rows)
    test = test[(test["split"] == "test") & test["css"].notna()]
    out = []
    keys = _entries(test)
    for entry, group in test.groupby(keys):
        for pred in predictions:
            fam = group[group["family"] == pred["family"]]
            if fam.empty:
                continue
            # Cases indexed in order of appearance: the draws the per-resample loop made, so seeds keep their verdicts.
            means = cluster_resample_means(fam["css"], fam["case_id"], 2000, seed, cluster_order="appearance")
            wrong = means >= pred["threshold"] if pred["direction"] == "below" else means <= pred["threshold"]
            low, high = np.quantile(means, [0.025, 0.975])
            out.append(
                {
                    **dict(zip(keys, entry, strict=False)),
                    "prediction": pred["id"],
                    "statement": pred["statement"],
                    "family": pred["family"],
                    "css": fam["css"].mean(),
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "tuples": len(fam),
                    "p": max(float(wrong.mean()), 1 / 2000),
                }
            )
    table = pd.DataFrame(out)
    if table.empty:
        return table

    table["p_bh"] = false_discovery_control(table["p"].to_numpy(), method="bh")
    table["verdict"] = np.where(table["p_bh"] < alpha, "supported", "not supported")
    return annotate_verdicts(table, checked)
