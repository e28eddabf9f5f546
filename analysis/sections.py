"""Report sections, one per suite of the `Suite` table (`clinical_cf.suites`).

Every suite gets a section: its own builder where one is written here (`SECTIONS`), else the one derived
from its spec (`scores_section`: each of its scorers' scores per model, judge and run, with the share
scored). Every section also gets the tables and banners every suite's has (`COMMON_TABLES`,
`COMMON_BANNERS`) and the suite's own extra ones (`report_tables`, `report_banners`); `build_report`
reads nothing itself: it gets every log's rows once from `clinical_cf.analysis.logs` and hands each
suite its own.

Adding to a suite's section is one line on its `Suite` entry:

- a table: `report_tables=(parse_quality,)` where
  `parse_quality(samples: pd.DataFrame) -> pd.DataFrame` takes the suite's per-sample rows (columns in
  `clinical_cf.analysis.logs`); the first docstring line is its heading, the CSV is
  `<suite>_parse_quality.csv`;
- a banner: `report_banners=(registration_banners,)` where
  `registration_banners(logs: pd.DataFrame, samples: pd.DataFrame) -> list[str]` takes the suite's
  per-log rows (eval metadata as `eval_<key>`) and per-sample rows; each string is shown, emphasised,
  at the top of the section.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_cf.analysis.logs import LogRows, score_columns
from clinical_cf.analysis.parse_quality import parse_table
from clinical_cf.analysis.registration import report_banners
from clinical_cf.analysis.runs import latest_run
from clinical_cf.analysis.tables import markdown_table, write_table
from clinical_cf.suites import SUITES, Suite

Block = tuple[str, Any]
"""("h1" | "h2" | "h3" | "p" | "banner" | "list", text or items), ("table", DataFrame) or ("img", Path)."""


@dataclass
class SectionContext:
    """What a section builder gets: its suite's rows and where to write its files."""

    suite: Suite
    samples: pd.DataFrame
    """One row per sample and epoch of the suite's logs (see `clinical_cf.analysis.logs`)."""
    logs: pd.DataFrame
    """One row per log of the suite: provenance and eval metadata as `eval_<key>`."""
    out: Path
    predictions: Path | None = None


@dataclass
class Section:
    blocks: list[Block] = field(default_factory=list)
    lead: list[Block] = field(default_factory=list)
    """Blocks placed at the top of the report, before everything else (confirmatory results)."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Logs of the suite the section could not use, with why."""
    warnings: list[str] = field(default_factory=list)
    """What was left out or replaced (samples without metadata, rerun rows): shown in the report and on the terminal."""


SectionBuilder = Callable[[SectionContext], Section]


def _write(table: pd.DataFrame, out: Path, name: str) -> pd.DataFrame:
    write_table(table, out / f"{name}.csv")
    return table


def build_report(rows: LogRows, out: Path, predictions: str | Path | None = None) -> Path:
    """Every registered suite's section over `rows`, then report.md and report.html in `out`."""
    from clinical_cf.analysis.html import render_report

    out.mkdir(parents=True, exist_ok=True)
    lead: list[Block] = []
    body: list[Block] = []
    skipped = list(rows.skipped)
    warnings: list[str] = []
    for suite in SUITES.values():
        samples = rows.suite(suite.name)
        if samples.empty:
            continue
        ctx = SectionContext(suite, samples, rows.suite_logs(suite.name), out, Path(predictions) if predictions else None)
        section: Section = SECTIONS.get(suite.name, scores_section)(ctx)
        skipped += section.skipped
        warnings += section.warnings
        if not section.blocks and not section.lead:
            continue
        lead += section.lead
        for banner in (*COMMON_BANNERS, *suite.report_banners):
            body += [("banner", line) for line in banner(ctx.logs, ctx.samples)]
        body += section.blocks
        for function in (*COMMON_TABLES, *suite.report_tables):
            table = function(ctx.samples)
            title = (function.__doc__ or function.__name__).strip().splitlines()[0]
            body += [("h3", title), ("table", _write(table, out, f"{suite.name}_{function.__name__}"))]
    blocks: list[Block] = [("h1", "Comparison report"), *lead]
    for line in [f"{p}: {why}" for p, why in skipped] + warnings:
        print(f"report: {line}", file=sys.stderr)  # named on the terminal too, not only inside the report
    if skipped:
        blocks += [("h2", "Skipped logs"), ("list", [f"{p}: {why}" for p, why in skipped])]
    if warnings:
        blocks += [("h2", "Left out or replaced"), ("list", warnings)]
    blocks += usage_blocks(rows, out)
    blocks += per_sample_blocks(rows, out)
    if not body:
        blocks.append(("p", "No usable " + ", ".join(SUITES) + " logs."))
    blocks += body
    (out / "report.html").write_text(render_report(blocks), encoding="utf-8")
    report = out / "report.md"
    report.write_text(render_markdown(blocks, out), encoding="utf-8")
    return report


