"""Report sections, one per suite, registered on the `Suite` table (`clinical_cf.suites`).

A suite's entry names its section builder (`report_section`), and optionally extra per-sample
tables (`report_tables`) and banners (`report_banners`); `build_report` reads nothing itself: it
gets every log's rows once from `clinical_cf.analysis.logs` and hands each suite its own.

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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from clinical_cf.analysis.logs import LogRows
from clinical_cf.analysis.tables import markdown_table
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


SectionBuilder = Callable[[SectionContext], Section]


def _write(table: pd.DataFrame, out: Path, name: str) -> pd.DataFrame:
    table.to_csv(out / f"{name}.csv", index=False)
    return table


def build_report(rows: LogRows, out: Path, predictions: str | Path | None = None) -> Path:
    """Every registered suite's section over `rows`, then report.md and report.html in `out`."""
    from clinical_cf.analysis.html import render_report

    out.mkdir(parents=True, exist_ok=True)
    lead: list[Block] = []
    body: list[Block] = []
    skipped = list(rows.skipped)
    for suite in SUITES.values():
        samples = rows.suite(suite.name)
        if suite.report_section is None or samples.empty:
            continue
        ctx = SectionContext(suite, samples, rows.suite_logs(suite.name), out, Path(predictions) if predictions else None)
        section: Section = suite.report_section(ctx)
        skipped += section.skipped
        if not section.blocks and not section.lead:
            continue
        lead += section.lead
        for banner in suite.report_banners:
            body += [("banner", line) for line in banner(ctx.logs, ctx.samples)]
        body += section.blocks
        for function in suite.report_tables:
            table = function(ctx.samples)
            title = (function.__doc__ or function.__name__).strip().splitlines()[0]
            body += [("h3", title), ("table", _write(table, out, f"{suite.name}_{function.__name__}"))]
    blocks: list[Block] = [("h1", "Comparison report"), *lead]
    if skipped:
        blocks += [("h2", "Skipped logs"), ("list", [f"{p}: {why}" for p, why in skipped])]
    if not body:
        blocks.append(("p", "No usable " + ", ".join(s.name for s in SUITES.values() if s.report_section) + " logs."))
    blocks += body
    (out / "report.html").write_text(render_report(blocks), encoding="utf-8")
    report = out / "report.md"
    report.write_text(render_markdown(blocks, out), encoding="utf-8")
    return report


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
    section = Section(skipped=loaded.skipped)
    if loaded.rows.empty:
        return section
    out, blocks = ctx.out, section.blocks
    settings = dict(tuple(loaded.rows.groupby("setting")))
    for setting, rows in settings.items():
        t2, t2_note = table_cms_css(rows)
        t3 = table_families(rows)
        floor = table_instability(rows)
        if not floor.empty and not t3.empty:
            # Every effect next to its noise floor.
            t3 = t3.merge(floor[["model", "family", "instability"]], on=["model", "family"], how="left")
        t4 = table_verdicts(rows)
        cj, cj_note = table_cross_judge(rows)
        controls = table_controls(rows)
        paired = table_paired(rows)
        for name, table in (("cms_css", t2), ("families", t3), ("verdicts", t4), ("cross_judge", cj),
                            ("controls", controls), ("instability", floor), ("paired", paired)):
            _write(table, out, f"{setting}_{name}")
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
        lift = _write(agent_lift(settings["single_shot"], settings["agent"]), out, "agent_lift")
        blocks += [
            ("h2", "Single-shot vs agent (Figure 3)"),
            ("p", "CSS on the tuples both settings scored, per model and family; lift = agent - single-shot."),
            ("table", lift),
        ]
        if "D" in set(lift["family"]):
            blocks.append(("img", figures.agent_lift(lift, out / "figure3_agent_lift.png")))
    from clinical_cf.analysis.side_by_side import write_side_by_side

    write_side_by_side(ctx.samples, out / "side_by_side.html")
    blocks.append(("p", "Per-tuple outputs of every model side by side: side_by_side.html (self-contained, filterable)."))
    return section


def sensitivity_section(ctx: SectionContext) -> Section:
    """Sensitivity: direction consistency, flip rate, JS divergence per model and perturbation type."""
    from clinical_cf.analysis.report import sensitivity_rows, table_sensitivity

    rows = sensitivity_rows(ctx.samples)
    if rows.empty:
        return Section()
    profile = _write(table_sensitivity(rows), ctx.out, "sensitivity_profile")
    return Section([
        ("h2", "Sensitivity suite"),
        ("p", "Direction consistency per perturbation type (95% CIs clustered by vignette), flip rate, mean JS divergence "
              "(bits), relative change of the gold and entropy change."),
        ("table", profile),
    ])


def medpic_section(ctx: SectionContext) -> Section:
    """MedPIC: exact-set accuracy (GF, CF, activation, deactivation, pair) with rule-clustered CIs."""
    from clinical_cf.analysis.medpic import dimension_accuracy, medpic_rows, table_medpic

    rows = medpic_rows(ctx.samples)
    if rows.empty:
        return Section()
    table = _write(table_medpic(rows), ctx.out, "medpic")
    by_info = _write(dimension_accuracy(rows, "patient_info_type", kind="cf"), ctx.out, "medpic_cf_by_patient_info")
    return Section([
        ("h2", "MedPIC suite"),
        ("p", "Exact-set accuracy in %, 95% CIs from a rule-clustered bootstrap (2,000 resamples, seed 0); "
              "pair accuracy counts complete pairs with both members correct."),
        ("table", table),
        ("h3", "CF accuracy by patient-information type"),
        ("table", by_info),
    ])


def workflow_section(ctx: SectionContext) -> Section:
    """Workflow escalation: accuracy, utility, escalation errors, calibration on the test split; paired tests."""
    from clinical_cf.analysis.workflow import accuracy_by, paired_tests, select_split, summary_table, workflow_rows

    rows = workflow_rows(ctx.samples)
    if rows.empty:
        return Section()
    tested = select_split(rows, "test")
    summary = _write(summary_table(tested), ctx.out, "workflow_summary")
    variants = _write(accuracy_by(tested, "variant"), ctx.out, "workflow_by_variant")
    paired = _write(paired_tests(tested), ctx.out, "workflow_paired")
    return Section([
        ("h2", "Workflow escalation suite (test split)"),
        ("p", "Per model and condition: decision accuracy, utility at 5:1 and 10:1, missed and unnecessary "
              "escalation, ECE (10 bins) and failure AUROC; 95% CIs resample seeds."),
        ("table", summary),
        ("h3", "Accuracy by variant"),
        ("table", variants),
        ("h3", "Clean vs perturbed, paired by seed (exact sign test, Holm-corrected)"),
        ("table", paired),
    ])
