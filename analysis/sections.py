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

import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.scorer import value_to_float

from clinical_cf.analysis import figures
from clinical_cf.analysis.css import agent_lift
from clinical_cf.analysis.html import render_report
from clinical_cf.analysis.logs import LogRows, score_columns, unknown_suite
from clinical_cf.analysis.medpic import (
    dimension_accuracy,
    medpic_rows,
    medpic_summary,
    table_medpic,
)
from clinical_cf.analysis.paired_pages import medpic_pairs_page, workflow_episodes_page
from clinical_cf.analysis.parse_quality import parse_table
from clinical_cf.analysis.registration import report_banners
from clinical_cf.analysis.report import (
    confirmatory,
    css_rows,
    sensitivity_rows,
    table_cms_css,
    table_controls,
    table_cross_judge,
    table_families,
    table_instability,
    table_invariance,
    table_paired,
    table_sensitivity,
    table_sensitivity_invariance,
    table_verdicts,
)
from clinical_cf.analysis.runs import latest_run, replaced_rows
from clinical_cf.analysis.side_by_side import write_side_by_side
from clinical_cf.analysis.stats import cluster_bootstrap_ci, models_for_rank_test, rank_correlation
from clinical_cf.analysis.tables import markdown_table, write_table
from clinical_cf.analysis.workflow import (
    REQUIRED_METADATA,
    accuracy_by,
    calibration_by_class,
    paired_tests,
    select_split,
    summary_table,
    workflow_rows,
)
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.outputs import file_in, file_name_part
from clinical_cf.scorers.metrics import trace_metrics
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
    summary: list[dict[str, Any]] = field(default_factory=list)
    """The section's rows of the report's opening summary (`SUMMARY_COLUMNS`)."""
    figures: list[Block] = field(default_factory=list)
    """Headline figures, shown in the opening summary."""


SectionBuilder = Callable[[SectionContext], Section]


def _write(table: pd.DataFrame, out: Path, name: str) -> pd.DataFrame:
    write_table(table, file_in(out, f"{name}.csv"))  # a name that would leave `out` is an error, never a write elsewhere
    return table


REPORT_SUITES = list(SUITES)
"""The suites a report knows: a log recording any other `suite` is skipped and named (named explicitly: an error)."""

SUMMARY_COLUMNS = ["suite", "setting", "model", "judge", "run", "css", "css_rank", "cms", "cms_rank", "family_D",
                   "controls_held", "samples", "share_scored", "headline"]


def build_report(rows: LogRows, out: Path, predictions: str | Path | None = None) -> Path:
    """Every registered suite's section over `rows`, then report.md and report.html in `out`: the summary first,
    then the sections, then the housekeeping (logs read and their status, skipped, replaced, usage, samples).

    A log named explicitly (`rows.named`) that a section cannot use, or whose suite the project does not have,
    is a `CatalogError` naming why."""

    out.mkdir(parents=True, exist_ok=True)
    lead: list[Block] = []
    body: list[Block] = []
    summary: list[dict[str, Any]] = []
    figures: list[Block] = []
    skipped = list(rows.skipped)
    warnings: list[str] = []
    for log, suite in zip(rows.logs.get("log", []), rows.logs.get("suite", []), strict=False):
        if suite not in SUITES:  # a read without `known_suites`: named here instead
            why = unknown_suite(suite, REPORT_SUITES)
            if log in rows.named:
                raise CatalogError(log, why)
            skipped.append((log, why))
    reported: list[str] = []
    for suite in SUITES.values():
        samples = rows.suite(suite.name)
        if samples.empty:
            continue
        reported.append(suite.name)
        ctx = SectionContext(suite, samples, rows.suite_logs(suite.name), out, Path(predictions) if predictions else None)
        section: Section = SECTIONS.get(suite.name, scores_section)(ctx)
        for path, why in section.skipped:
            if path in rows.named:
                raise CatalogError(path, why)
        skipped += section.skipped
        warnings += section.warnings
        summary += [{"suite": suite.name, **row} for row in section.summary]
        figures += section.figures
        if not section.blocks and not section.lead:
            continue
        lead += section.lead
        for banner in (*COMMON_BANNERS, *suite.report_banners):
            body += [("banner", line) for line in banner(ctx.logs, ctx.samples)]
        body += section.blocks
        body.append(("p", rests_on(ctx.logs, rows.excluded)))
        for function in (*COMMON_TABLES, *suite.report_tables):
            table = function(ctx.samples)
            title = (function.__doc__ or function.__name__).strip().splitlines()[0]
            body += [("h3", title), ("table", _write(table, out, f"{suite.name}_{function.__name__}"))]
    title = "clinical_cf comparison report" + (f": {', '.join(reported)}" if reported else "")
    blocks: list[Block] = [("h1", title), *summary_blocks(summary, figures, out), *lead]
    for line in [f"{p}: {why}" for p, why in skipped] + warnings + [f"{p}: {why}" for p, why in rows.excluded.items()]:
        print(f"report: {line}", file=sys.stderr)  # named on the terminal too, not only inside the report
    if not body:
        blocks.append(("p", "No usable " + ", ".join(SUITES) + " logs."))
    blocks += body
    blocks += logs_blocks(rows, skipped, out)
    if skipped:
        blocks += [("h2", "Skipped logs"), ("list", [f"{p}: {why}" for p, why in skipped])]
    if warnings:
        blocks += [("h2", "Left out or replaced"), ("list", warnings)]
    blocks += usage_blocks(rows, out)
    blocks += per_sample_blocks(rows, out)
    (out / "report.html").write_text(render_report(blocks, title), encoding="utf-8")
    report = out / "report.md"
    report.write_text(render_markdown(blocks, out), encoding="utf-8")
    return report