USAGE_KEYS = ["suite", "model", "judge", "run"]


def usage_blocks(rows: LogRows, out: Path) -> list[Block]:
    """Tokens and cost per suite, model, judge and run, and per role with the model that ran it, summed over samples."""
    samples = rows.samples
    roles = sorted(c.removeprefix("tokens_") for c in samples.columns if c.startswith("tokens_"))
    if samples.empty or not roles:
        return []
    role_models = _role_models(rows.logs)
    keyed = samples.assign(judge=samples["judge"].fillna("") if "judge" in samples.columns else "",
                           run=samples["run"].fillna("") if "run" in samples.columns else "")
    records = []
    for key, group in keyed.groupby(USAGE_KEYS, sort=True):
        for role in roles:
            tokens = pd.to_numeric(group[f"tokens_{role}"], errors="coerce")
            if not tokens.notna().any():
                continue
            cost = pd.to_numeric(column_or_none(group, f"cost_{role}"), errors="coerce")
            ran = key[1] if role == "model" else \
                ", ".join(sorted({role_models.get((log, role), "") for log in group["log"].unique()} - {""}))
            records.append({**dict(zip(USAGE_KEYS, key, strict=True)), "role": role, "role_model": ran,
                            "samples": int(tokens.notna().sum()), "tokens": int(tokens.sum()),
                            # No cost is 'not reported by the provider', never zero: the cell stays blank.
                            "cost": float(cost.sum()) if cost.notna().any() else float("nan")})
    columns = ["suite", "model", "role", "role_model", "judge", "run", "samples", "tokens", "cost"]
    table = _write(pd.DataFrame(records, columns=columns), out, "usage")
    return [("h2", "Tokens and cost per suite, model, judge, run and role"),
            ("p", "Summed over samples (epochs and replaced reruns included: this is what the runs cost); `role_model` is "
                  "the model that ran the role. A cost of 'no data' (blank in usage.csv) means the provider reported none, "
                  "not zero."), ("table", table)]


