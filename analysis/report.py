"""The CSS comparison report over many logs: the paper's Tables 2-4 and cross-judge replication.

    clinical-cf report LOGS_OR_DIRS... --out DIR

Reads Inspect logs through `inspect_ai.analysis`, one log at a time so that a log it cannot use
is named with the reason and skipped. Writes `report.md` and one CSV per table. Every number is
computed from per-tuple rows that keep their log path and sample id.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from inspect_ai.analysis import EvalInfo, EvalModel, EvalTask, SampleSummary, samples_df
from inspect_ai.log import list_eval_logs

from clinical_cf.analysis.stats import (
    cluster_bootstrap_ci,
    cluster_resample_means,
    equivalence_upper,
    holm,
    mcnemar_exact,
    models_for_rank_test,
    paired_difference,
    rank_correlation,
    ranks,
    tuples_for_power,
    verdict_kappa,
)
from clinical_cf.analysis.tables import markdown_table

JUDGE_SCORES = ("judge_direction", "agent_judge_direction")
COLUMNS = {
    "model": "model",
    "task_name": "task",
    "log": "log",
    "id": "sample_id",
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


def _log_paths(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if Path(p).is_dir():
            out += [info.name.removeprefix("file://") for info in list_eval_logs(p)]
        else:
            out.append(p)
    return out


def load_css_rows(paths: list[str], progress: bool = True) -> CSSRows:
    """Read CSS logs (single-shot and agent) into per-tuple rows; name and skip anything else."""
    frames: list[pd.DataFrame] = []
    skipped: list[tuple[str, str]] = []
    files = _log_paths(paths)
    for i, path in enumerate(files, start=1):
        if progress and len(files) > 5:
            print(f"reading log {i}/{len(files)}", file=sys.stderr)
        try:
            frame = samples_df(path, columns=SampleSummary + EvalModel + EvalInfo + EvalTask, quiet=True)
        except Exception as ex:  # a corrupt or unreadable log must not stop the report
            skipped.append((path, f"cannot be read: {type(ex).__name__}: {ex}"))
            continue
        judge_cols = sorted(c for c in frame.columns if c.removeprefix("score_").rstrip("0123456789") in JUDGE_SCORES)
        if frame.empty:
            skipped.append((path, "has no samples"))
            continue
        if "metadata_family" not in frame.columns or not judge_cols:
            skipped.append((path, "is not a CSS log (no family metadata or CSS judge score)"))
            continue
        rows = frame[[c for c in COLUMNS if c in frame.columns]].rename(columns=COLUMNS)
        # The first judge score is the original; later ones (…1, …2) come from `inspect score --action append`.
        for k, col in enumerate(judge_cols):
            rows[f"css_{k}"] = pd.to_numeric(frame[col], errors="coerce")
        rows["css"] = rows["css_0"]
        rows["cms"] = pd.to_numeric(frame.get("score_cms"), errors="coerce")
        rows["setting"] = np.where(rows["task"].str.contains("agent"), "agent", "single_shot")
        frames.append(rows)
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return CSSRows(rows, skipped)


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


def logs_by_suite(paths: list[str]) -> dict[str, list[str]]:
    """Route logs to their suite's reader by the `suite` each task records, reading headers only."""
    from inspect_ai.log import read_eval_log

    routed: dict[str, list[str]] = {}
    for path in paths:
        try:
            suite = (read_eval_log(path, header_only=True).eval.metadata or {}).get("suite")
        except Exception:  # noqa: BLE001 - an unreadable log is listed as skipped by the caller
            continue
        routed.setdefault(str(suite), []).append(path)
    return routed


def sensitivity_rows(paths: list[str]) -> pd.DataFrame:
    """Per-pair rows from sensitivity logs (scorer `direction_consistency`); other logs are ignored here."""
    from inspect_ai.log import read_eval_log

    rows = []
    for path in paths:
        try:
            log = read_eval_log(path)
        except Exception:
            continue
        for sample in log.samples or []:
            score = (sample.scores or {}).get("direction_consistency")
            if score is None or not isinstance(score.value, (int, float)) or score.value != score.value:
                continue
            meta = score.metadata or {}
            rows.append({"model": log.eval.model, "type": meta.get("type"), "vignette_id": sample.metadata.get("vignette_id"),
                         "consistent": float(score.value), "flip": float(meta.get("flip", False)), "js": meta.get("js"),
                         "relative": meta.get("relative"), "entropy_change": meta.get("entropy_change"), "log": path})
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