def rests_on(logs: pd.DataFrame, excluded: dict[str, str]) -> str:
    """'Rests on 5 logs (status success); 1 more read and not scored (status error): see Logs read.'"""

    if logs.empty:
        return "Rests on no log."
    used = Counter(str(s) for log, s in zip(logs["log"], logs["status"], strict=True) if log not in excluded)
    left = Counter(str(s) for log, s in zip(logs["log"], logs["status"], strict=True) if log in excluded)
    text = "Rests on " + f"{sum(used.values())} log(s) (" + ", ".join(f"status {k}: {n}" for k, n in sorted(used.items())) + ")"
    if left:
        text += f"; {sum(left.values())} more read and not scored (" + ", ".join(f"status {k}: {n}" for k, n in sorted(left.items())) + ")"
    return text + ": every log is listed under Logs read (logs.csv)."


def summary_blocks(summary: list[dict[str, Any]], figures: list[Block], out: Path) -> list[Block]:
    """The opening screen: per suite and setting, each model x judge x run's headline numbers, then Figures 1-2."""
    table = _write(pd.DataFrame(summary, columns=SUMMARY_COLUMNS), out, "summary")
    shown: list[Block] = []
    for suite, part in table.groupby("suite", sort=False):
        # Per suite only the columns it fills (CSS has no headline, the others no CSS columns).
        keep = [c for c in SUMMARY_COLUMNS if c in ("model", "judge", "run", "samples", "share_scored")
                or (c != "suite" and part[c].map(lambda v: v is not None and v == v and v != "").any())]
        shown += [("h3", f"{suite}"), ("table", part[keep].reset_index(drop=True))]
    first = lead_sentences(summary)
    return [("h2", "Summary"), *([("p", first)] if first else []),
            ("p", "One row per suite, setting, model, judge and run. CSS and CMS with their ranks within the judge (1 = best), "
                  "family_D = CSS on family D, controls_held = whether the negative controls passed the equivalence test, "
                  "share_scored = scored sample epochs over all sample epochs of the entry (the rest errored, hit a "
                  "limit or were unreadable: see the parse-quality tables); headline = the suite's main numbers. "
                  "Housekeeping (logs read and their status, skipped logs, replaced runs, tokens and cost) is at the end. "
                  "All suites in summary.csv."),
            *shown, *figures]