def _role_models(logs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """{(log, role): model} from each log's `model_roles`."""
    out: dict[tuple[str, str], str] = {}
    if logs.empty or "model_roles" not in logs.columns:
        return out
    for log, spec in zip(logs["log"], logs["model_roles"].fillna(""), strict=True):
        for part in str(spec).split(","):
            role, sep, model = part.partition("=")
            if sep:
                out[(str(log), role)] = model
    return out


def column_or_none(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame.columns else pd.Series([None] * len(frame), index=frame.index)


SAMPLE_COLUMNS = ("suite", "log", "model", "judge", "run", "task", "sample_id", "epoch", "error")


def per_sample_blocks(rows: LogRows, out: Path) -> list[Block]:
    """Every sample's provenance, metadata scalars and score values as `samples.parquet` and `samples.csv`."""
    samples = rows.samples
    keep = [c for c in SAMPLE_COLUMNS if c in samples.columns]
    keep += [c for c in samples.columns if c.startswith("score_") and not c.endswith(("_metadata", "_explanation", "_answer"))]
    keep += [c for c in samples.columns if c.startswith("metadata_") and samples[c].map(
        lambda v: v is None or isinstance(v, (str, int, float, bool))).all()]
    table = samples[keep].copy()
    for col in table.columns:
        if table[col].dtype == object:
            table[col] = table[col].map(lambda v: None if v is None else str(v))
    write_table(table, out / "samples.csv")
    write_table(table, out / "samples.parquet", kind="parquet")
    return [("p", f"Per-sample table ({len(table)} rows, every suite): samples.parquet and samples.csv.")]


def render_markdown(blocks: list[Block], out: Path) -> str:
    lines: list[str] = []
    for kind, value in blocks:
        if kind in ("h1", "h2", "h3"):
            lines += ["#" * int(kind[1]) + f" {value}", ""]
        elif kind == "p":
            lines += [str(value), ""]
        elif kind == "banner":
            lines += [f"**{value}**", ""]
        elif kind == "list":
            lines += [f"- {item}" for item in value] + [""]
        elif kind == "table":
            lines += [markdown_table(value), ""]
        elif kind == "link":
            label, href = value
            lines += [f"[{label}]({href})", ""]
        elif kind == "img":
            path = Path(value)
            lines += [f"![{path.stem}]({path.relative_to(out)})", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ the four suites' sections


def css_section(ctx: SectionContext) -> Section:
    """CSS: per setting Tables 2-4, cross-judge, controls, instability, paired comparisons; agent lift; side by side."""
    from clinical_cf.analysis import figures
    from clinical_cf.analysis.css import agent_lift
    from clinical_cf.analysis.report import (
        confirmatory,
        css_rows,
        table_cms_css,
        table_controls,
        table_cross_judge,
        table_families,
        table_instability,
        table_paired,
        table_verdicts,
    )
    from clinical_cf.analysis.stats import models_for_rank_test, rank_correlation

    loaded = css_rows(ctx.samples)
    section = Section(skipped=loaded.skipped, warnings=loaded.warnings)
    if loaded.rows.empty:
        return section
    out, blocks = ctx.out, section.blocks
    settings = dict(tuple(loaded.rows.groupby("setting")))
    verdicts_by_setting = dict(tuple(loaded.verdicts.groupby("setting")))
    for setting, rows in settings.items():
        verdicts = verdicts_by_setting.get(setting, pd.DataFrame())
        coverage = loaded.coverage[loaded.coverage["setting"] == setting].drop(columns=["setting"])
        t2, t2_note = table_cms_css(rows)
        t3 = table_families(rows)
        floor = table_instability(verdicts)
        keys = [c for c in ("model", "judge", "run") if c in t3.columns]
        if not floor.empty and not t3.empty:
            # Every effect next to its noise floor.
            t3 = t3.merge(floor[keys + ["family", "instability"]], on=keys + ["family"], how="left")
        t4 = table_verdicts(rows, verdicts)
        cj, cj_note = table_cross_judge(rows, verdicts)
        controls = table_controls(rows)
        paired = table_paired(rows)
        for name, table in (("coverage", coverage), ("cms_css", t2), ("families", t3), ("verdicts", t4),
                            ("cross_judge", cj), ("controls", controls), ("instability", floor), ("paired", paired)):
            _write(table, out, f"{setting}_{name}")
        primary = rows[~rows["rejudged"]]
        differ = coverage[~coverage["same_cases"]] if "same_cases" in coverage.columns else coverage.iloc[0:0]
        blocks += [
            ("h2", f"{setting.replace('_', '-')} setting"),
            ("p", f"Logs: {_log_count(loaded.logs_read.get(setting, []), primary)}, models: {primary['model'].nunique()}, "
                  f"judges: {primary['judge'].nunique()}, tuples: {len(primary)} "
                  f"(unscored: {int(primary['css'].isna().sum())}). Each row of every table is one model, judge and run; "
                  "epochs are reduced per tuple as the log's reducer says."),
            ("h3", "Coverage (tuples and cases per model, judge and run)"),
            ("table", coverage),
        ]
        if not differ.empty:
            blocks.append(("banner", "Measured on a different set of cases than the other entries of its judge (ranks and "
                                     "comparisons with it are not like for like): "
                                     + "; ".join(f"{r.model} / {r.judge}{f' / {r.run}' if r.run else ''} ({r.cases} cases)"
                                                 for r in differ.itertuples())))
        blocks += [
            ("h3", "CMS and CSS (Table 2; ranks within each judge)"),
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
        blocks += [
            ("h3", "Verdict shares (Table 4)"),
            ("table", t4),
            ("h3", "Cross-judge replication"),
            *([("table", cj)] if not cj.empty else []),
            ("p", cj_note),
            ("h3", "Negative controls (equivalence: 90% case-clustered interval of movement inside +/-0.05)"),
            ("table", controls),
            ("h3", "Instability floor (verdict changes between epochs of the same sample)"),
            ("table", floor)
            if not floor.empty
            else (
                "p",
                "Not measured: run with --epochs 2 (fresh generations per epoch)"
                " to get the noise floor each effect should be read against.",
            ),
            (
                "h3",
                "Paired model comparisons within each judge (difference = model_a - model_b;"
                " McNemar on 'correct' discordance; Holm across families)",
            ),
            ("table", paired),
        ]
        for judge, group in t2.groupby("judge"):
            try:
                rho = rank_correlation(group["cms"], group["css"]).rho
                needed = models_for_rank_test(rho)
                blocks.append(("p", f"Power (judge {judge}): the CMS-CSS rank test reaches p < 0.05 for a correlation this "
                                    f"strong with {needed if needed else 'more than 9'} models (exact test)."))
            except ValueError:
                pass
    if ctx.predictions is not None:
        conf = _write(confirmatory(loaded.rows, ctx.predictions), out, "confirmatory")
        section.lead = [
            ("h2", "Confirmatory results (test split only)"),
            ("p", "Pre-registered predictions, one-sided case-level bootstrap p, Benjamini-Hochberg across predictions. "
                  "Everything below this section, dev split included, is exploratory."),
            ("table", conf),
            # Each verdict with the threshold and predictions hash it was tested against, read from the
            # published file itself, so a reader never sees one threshold's wording next to another's verdict.
            *[("p", f"{r.verdict_line}: {r.statement}") for r in conf.itertuples()],
        ]
    if {"single_shot", "agent"} <= set(settings):
        lift = _write(agent_lift(settings["single_shot"][~settings["single_shot"]["rejudged"]],
                                 settings["agent"][~settings["agent"]["rejudged"]]), out, "agent_lift")
        blocks += [
            ("h2", "Single-shot vs agent (Figure 3)"),
            ("p", "CSS on the tuples both settings scored, per model and family; lift = agent - single-shot."),
            ("table", lift),
        ]
        if "D" in set(lift["family"]):
            blocks.append(("img", figures.agent_lift(lift, out / "figure3_agent_lift.png")))
    from clinical_cf.analysis.side_by_side import write_side_by_side

    write_side_by_side(ctx.samples, out / "side_by_side.html")
    blocks += [("p", "Per-tuple outputs of every model side by side: side_by_side.html (self-contained, filterable)."),
               ("link", ("Open the side-by-side page", "side_by_side.html")),
               ("h3", "Logs read (open one with `inspect view`)"),
               ("list", [f"{r.log}: {r.model}, judge {r.judge}{f', run {r.run}' if r.run else ''}, {r.samples} samples"
                         for r in ctx.logs.itertuples()])]
    return section


def _log_count(read: list[str], primary: pd.DataFrame) -> str:
    """'9 read, 8 used (1 replaced by a later run of the same entry)': every log read is counted, none silently."""
    used = primary["log"].nunique()
    total = max(len(read), used)
    if total == used:
        return str(used)
    return f"{total} read, {used} used ({total - used} replaced by a later run of the same entry)"


def missing_metadata(samples: pd.DataFrame, keys: tuple[str, ...], suite: str) -> list[str]:
    """Per log, how many samples lack the suite's metadata (they are left out of its rows): one line each."""
    lines = []
    for path, frame in samples.groupby("log", sort=False):
        lacking = pd.Series(False, index=frame.index)
        absent = []
        for key in keys:
            miss = frame[f"metadata_{key}"].isna() if f"metadata_{key}" in frame.columns else pd.Series(True, index=frame.index)
            if miss.any():
                absent.append(key)
            lacking |= miss
        if lacking.any():
            lines.append(f"{path}: {int(lacking.sum())} of {len(frame)} samples lack {suite} metadata ({', '.join(absent)}); left out")
    return lines


def with_run_in_model(rows: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Rows whose `model` names the run too (`model · run R`) when runs are labelled, so two labelled runs of one
    model are two rows of every table keyed by model (as CSS keys by model, judge and run), never pooled."""
    if rows.empty or "log" not in rows.columns or "run" not in samples.columns:
        return rows
    runs = dict(zip(samples["log"].astype(str), samples["run"].fillna("").astype(str), strict=False))
    run = rows["log"].astype(str).map(runs).fillna("")
    if not (run != "").any():
        return rows
    return rows.assign(model=[m if not r else f"{m} · run {r}" for m, r in zip(rows["model"], run, strict=True)])


def sensitivity_section(ctx: SectionContext) -> Section:
    """Sensitivity: direction consistency, flip rate, JS divergence per model and perturbation type."""
    from clinical_cf.analysis.report import sensitivity_rows, table_sensitivity

    samples, replaced = latest_run(ctx.samples, "sensitivity")
    rows = with_run_in_model(sensitivity_rows(samples), samples)
    if rows.empty:
        return Section(warnings=replaced)
    profile = _write(table_sensitivity(rows), ctx.out, "sensitivity_profile")
    return Section(warnings=replaced, blocks=[
        ("h2", "Sensitivity suite"),
        ("p", "Direction consistency per perturbation type (95% CIs clustered by vignette), flip rate, mean JS divergence "
              "(bits), relative change of the gold and entropy change."),
        ("table", profile),
    ])


def medpic_section(ctx: SectionContext) -> Section:
    """MedPIC: exact-set accuracy (GF, CF, activation, deactivation, pair) with rule-clustered CIs."""
    from clinical_cf.analysis.medpic import (
        dimension_accuracy,
        medpic_rows,
        table_medpic,
    )

    samples, replaced = latest_run(ctx.samples, "MedPIC")
    # `operation` is None on guideline-following questions by design (only CF questions activate or
    # deactivate a rule): it is not required, or every GF question would be left out.
    warnings = missing_metadata(samples, ("rule_id", "kind"), "MedPIC") + replaced
    rows = with_run_in_model(medpic_rows(samples), samples)
    rows = rows.dropna(subset=["rule_id", "kind"]) if not rows.empty else rows
    if rows.empty:
        return Section(warnings=warnings)
    from clinical_cf.analysis.paired_pages import medpic_pairs_page

    pairs_page = medpic_pairs_page(rows, ctx.out / "medpic_pairs.html")
    table = _write(table_medpic(rows), ctx.out, "medpic")
    by_info = _write(dimension_accuracy(rows, "patient_info_type", kind="cf"), ctx.out, "medpic_cf_by_patient_info")
    return Section(warnings=warnings, blocks=[
        ("h2", "MedPIC suite"),
        ("p", "Exact-set accuracy in %, 95% CIs from a rule-clustered bootstrap (2,000 resamples, seed 0); "
              "pair accuracy counts complete pairs with both members correct."),
        ("table", table),
        ("h3", "CF accuracy by patient-information type"),
        ("table", by_info),
        *([("link", ("MedPIC pairs side by side", pairs_page.name))] if pairs_page else []),
    ])


def workflow_section(ctx: SectionContext) -> Section:
    """Workflow escalation: accuracy, utility, escalation errors, calibration on the test split; paired tests."""
    from clinical_cf.analysis.workflow import (
        REQUIRED_METADATA,
        accuracy_by,
        paired_tests,
        select_split,
        summary_table,
        workflow_rows,
    )

    samples, replaced = latest_run(ctx.samples, "workflow")
    warnings = missing_metadata(samples, REQUIRED_METADATA, "workflow") + replaced
    rows = with_run_in_model(workflow_rows(samples), samples)
    if rows.empty:
        return Section(warnings=warnings)
    from clinical_cf.analysis.paired_pages import workflow_episodes_page

    episodes_page = workflow_episodes_page(rows, ctx.out / "workflow_episodes.html")
    tested = select_split(rows, "test")
    summary = _write(summary_table(tested), ctx.out, "workflow_summary")
    variants = _write(accuracy_by(tested, "variant"), ctx.out, "workflow_by_variant")
    paired = _write(paired_tests(tested), ctx.out, "workflow_paired")
    return Section(warnings=warnings, blocks=[
        ("h2", "Workflow escalation suite (test split)"),
        ("p", "Per model and condition: decision accuracy, utility at 5:1 and 10:1, missed and unnecessary "
              "escalation, ECE (10 bins) and failure AUROC; 95% CIs resample seeds."),
        ("table", summary),
        ("h3", "Accuracy by variant"),
        ("table", variants),
        ("h3", "Clean vs perturbed, paired by seed (exact sign test, Holm-corrected)"),
        ("table", paired),
        *([("link", ("Workflow episodes side by side", episodes_page.name))] if episodes_page else []),
    ])


def scores_section(ctx: SectionContext) -> Section:
    """The section a suite has without one of its own, derived from its spec: each of its scorers' mean score per model,
    judge and run (the latest complete run of each sample), with how many samples it scored of how many."""
    samples, replaced = latest_run(ctx.samples, ctx.suite.name)
    names = [name.split("/")[-1] for name in ctx.suite.metrics()]
    keys = [c for c in ("model", "judge", "run") if c in samples.columns and samples[c].notna().any()]
    section = Section(warnings=replaced)
    rows = []
    for column in score_columns(samples, names):
        values = pd.to_numeric(samples[column], errors="coerce")
        for key, group in values.groupby([samples[k].fillna("") for k in keys] if keys else [0] * len(values), sort=True):
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False)), "score": column.removeprefix("score_"),
                         "mean": group.mean() if group.notna().any() else None, "scored": int(group.notna().sum()), "samples": len(group)})
    title = f"{ctx.suite.short_name}: scores per model"
    if not rows:
        logs = ctx.samples["log"].unique() if "log" in ctx.samples.columns else []
        section.skipped = [(str(log), f"no {', '.join(names)} score") for log in logs]
        return section
    table = pd.DataFrame(rows)
    section.blocks = [("h2", title), ("p", "Mean of each score over the samples it scored; unscored samples are counted, never averaged."),
                      ("table", _write(table, ctx.out, f"{ctx.suite.name}_scores"))]
    return section


SECTIONS: dict[str, SectionBuilder] = {
    "css": css_section, "sensitivity": sensitivity_section, "medpic": medpic_section, "workflow": workflow_section,
}
"""The suites whose section is written here; any other suite's is `scores_section`, derived from its spec."""

COMMON_TABLES = (parse_table,)
"""Every suite's section shows how its replies were read (issue 14)."""
COMMON_BANNERS = (report_banners,)
"""Every suite's section warns about logs whose inputs were unregistered, re-locked after release or mixed (issue 15)."""