Block = tuple[str, object]
"""("h1" | "h2" | "h3" | "p" | "list", text or items), ("table", DataFrame) or ("img", Path)."""


def _render_md(blocks: list[Block], out: Path) -> str:
    lines: list[str] = []
    for kind, value in blocks:
        if kind in ("h1", "h2", "h3"):
            lines += ["#" * int(kind[1]) + f" {value}", ""]
        elif kind == "p":
            lines += [str(value), ""]
        elif kind == "list":
            lines += [f"- {item}" for item in value] + [""]  # type: ignore[union-attr]
        elif kind == "table":
            lines += [markdown_table(value), ""]  # type: ignore[arg-type]
        elif kind == "img":
            path = Path(value)  # type: ignore[arg-type]
            lines += [f"![{path.stem}]({path.relative_to(out)})", ""]
    return "\n".join(lines)


def _render_html(blocks: list[Block]) -> str:
    """One self-contained page: tables inline, figures embedded as data URIs, no scripts or network."""
    import base64
    import html

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>CSS comparison report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}"
        "th{background:#f3f3f3}img{max-width:100%}</style></head><body>",
    ]
    for kind, value in blocks:
        if kind in ("h1", "h2", "h3"):
            parts.append(f"<{kind}>{html.escape(str(value))}</{kind}>")
        elif kind == "p":
            parts.append(f"<p>{html.escape(str(value))}</p>")
        elif kind == "list":
            parts.append("<ul>" + "".join(f"<li>{html.escape(str(i))}</li>" for i in value) + "</ul>")  # type: ignore[union-attr]
        elif kind == "table":
            table: pd.DataFrame = value  # type: ignore[assignment]
            parts.append("<p>(no rows)</p>" if table.empty else table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep=""))
        elif kind == "img":
            data = base64.b64encode(Path(value).read_bytes()).decode()  # type: ignore[arg-type]
            parts.append(f"<img alt='{Path(value).stem}' src='data:image/png;base64,{data}'>")  # type: ignore[arg-type]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(paths: list[str], out_dir: str | Path, predictions: str | Path | None = None) -> Path:
    """Write report.md, a self-contained report.html, the figures as PNG and the tables as CSV.

    With `predictions`, adds the confirmatory section: pre-registered predictions tested on the
    test split; every other number in the report is then labelled exploratory.
    """
    from clinical_cf.analysis import figures
    from clinical_cf.analysis.css import agent_lift
    from clinical_cf.analysis.medpic import dimension_accuracy, medpic_rows, table_medpic
    from clinical_cf.analysis.workflow import accuracy_by as workflow_accuracy_by
    from clinical_cf.analysis.workflow import paired_tests as workflow_paired_tests
    from clinical_cf.analysis.workflow import select_split as select_workflow_split
    from clinical_cf.analysis.workflow import summary_table as workflow_summary
    from clinical_cf.analysis.workflow import workflow_rows

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    loaded = load_css_rows(paths)
    by_suite = logs_by_suite([p for p, why in loaded.skipped if why.startswith("is not a CSS log")])
    sens = sensitivity_rows(by_suite.get("sensitivity", []))
    med = medpic_rows(by_suite.get("medpic", []))
    flow = workflow_rows(by_suite.get("workflow", []))
    suite_logs = {str(p) for rows in (sens, med, flow) if not rows.empty for p in rows["log"]}
    skipped = [(p, why) for p, why in loaded.skipped if str(p) not in suite_logs]
    blocks: list[Block] = [("h1", "Comparison report")]
    if skipped:
        blocks += [("h2", "Skipped logs"), ("list", [f"{p}: {why}" for p, why in skipped])]
    if loaded.rows.empty and sens.empty and med.empty and flow.empty:
        blocks.append(("p", "No usable CSS, sensitivity, MedPIC or workflow logs."))
    if not med.empty:
        medpic_table = table_medpic(med)
        medpic_table.to_csv(out / "medpic.csv", index=False)
        by_info = dimension_accuracy(med, "patient_info_type", kind="cf")
        by_info.to_csv(out / "medpic_cf_by_patient_info.csv", index=False)
        blocks += [("h2", "MedPIC suite"),
                   ("p", "Exact-set accuracy in %, 95% CIs from a rule-clustered bootstrap (2,000 resamples, seed 0); "
                         "pair accuracy counts complete pairs with both members correct."),
                   ("table", medpic_table),
                   ("h3", "CF accuracy by patient-information type"),
                   ("table", by_info)]
    if not flow.empty:
        tested = select_workflow_split(flow, "test")
        flow_summary = workflow_summary(tested)
        flow_variants = workflow_accuracy_by(tested, "variant")
        flow_paired = workflow_paired_tests(tested)
        for name, table in (("workflow_summary", flow_summary), ("workflow_by_variant", flow_variants),
                            ("workflow_paired", flow_paired)):
            table.to_csv(out / f"{name}.csv", index=False)
        blocks += [("h2", "Workflow escalation suite (test split)"),
                   ("p", "Per model and condition: decision accuracy, utility at 5:1 and 10:1, missed and unnecessary "
                         "escalation, ECE (10 bins) and failure AUROC; 95% CIs resample seeds."),
                   ("table", flow_summary),
                   ("h3", "Accuracy by variant"),
                   ("table", flow_variants),
                   ("h3", "Clean vs perturbed, paired by seed (exact sign test, Holm-corrected)"),
                   ("table", flow_paired)]
    if not sens.empty:
        profile = table_sensitivity(sens)
        profile.to_csv(out / "sensitivity_profile.csv", index=False)
        blocks += [("h2", "Sensitivity suite"),
                   ("p", "Direction consistency per perturbation type (95% CIs clustered by vignette), flip rate, mean JS divergence (bits), relative change of the gold and entropy change."),
                   ("table", profile)]
    settings = {} if loaded.rows.empty else dict(tuple(loaded.rows.groupby("setting")))
    for setting, rows in settings.items():
        t2, t2_note = table_cms_css(rows)
        t3 = table_families(rows)
        floor = table_instability(rows)
        if not floor.empty and not t3.empty:
            # Every effect next to its noise floor.
            t3 = t3.merge(floor[["model", "family", "instability"]], on=["model", "family"], how="left")
        t4 = table_verdicts(rows)
        cj, cj_note = table_cross_judge(rows)
        for name, table in (("cms_css", t2), ("families", t3), ("verdicts", t4), ("cross_judge", cj)):
            table.to_csv(out / f"{setting}_{name}.csv", index=False)
        blocks += [
            ("h2", f"{setting.replace('_', '-')} setting"),
            ("p", f"Logs: {rows['log'].nunique()}, models: {rows['model'].nunique()}, tuples: {len(rows)} "
                  f"(unscored: {int(rows['css'].isna().sum())})."),
            ("h3", "CMS and CSS (Table 2)"),
            ("table", t2),
            ("p", t2_note),
        ]
        if len(t2) >= 2:
            blocks.append(("img", figures.rank_disagreement(t2, out / f"{setting}_figure1_rank_disagreement.png")))
        blocks += [
            ("h3", "CSS by family (Table 3; 95% CIs from a case-clustered bootstrap, 2,000 resamples, seed 0; N = negative controls)"),
            ("table", t3),
        ]
        if not t3.empty:
            blocks.append(("img", figures.family_small_multiples(t3, out / f"{setting}_figure2_families.png")))
        controls = table_controls(rows)
        paired = table_paired(rows)
        for name, table in (("controls", controls), ("instability", floor), ("paired", paired)):
            table.to_csv(out / f"{setting}_{name}.csv", index=False)
        blocks += [
            ("h3", "Verdict shares (Table 4)"),
            ("table", t4),
            ("h3", "Cross-judge replication"),
            *([("table", cj)] if not cj.empty else []),
            ("p", cj_note),
            ("h3", "Negative controls (equivalence: 90% case-clustered interval of movement inside +/-0.05)"),
            ("table", controls),
            ("h3", "Instability floor (verdict changes between epochs of the same sample)"),
            ("table", floor) if not floor.empty else ("p", "Not measured: run with --epochs 2 (fresh generations per epoch) to get the noise floor each effect should be read against."),
            ("h3", "Paired model comparisons (difference = model_a - model_b; McNemar on 'correct' discordance; Holm across families)"),
            ("table", paired),
        ]
        try:
            rho = rank_correlation(t2["cms"], t2["css"]).rho
            needed = models_for_rank_test(rho)
            blocks.append(("p", f"Power: the CMS-CSS rank test reaches p < 0.05 for a correlation this strong with "
                                f"{needed if needed else 'more than 9'} models (exact test)."))
        except ValueError:
            pass
    if predictions is not None and not loaded.rows.empty:
        conf = confirmatory(loaded.rows, predictions)
        conf.to_csv(out / "confirmatory.csv", index=False)
        blocks[1:1] = [
            ("h2", "Confirmatory results (test split only)"),
            ("p", "Pre-registered predictions, one-sided case-level bootstrap p, Benjamini-Hochberg across predictions. "
                  "Everything below this section, dev split included, is exploratory."),
            ("table", conf),
            *[("p", f"{r.model} / {r.prediction}: {r.verdict} ({r.statement})") for r in conf.itertuples()],
        ]
    if {"single_shot", "agent"} <= set(settings):
        lift = agent_lift(settings["single_shot"], settings["agent"])
        lift.to_csv(out / "agent_lift.csv", index=False)
        blocks += [
            ("h2", "Single-shot vs agent (Figure 3)"),
            ("p", "CSS on the tuples both settings scored, per model and family; lift = agent - single-shot."),
            ("table", lift),
        ]
        if "D" in set(lift["family"]):
            blocks.append(("img", figures.agent_lift(lift, out / "figure3_agent_lift.png")))
    if not loaded.rows.empty:
        from clinical_cf.analysis.side_by_side import write_side_by_side

        write_side_by_side(paths, out / "side_by_side.html")
        blocks.append(("p", "Per-tuple outputs of every model side by side: side_by_side.html (self-contained, filterable)."))
    (out / "report.html").write_text(_render_html(blocks), encoding="utf-8")
    report = out / "report.md"
    report.write_text(_render_md(blocks, out), encoding="utf-8")
    return report