def logs_blocks(rows: LogRows, skipped: list[tuple[str, str]], out: Path) -> list[Block]:
    """Every log the report read or skipped, with its status and whether its samples were scored (and why not)."""
    why_not = dict(skipped) | rows.excluded
    records = []
    for r in rows.logs.to_dict("records"):
        log = str(r["log"])
        records.append({"log": log, "suite": r.get("suite"), "model": r.get("model"), "task": r.get("task"),
                        "status": r.get("status"), "samples": r.get("samples"), "judge": r.get("judge"), "run": r.get("run"),
                        "used": log not in why_not, "why": why_not.get(log, "")})
    listed = {r["log"] for r in records}
    records += [{"log": p, "suite": None, "model": None, "task": None, "status": None, "samples": None, "judge": None,
                 "run": None, "used": False, "why": why} for p, why in skipped if p not in listed]
    table = _write(pd.DataFrame(records, columns=["log", "suite", "model", "task", "status", "samples", "judge", "run",
                                                  "used", "why"]), out, "logs")
    blocks: list[Block] = [("h2", "Logs read"),
                           ("p", "Every log with the status Inspect recorded (success, error, cancelled, started) and whether "
                                 "its samples were scored. A log that did not complete is scored only with "
                                 "--include-incomplete, and never replaces a complete run's samples."),
                           ("table", table)]
    if rows.excluded:
        status = dict(zip(rows.logs["log"].astype(str), rows.logs["status"].astype(str), strict=False))
        blocks += [("h3", "Logs not scored (the eval did not complete)"),
                   ("list", [f"{p} (status {status.get(p, '?')}): {why}" for p, why in rows.excluded.items()])]
    return blocks


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
            ran = key[1] if role == "model" else \
                ", ".join(sorted({_role_model(role_models, log, role) for log in group["log"].unique()} - {""}))
            bound = role == "model" or any((str(log), role) in role_models for log in group["log"].unique())
            if not tokens.notna().any() and not bound:
                continue  # a role the entry's logs never bound (a reader that read nothing)
            cost = pd.to_numeric(column_or_none(group, f"cost_{role}"), errors="coerce")
            reported = int(tokens.notna().sum())
            # A role that ran but whose provider reported no usage keeps its row, marked, never left out or zero.
            records.append({**dict(zip(USAGE_KEYS, key, strict=True)), "role": role, "role_model": ran,
                            "samples": len(group), "usage": _usage_state(reported, len(group)),
                            "tokens": int(tokens.sum()) if reported else float("nan"),
                            # No cost is 'not reported by the provider', never zero: the cell stays blank.
                            "cost": float(cost.sum()) if cost.notna().any() else float("nan")})
    columns = ["suite", "model", "role", "role_model", "judge", "run", "samples", "usage", "tokens", "cost"]
    table = _write(pd.DataFrame(records, columns=columns), out, "usage")
    return [("h2", "Tokens and cost per suite, model, judge, run and role"),
            ("p", "Summed over samples (epochs and replaced reruns included: this is what the runs cost); `role_model` is "
                  "the model that ran the role; `samples` counts every sample epoch of the entry and `usage` whether the provider "
                  "reported the role's tokens for them (a role whose provider reported none keeps its row, tokens 'no data'). "
                  "A cost of 'no data' (blank in usage.csv) means the provider reported none, not zero."), ("table", table)]


def _usage_state(reported: int, samples: int) -> str:
    """'reported', 'not reported' or 'reported for N of M samples': whether the provider said what a role spent."""
    if reported == samples:
        return "reported"
    return "not reported" if reported == 0 else f"reported for {reported} of {samples} samples"


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


def _role_model(role_models: dict[tuple[str, str], str], log: str, role: str) -> str:
    """The model that ran `role` in `log`; an unbound reader role is read by the judge's model
    (`clinical_cf.replies.resolve_reader`), billed under `reader`."""
    found = role_models.get((log, role), "")
    if not found and role == "reader":
        found = role_models.get((log, "judge"), "")
    return found