def export_rewards(paths: list[str], file: str | Path) -> int:
    """Per-tuple reward records as JSONL; returns how many were written.

    One record per scored CSS sample: task, model, case, intervention, family, the SHA-256 of
    the prompt the model saw, the counterfactual output, the CSS score and the judge. Read
    as a dense reward for RL: 1 = the output moved as the pre-registered change says.
    """
    import hashlib
    import json

    from inspect_ai.log import read_eval_log

    written = 0
    with open(file, "w", encoding="utf-8") as handle:
        for path in _log_paths(paths):
            try:
                log = read_eval_log(path)
            except Exception:  # the report names unreadable logs; the export skips them
                continue
            for sample in log.samples or []:
                scores = sample.scores or {}
                name = next((n for n in JUDGE_SCORES if n in scores), None)
                if name is None or sample.metadata.get("family") is None:
                    continue
                value = scores[name].value
                if not isinstance(value, (int, float)) or value != value:  # unscored (NaN)
                    continue
                record = {
                    "task": log.eval.task,
                    "model": log.eval.model,
                    "case_id": sample.metadata.get("case_id"),
                    "intervention_id": sample.metadata.get("intervention_id"),
                    "family": sample.metadata.get("family"),
                    "prompt_sha256": hashlib.sha256(_input_text(sample.input).encode()).hexdigest(),
                    "output": (sample.store or {}).get("CSSArms:counterfactual", {}).get("raw"),
                    "css": float(value),
                    "judge": (scores[name].metadata or {}).get("judge_model"),
                    "log": path,
                    "sample_id": sample.id,
                    "epoch": sample.epoch,
                }
                handle.write(json.dumps(record) + "\n")
                written += 1
    return written


def _input_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(getattr(m, "text", str(m)) for m in value)  # type: ignore[union-attr]


def regression_gate(paths: list[str], baseline: list[str], margin: float = 0.05) -> tuple[pd.DataFrame, bool]:
    """Compare each model in `paths` with the baseline logs' model on the same tuples, per family.

    A family fails when the new model's CSS is lower by more than `margin` and the paired
    difference is significant (case-clustered 95% interval entirely below zero). Returns the
    table and whether every family passed.
    """
    new = load_css_rows(paths, progress=False).rows
    base = load_css_rows(baseline, progress=False).rows
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
    from clinical_cf.catalog.css.predictions import load_predictions
    from clinical_cf.catalog.lock import check_lock

    check_lock(predictions_path)
    predictions = [p.model_dump() for p in load_predictions(predictions_path)]
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
    return table