def column_or_none(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame.columns else pd.Series([None] * len(frame), index=frame.index)


SAMPLE_COLUMNS = ("suite", "log", "status", "used", "replaced", "model", "judge", "run", "task", "sample_id", "epoch", "error",
                  "limit")


def per_sample_blocks(rows: LogRows, out: Path) -> list[Block]:
    """Every sample's provenance, metadata scalars and score values as `samples.parquet` and `samples.csv`.

    `status` is its log's status; `used` whether its log was scored (a log that did not complete is not, without
    --include-incomplete); `replaced` whether another sample of the same entry, sample and epoch replaced it (a rerun),
    so `used & ~replaced` are the samples the tables rest on. Missing values are real nulls, never the text "nan"."""
    samples = rows.samples
    if samples.empty:
        return []
    samples = samples.assign(used=~samples["log"].isin(list(rows.excluded)))
    keys = [c for c in ("suite", "model", "judge", "run", "sample_id", "epoch") if c in samples.columns]
    used = samples[samples["used"]]
    _, dropped = replaced_rows(used.assign(judge=used["judge"].fillna(""), run=used["run"].fillna("")), keys)
    samples["replaced"] = samples.index.isin(dropped.index)
    keep = [c for c in SAMPLE_COLUMNS if c in samples.columns]
    keep += [c for c in samples.columns if c.startswith("score_") and not c.endswith(("_metadata", "_explanation", "_answer"))]
    keep += [c for c in samples.columns if c.startswith("metadata_") and samples[c].map(
        lambda v: v is None or isinstance(v, (str, int, float, bool))).all()]
    table = samples[keep].copy()
    for col in table.columns:
        if table[col].dtype == object:
            table[col] = table[col].map(lambda v: None if v is None or (isinstance(v, float) and v != v) else str(v))
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


def invariance_blocks(invariance: pd.DataFrame, section: Section, out, prefix: str, label: str) -> list[tuple]:
    """Invariance controls (issue 47): the per-attribute table and its figure; nothing when none was run."""
    if invariance.empty:
        return []
    section.figures += [("h3", f"Invariance ({label}): movement by attribute"),
                        ("img", figures.invariance_attributes(invariance, file_in(out, f"{prefix}_figure_invariance.png")))]
    return [
        ("h3", "Invariance controls by attribute (demographic and style changes that must not move the answer; TOST: 90% "
               "case-clustered interval of movement inside +/- the margin, the family N instability floor where measured "
               "and larger than 0.05)"),
        ("table", invariance),
        ("p", f"Figure: invariance ({label}) is in the summary at the top. moved_cases: the cases whose answer moved "
              "(judge score below 1); run with -T controls=invariance."),
    ]


def css_section(ctx: SectionContext) -> Section:
    """CSS: per setting Tables 2-4, cross-judge, controls, instability, paired comparisons; agent lift; side by side."""

    loaded = css_rows(ctx.samples)
    section = Section(skipped=loaded.skipped, warnings=loaded.warnings)
    if loaded.rows.empty:
        return section
    out, blocks = ctx.out, section.blocks
    settings = dict(tuple(loaded.rows.groupby("setting")))
    verdicts_by_setting = dict(tuple(loaded.verdicts.groupby("setting")))
    for setting, rows in settings.items():
        # The setting is read from each log's eval metadata: in file names only as one safe name inside `out`.
        prefix = file_name_part(setting)
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
        invariance = table_invariance(rows, floor)
        paired = table_paired(rows)
        for name, table in (("coverage", coverage), ("cms_css", t2), ("families", t3), ("verdicts", t4),
                            ("cross_judge", cj), ("controls", controls), ("invariance", invariance), ("instability", floor),
                            ("paired", paired)):
            _write(table, out, f"{prefix}_{name}")
        primary = rows[~rows["rejudged"]]
        differ = coverage[~coverage["same_cases"]] if "same_cases" in coverage.columns else coverage.iloc[0:0]
        blocks += [
            ("h2", f"{setting.replace('_', '-')} setting"),
            ("p", f"Logs: {_log_count(_setting_logs(ctx.logs, setting), ctx.samples, primary)}, models: {primary['model'].nunique()}, "
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
        label = setting.replace("_", "-")
        if len(t2) >= 2:
            section.figures += [("h3", f"Figure 1 ({label}): CMS rank against CSS rank"),
                                ("img", figures.rank_disagreement(t2, file_in(out, f"{prefix}_figure1_rank_disagreement.png")))]
            blocks.append(("p", f"Figure 1 ({label}) is in the summary at the top."))
        blocks += [
            ("h3", "CSS by family (Table 3; 95% CIs from a case-clustered bootstrap, 2,000 resamples, seed 0; N = negative controls)"),
            ("table", t3),
        ]
        if not t3.empty:
            section.figures += [("h3", f"Figure 2 ({label}): CSS by family"),
                                ("img", figures.family_small_multiples(t3, file_in(out, f"{prefix}_figure2_families.png")))]
            blocks.append(("p", f"Figure 2 ({label}) is in the summary at the top."))
        section.summary += css_summary(setting, t2, t3, controls, verdicts)
        if setting == "agent":
            trace = _write(agent_trace_table(ctx.samples, loaded.verdicts), out, "agent_trace")
            blocks += [("h3", "Agent chart reading (trace metrics of the counterfactual arm, per model, judge and run)"),
                       ("p", "tool_calls and sections_read per run; changed_section_read over interventional tuples: the agent "
                             "read a section the intervention changes for its meaning (not `overview`, which every "
                             "intervention touches); retrieved_not_updated among those, the share judged 0; "
                             "limit_hit: runs a limit ended."),
                       ("table", trace)]
        blocks += [
            ("h3", "Verdict shares (Table 4)"),
            ("table", t4),
            ("h3", "Cross-judge replication"),
            *([("table", cj)] if not cj.empty else []),
            ("p", cj_note),
            ("h3", "Negative controls (equivalence: 90% case-clustered interval of movement inside +/-0.05)"),
            ("table", controls),
            *invariance_blocks(invariance, section, out, prefix, label),
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
                "Paired model comparisons within each judge (difference = model_a - model_b on the tuples both scored;"
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

    write_side_by_side(ctx.samples, out / "side_by_side.html")
    blocks += [("p", "Per-tuple outputs of every model side by side: side_by_side.html (self-contained, filterable)."),
               ("link", ("Open the side-by-side page", "side_by_side.html")),
               ("h3", "Logs read (open one with `inspect view`)"),
               ("list", [f"{r.log}: {r.model}, judge {r.judge}{f', run {r.run}' if r.run else ''}, {r.samples} samples, "
                         f"status {r.status}" for r in ctx.logs.itertuples()])]
    return section


def css_summary(setting: str, t2: pd.DataFrame, t3: pd.DataFrame, controls: pd.DataFrame, verdicts: pd.DataFrame) -> list[dict[str, Any]]:
    """The summary rows of one CSS setting: Table 2's CSS and CMS with ranks, family D, controls held, share scored."""
    keys = ["model", "judge", "run"]
    out = []
    primary = verdicts[~verdicts["rejudged"]] if "rejudged" in verdicts.columns else verdicts
    for row in t2.to_dict("records"):
        entry = {k: row.get(k, "") for k in keys}

        mine = primary
        for k, v in entry.items():
            mine = mine[mine[k] == v]
        scored = int((mine["outcome"] == "scored").sum()) if "outcome" in mine.columns else int(mine["css"].notna().sum())
        out.append({"setting": setting, **entry, "css": row.get("css"), "css_rank": row.get("css_rank"), "cms": row.get("cms"),
                    "cms_rank": row.get("cms_rank"), "family_D": _pick(t3, entry, "css", family="D"),
                    "controls_held": _pick(controls, entry, "equivalent"),
                    "samples": len(mine), "share_scored": scored / len(mine) if len(mine) else None,
                    LEAD: Lead(f"CSS ({setting.replace('_', '-')}, judge {entry['judge']})", "CSS", row.get("css"),
                               row.get("css_ci_low"), row.get("css_ci_high"))})
    return out


def _pick(table: pd.DataFrame, entry: dict[str, Any], col: str, **extra: Any) -> Any:
    """The `col` cell of the row of `table` matching the entry (and extra keys), or None."""
    hit = table
    for k, v in {**entry, **extra}.items():
        if k in hit.columns:
            hit = hit[hit[k] == v]
    return hit[col].iloc[0] if len(hit) and col in hit.columns else None


def agent_trace_table(samples: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Trace metrics per model, judge and run of the agent setting, from each kept verdict's counterfactual trace
    (`clinical_cf.scorers.metrics.trace_metrics`, the same definition as the log's `agent_trace` metric)."""

    agent = verdicts[(verdicts["setting"] == "agent") & ~verdicts["rejudged"]] if not verdicts.empty else verdicts
    columns = ["model", "judge", "run", "runs", "tool_calls", "sections_read", "procedures_read", "changed_section_read",
               "retrieved_not_updated", "redundant_call_rate", "limit_hit"]
    if agent.empty:
        return pd.DataFrame(columns=columns)
    cols = [c for c in score_columns(samples, ("agent_judge_direction",))[:1] if f"{c}_metadata" in samples.columns]
    if not cols:
        return pd.DataFrame(columns=columns)
    meta = samples[f"{cols[0]}_metadata"]
    traces = {(str(log), str(sid), int(epoch)): m.get("trace") for log, sid, epoch, m in
              zip(samples["log"], samples["sample_id"], samples["epoch"], meta, strict=True) if isinstance(m, dict)}
    out = []
    for entry, group in agent.groupby(["model", "judge", "run"], sort=True):
        records = [(traces.get((str(r.log), str(r.sample_id), int(r.epoch))), r.family, r.css) for r in group.itertuples()]
        records = [(t, f, v) for t, f, v in records if isinstance(t, dict)]
        if records:
            out.append({**dict(zip(["model", "judge", "run"], entry, strict=True)), "runs": len(records), **trace_metrics(records)})
    return pd.DataFrame(out, columns=columns)


def _setting_logs(logs: pd.DataFrame, setting: str) -> pd.DataFrame:
    """The CSS logs read for one setting (as the task logged it), scored or not: every log the header counts."""
    if logs.empty:
        return logs
    recorded = logs["eval_setting"] if "eval_setting" in logs.columns else pd.Series(None, index=logs.index, dtype=object)
    return logs[recorded.fillna("single_shot").astype(str) == setting]


def _log_count(read: pd.DataFrame, samples: pd.DataFrame, primary: pd.DataFrame) -> str:
    """'9 read, 7 used (1 not scored: the eval did not complete; 1 replaced by a newer complete run of the same
    entry)': every log read is counted, none silently, and each unused log is said for what became of it."""
    used = set(map(str, primary["log"].unique()))
    status = dict(zip(read["log"].astype(str), read["status"].astype(str), strict=False)) if not read.empty else {}
    scored = set(map(str, samples["log"].unique())) if "log" in samples.columns else set()
    unused = sorted(set(status) - used)
    if not unused:
        return str(len(used))
    not_scored = [p for p in unused if p not in scored]
    over_incomplete = [p for p in unused if p in scored and status[p] != "success"]
    over_complete = [p for p in unused if p in scored and status[p] == "success"]
    parts = []
    if not_scored:
        parts.append(f"{len(not_scored)} not scored: the eval did not complete or nothing in it was scored (see Logs read)")
    if over_incomplete:
        parts.append(f"{len(over_incomplete)} did not complete and {'was' if len(over_incomplete) == 1 else 'were'} "
                     "replaced by the complete run of the same entry (a complete run always wins)")
    if over_complete:
        parts.append(f"{len(over_complete)} replaced by a newer complete run of the same entry")
    return f"{len(set(status) | used)} read, {len(used)} used ({'; '.join(parts)})"


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


@dataclass(frozen=True)
class Lead:
    """An entry's main number for the opening sentence: its group (suite, setting, judge), metric, value, 95% CI."""

    group: str
    metric: str
    value: Any
    low: Any = None
    high: Any = None


LEAD = "_lead"
"""The summary row key holding its `Lead` (not a column of summary.csv)."""


def suite_summary(samples: pd.DataFrame, headline: dict[str, str], leads: dict[str, Lead] | None = None) -> list[dict[str, Any]]:
    """Summary rows of a suite keyed by model (and run): sample epochs, the share scored (not errored, not stopped
    by a limit, not unreadable) from the parse-quality count, and the suite's headline numbers per shown model."""
    out = []
    for r in parse_table(samples).to_dict("records"):
        shown = f"{r['model']} · run {r['run']}" if r["run"] else r["model"]
        out.append({"setting": "", "model": r["model"], "judge": r["judge"], "run": r["run"], "samples": r["samples"],
                    "share_scored": r["scored"] / r["samples"] if r["samples"] else None,
                    "headline": headline.get(shown, headline.get(r["model"], "")),
                    LEAD: (leads or {}).get(shown, (leads or {}).get(r["model"]))})
    return out


def _measured(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _interval(lead: Lead) -> str:
    return f" [{_short(float(lead.low))}, {_short(float(lead.high))}]" if _measured(lead.low) and _measured(lead.high) else ""


def lead_sentences(summary: list[dict[str, Any]]) -> str:
    """The report's first sentence per suite (and CSS setting and judge): who leads, on what, by how much, with the
    leader's 95% interval; a tie at the top is said as a tie, a single entry as the only one measured."""
    groups: dict[str, list[tuple[str, Lead]]] = {}
    for row in summary:
        lead = row.get(LEAD)
        if isinstance(lead, Lead) and _measured(lead.value):
            name = str(row["model"]) + (f" (run {row['run']})" if row.get("run") else "")
            groups.setdefault(lead.group, []).append((name, lead))
    sentences = []
    for group, entries in groups.items():
        entries.sort(key=lambda e: (-float(e[1].value), e[0]))
        top, lead = entries[0]
        value = float(lead.value)
        tied = [n for n, e in entries if math.isclose(float(e.value), value, abs_tol=1e-12)]
        if len(entries) == 1:
            sentences.append(f"{group}: only {top} was measured: {lead.metric} {_short(value)}{_interval(lead)}.")
        elif len(tied) > 1:
            sentences.append(f"{group}: {' and '.join(sorted(tied))} tie at {lead.metric} {_short(value)}.")
        else:
            second, runner = entries[1]
            sentences.append(f"{group}: {top} leads with {lead.metric} {_short(value)}{_interval(lead)}, "
                             f"{_short(value - float(runner.value))} ahead of {second} ({_short(float(runner.value))}).")
    return " ".join(sentences)


def _headline(table: pd.DataFrame, columns: list[str], suffix: str = "") -> dict[str, str]:
    """'col value; ...' per model of a table (first row of each model), then `suffix` (the split it is on)."""
    out: dict[str, str] = {}
    if table.empty:
        return out
    for model, group in table.groupby("model", sort=False):
        row = group.iloc[0]
        text = "; ".join(f"{c} {_short(row[c])}" for c in columns if c in group.columns)
        out[str(model)] = f"{text} {suffix}".strip()
    return out


def _short(value: Any) -> str:
    if isinstance(value, float):
        return "no data" if value != value else f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def sensitivity_section(ctx: SectionContext) -> Section:
    """Sensitivity: direction consistency, flip rate, JS divergence per model and perturbation type."""

    samples, replaced = latest_run(ctx.samples, "sensitivity")
    rows = with_run_in_model(sensitivity_rows(samples), samples)
    if rows.empty:
        return Section(warnings=replaced)
    profile = _write(table_sensitivity(rows), ctx.out, "sensitivity_profile")
    invariance = _write(table_sensitivity_invariance(rows), ctx.out, "sensitivity_invariance")
    return Section(warnings=replaced, summary=suite_summary(samples, *sensitivity_headline(rows)), blocks=[
        ("h2", "Sensitivity suite"),
        ("p", "Direction consistency per perturbation type (95% CIs clustered by vignette), flip rate, mean JS divergence "
              "(bits), relative change of the gold and entropy change."),
        ("table", profile),
        *([("h3", "Invariance changes by attribute (share of pairs that moved beyond the surface tolerance; TOST: 90% "
                  "vignette-clustered interval inside +/-0.05)"), ("table", invariance)] if not invariance.empty else []),
    ])


def sensitivity_headline(rows: pd.DataFrame) -> tuple[dict[str, str], dict[str, Lead]]:
    """Per model, direction consistency as Inspect's own `mean` metric computes it: the mean over every pair (each
    sample's epochs reduced by their mean first), never the unweighted mean of the per-type rows; with its
    vignette-clustered 95% interval for the opening sentence."""
    out: dict[str, str] = {}
    leads: dict[str, Lead] = {}
    for model, group in rows.groupby("model", sort=False):
        per_pair = group.groupby(["log", "sample_id"]).agg(consistent=("consistent", "mean"), vignette=("vignette_id", "first"))
        value = float(per_pair["consistent"].mean())
        low, high = (cluster_bootstrap_ci(per_pair["consistent"], per_pair["vignette"].astype(str))
                     if per_pair["vignette"].nunique() > 1 else (None, None))
        out[str(model)] = f"consistency {_short(value)} ({len(per_pair)} pairs)"
        leads[str(model)] = Lead("Sensitivity", "direction consistency", value, low, high)
    return out, leads


def medpic_section(ctx: SectionContext) -> Section:
    """MedPIC: exact-set accuracy (GF, CF, activation, deactivation, pair) with rule-clustered CIs."""

    samples, replaced = latest_run(ctx.samples, "MedPIC")
    # `operation` is None on guideline-following questions by design (only CF questions activate or
    # deactivate a rule): it is not required, or every GF question would be left out.
    warnings = missing_metadata(samples, ("rule_id", "kind"), "MedPIC") + replaced
    rows = with_run_in_model(medpic_rows(samples), samples)
    rows = rows.dropna(subset=["rule_id", "kind"]) if not rows.empty else rows
    if rows.empty:
        return Section(warnings=warnings)

    pairs_page = medpic_pairs_page(rows, ctx.out / "medpic_pairs.html")
    numbers = medpic_summary(rows)
    table = _write(table_medpic(rows, summary=numbers), ctx.out, "medpic")
    by_info = _write(dimension_accuracy(rows, "patient_info_type", kind="cf"), ctx.out, "medpic_cf_by_patient_info")
    # Rates in the summary are fractions, as every other suite's (the MedPIC table itself shows %).
    headline = _headline(numbers.rename(columns={"accuracy": "overall", "gf_accuracy": "GF", "cf_accuracy": "CF",
                                                 "pair_accuracy": "pair"}), ["overall", "GF", "CF", "pair"])
    leads = {str(r["model"]): Lead("MedPIC", "overall accuracy", r["accuracy"], r["accuracy_lo"], r["accuracy_hi"])
             for r in numbers.to_dict("records")}
    return Section(warnings=warnings, summary=suite_summary(samples, headline, leads), blocks=[
        ("h2", "MedPIC suite"),
        ("p", "Exact-set accuracy in %, 95% CIs from a rule-clustered bootstrap (2,000 resamples, seed 0); "
              "pair accuracy counts complete pairs with both members correct."),
        ("table", table),
        ("h3", "CF accuracy by patient-information type"),
        ("table", by_info),
        *([("link", ("MedPIC pairs side by side", pairs_page.name))] if pairs_page else []),
    ])


def with_outcomes(summary: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """The workflow summary with every test-split episode counted: `episodes` (all sample epochs), `scored`, `errored`,
    `at_limit` and `unscored` (an invalid reply), per model and condition; the metrics rest on the scored ones."""
    if samples.empty:
        return summary
    shown = with_run_in_model(samples[["model", "log"]].copy(), samples)["model"]
    split = samples["metadata_split"] if "metadata_split" in samples.columns else pd.Series(None, index=samples.index)
    test = samples[(split == "test") | split.isna()] if (split == "test").any() else samples
    condition = test["metadata_condition"].fillna("neutral") if "metadata_condition" in test.columns else \
        pd.Series("neutral", index=test.index)
    errored = test["error"].notna() if "error" in test.columns else pd.Series(False, index=test.index)
    limited = test["limit"].notna() & ~errored if "limit" in test.columns else pd.Series(False, index=test.index)
    value = pd.to_numeric(test["score_workflow_action"], errors="coerce") if "score_workflow_action" in test.columns else \
        pd.Series(float("nan"), index=test.index)
    counts = pd.DataFrame({"model": shown.loc[test.index], "condition": condition, "errored": errored, "at_limit": limited,
                           "unscored": ~errored & ~limited & value.isna()})
    counts = counts.groupby(["model", "condition"]).agg(episodes=("errored", "size"), errored=("errored", "sum"),
                                                         at_limit=("at_limit", "sum"), unscored=("unscored", "sum")).reset_index()
    counts["scored"] = counts["episodes"] - counts["errored"] - counts["at_limit"] - counts["unscored"]
    merged = counts.merge(summary.drop(columns=["episodes"], errors="ignore"), on=["model", "condition"], how="outer")
    merged[["episodes", "scored", "errored", "at_limit", "unscored"]] = \
        merged[["episodes", "scored", "errored", "at_limit", "unscored"]].fillna(0).astype(int)
    return merged


def workflow_section(ctx: SectionContext) -> Section:
    """Workflow escalation: accuracy, utility, escalation errors, calibration on the test split; paired tests."""

    samples, replaced = latest_run(ctx.samples, "workflow")
    warnings = missing_metadata(samples, REQUIRED_METADATA, "workflow") + replaced
    rows = with_run_in_model(workflow_rows(samples), samples)
    if rows.empty:
        return Section(warnings=warnings)

    episodes_page = workflow_episodes_page(rows, ctx.out / "workflow_episodes.html")
    tested = select_split(rows, "test")
    summary = _write(with_outcomes(summary_table(tested), samples), ctx.out, "workflow_summary")
    variants = _write(accuracy_by(tested, "variant"), ctx.out, "workflow_by_variant")
    calibration = _write(calibration_by_class(tested), ctx.out, "workflow_calibration_by_class")
    paired = _write(paired_tests(tested), ctx.out, "workflow_paired")
    headline = _headline(summary[summary["condition"] == summary["condition"].iloc[0]] if not summary.empty else summary,
                         ["accuracy", "utility_5"], suffix="(test split)")
    # The summary's counts are of the split its headline is on.
    split = samples["metadata_split"] if "metadata_split" in samples.columns else pd.Series(None, index=samples.index)
    on_test = samples[(split == "test") | split.isna()] if (split == "test").any() else samples
    first = summary[summary["condition"] == summary["condition"].iloc[0]] if not summary.empty else summary
    leads = {str(r["model"]): Lead("Workflow (test split)", "utility at 5:1", r.get("utility_5"), r.get("utility_5_low"),
                                   r.get("utility_5_high")) for r in first.to_dict("records")}
    return Section(warnings=warnings, summary=suite_summary(on_test, headline, leads), blocks=[
        ("h2", "Workflow escalation suite (test split)"),
        ("p", "Per model and condition: episodes (sample epochs of the test split), how many were scored, errored "
              "(provider error, timeout) or stopped by a limit (neither is an invalid reply), then over the scored ones "
              "decision accuracy, utility at 5:1 and 10:1, missed and unnecessary escalation, ECE (10 bins) and failure "
              "AUROC; 95% CIs resample seeds."),
        ("table", summary),
        ("h3", "Accuracy by variant"),
        ("table", variants),
        ("h3", "Calibration by task class (ECE, 10 bins, over the episodes whose confidence was read)"),
        ("table", calibration),
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
    to_float = value_to_float()  # Inspect's own reading of a score value: C/I/P/N letters, booleans, numbers
    for column in score_columns(samples, names):
        values = samples[column].map(lambda v: to_float(v) if isinstance(v, (str, bool, int, float)) else float("nan")).astype(float)
        for key, group in values.groupby([samples[k].fillna("") for k in keys] if keys else [0] * len(values), sort=True):
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False)), "score": column.removeprefix("score_"),
                         "mean": group.mean() if group.notna().any() else None, "scored": int(group.notna().sum()), "samples": len(group)})
    title = f"{ctx.suite.short_name}: scores per model"
    if not rows:
        logs = ctx.samples["log"].unique() if "log" in ctx.samples.columns else []
        section.skipped = [(str(log), f"no {', '.join(names)} score") for log in logs]
        return section
    table = pd.DataFrame(rows)
    section.summary = suite_summary(samples, {})
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
