"""`clinical-cf`: catalog and cohort maintenance that Inspect's own CLI does not cover.

    clinical-cf catalog lock [CATALOG]          record the catalog's SHA-256 (pre-registration)
    clinical-cf catalog check [CATALOG]         validate the catalog and compare it with its lock
    clinical-cf catalog summary [--families D]  eligible / no-op / incoherent / scored per intervention
    clinical-cf catalog audit [--mode structured] shortcut audit: is each family's edit visible from the surface?
    clinical-cf cases validate CASES.jsonl      validate a cases file against the case schema
    clinical-cf generate css [--out PATH]       regenerate the synthetic tumor-board cohort
    clinical-cf schema css-case                 print the case JSON Schema
    clinical-cf report LOGS... --out DIR        CSS comparison report (Tables 2-4, cross-judge) over many logs
    clinical-cf annotate export LOGS... --out D blinded human-validation sheet; `annotate import` scores it
    clinical-cf workflow-controller LOGS... [--out DIR]  workflow suite: detectors, tuned controller, lexical OOV audit
    clinical-cf export register [--interface-change]  inspect_evals Register eval.yaml per task (register/)
    clinical-cf export dataset --suite S --out D      a suite's data as JSONL plus a dataset card
    clinical-cf export lm-eval --out DIR              lm-evaluation-harness tasks for the suites that fit it

Running evaluations is `inspect eval`; viewing logs is `inspect view`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from clinical_cf.catalog.css.mutate import MutationError
from clinical_cf.catalog.errors import CatalogError
from clinical_cf.catalog.loading import resolve_user_path


def _catalog_default() -> Path:
    from clinical_cf.tasks.css_task import CATALOG_PATH

    return CATALOG_PATH


def _validate_catalog(path: Path) -> int:
    """Validate any pre-registered catalog (dispatching on its top-level key); return its entry count."""
    import yaml

    from clinical_cf.catalog.css.interventions import load_catalog
    from clinical_cf.catalog.css.observations import load_observations

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as ex:
        raise CatalogError(path, f"cannot read: {ex}") from None
    if isinstance(raw, dict) and "perturbations" in raw and "tolerance" in raw:
        from clinical_cf.catalog.sensitivity.perturbations import load_perturbations

        return len(load_perturbations(path)[0])
    if isinstance(raw, dict) and "perturbations" in raw:
        return len(load_observations(path))
    if isinstance(raw, dict) and "rules" in raw:
        from clinical_cf.catalog.medpic.rules import load_rules

        return len(load_rules(path))
    if isinstance(raw, dict) and "seeds" in raw:
        from clinical_cf.catalog.workflow.seeds import load_seeds

        return len(load_seeds(path))
    if isinstance(raw, dict) and "concepts" in raw:
        from clinical_cf.analysis.workflow_controller import load_audit

        return len(load_audit(path))
    if isinstance(raw, dict) and "predictions" in raw:
        from clinical_cf.catalog.css.predictions import load_predictions

        return len(load_predictions(path))
    return len(load_catalog(path).interventions)


def _cmd_lock(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.lock import read_lock, write_lock

    path = resolve_user_path(args.catalog) if args.catalog else _catalog_default()
    _validate_catalog(path)  # never lock a catalog that does not validate
    before = read_lock(path)
    lock = write_lock(path)
    after = read_lock(path)
    change = "unchanged" if before.locked_sha256 == after.catalog_sha256 else f"was {before.locked_sha256 or 'unlocked'}"
    print(f"locked {path} -> {lock}\n  sha256 {after.catalog_sha256} ({change})")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.lock import read_lock

    path = resolve_user_path(args.catalog) if args.catalog else _catalog_default()
    entries = _validate_catalog(path)
    status = read_lock(path)
    print(f"{path}: {entries} entries, valid")
    print(f"  sha256 {status.catalog_sha256}")
    if status.registered:
        print(f"  matches its lock {status.lock_path}")
        return 0
    print(f"  DOES NOT match its lock {status.lock_path} (locked: {status.locked_sha256 or 'none'})")
    return 1


def _cmd_summary(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.css import CASES_PATH
    from clinical_cf.catalog.css.expand import expand_tuples, mode_differences
    from clinical_cf.catalog.css.interventions import load_catalog
    from clinical_cf.catalog.css.schema import load_cases

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases) if args.cases else CASES_PATH)
    families = [f for f in args.families.upper() if f.isalpha()] if args.families else None
    expansion = expand_tuples(cases, catalog, args.mode, families=families)
    rows = expansion.summary()
    if args.json:
        print(json.dumps({"mode": args.mode, "cases": len(cases), "interventions": rows}, indent=2))
        return 0
    print(f"{len(cases)} cases, mutation_mode={args.mode}")
    header = f"{'intervention':<44}{'family':>7}{'eligible':>10}{'no-op':>8}{'incoherent':>12}{'scored':>8}"
    print(header + "\n" + "-" * len(header))
    totals = [0, 0, 0, 0]
    for iid, row in rows.items():
        values = [int(row["eligible"]), int(row["noop"]), int(row["incoherent"]), int(row["scored"])]
        totals = [a + b for a, b in zip(totals, values)]
        print(f"{iid:<44}{row['family']:>7}{values[0]:>10}{values[1]:>8}{values[2]:>12}{values[3]:>8}")
    print("-" * len(header))
    print(f"{'total':<44}{'':>7}{totals[0]:>10}{totals[1]:>8}{totals[2]:>12}{totals[3]:>8}")
    if args.compare_modes:
        diff = mode_differences(cases, catalog, families=families)
        print(
            f"\nregex vs structured: {diff['differ']} tuples differ "
            f"({diff['tuples_regex']} regex tuples, {diff['tuples_structured']} structured; "
            f"{diff['only_regex']} only in regex, {diff['only_structured']} only in structured)"
        )
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from clinical_cf.analysis.shortcuts import audit
    from clinical_cf.catalog.css import CASES_PATH
    from clinical_cf.catalog.css.expand import expand_tuples
    from clinical_cf.catalog.css.interventions import load_catalog
    from clinical_cf.catalog.css.schema import load_cases

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases) if args.cases else CASES_PATH)
    families = [f for f in args.families.upper() if f.isalpha()] if args.families else None
    table = audit(expand_tuples(cases, catalog, args.mode, families=families).tuples)
    print(table.to_string(index=False))
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


def _cmd_validate_cases(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.css.schema import load_cases

    cases = load_cases(resolve_user_path(args.path))
    print(f"{args.path}: {len(cases)} cases, valid")
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.css import CASES_PATH
    from clinical_cf.catalog.css.cohort import write_cohort

    out = write_cohort(Path(args.out) if args.out else CASES_PATH)
    print(f"wrote {out}")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.css.schema import case_json_schema

    print(json.dumps(case_json_schema(), indent=2))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from clinical_cf.analysis.report import export_rewards, regression_gate, write_report

    predictions = None
    if args.confirmatory:
        from clinical_cf.catalog.css import CSS_DIR

        predictions = resolve_user_path(args.predictions) if args.predictions else CSS_DIR / "predictions.yaml"
    report = write_report(args.logs, args.out, predictions)
    print(f"wrote {report} (tables as CSV and figures next to it, report.html self-contained)")
    if args.rewards:
        print(f"wrote {export_rewards(args.logs, args.rewards)} reward records to {args.rewards}")
    if args.gate:
        if not args.baseline:
            raise SystemExit("--gate needs --baseline LOG_OR_DIR")
        table, passed = regression_gate(args.logs, args.baseline, args.margin)
        table.to_csv(Path(args.out) / "gate.csv", index=False)
        for row in table[table["failed"]].itertuples():
            print(f"GATE FAILED: {row.model} family {row.family}: {row.why}")
        print("gate passed" if passed else "gate failed")
        return 0 if passed else 1
    return 0


def _cmd_annotate_export(args: argparse.Namespace) -> int:
    from clinical_cf.analysis.validation import export_sheet

    sheet, form, key = export_sheet(args.logs, args.out, n=args.n, seed=args.seed)
    print(f"raters get {sheet} or {form}; keep {key} away from them")
    return 0


def _cmd_annotate_import(args: argparse.Namespace) -> int:
    from clinical_cf.analysis.validation import agreement

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = agreement(args.key, args.raters)
    for name, table in tables.items():
        table.to_csv(out / f"validation_{name}.csv", index=False)
    print(tables["pairwise"].to_string(index=False))
    print(tables["llm_vs_humans"].to_string(index=False))
    print(f"tables written to {out}")
    return 0


def _cmd_export_register(args: argparse.Namespace) -> int:
    from clinical_cf.exports.register import REGISTER_DIR, export_register

    out = Path(args.out) if args.out else REGISTER_DIR
    # Elsewhere than the checkout's register/, the published record goes beside the entries.
    published = {"published_path": out / "published.json"} if args.out else {}
    for path in export_register(out, args.suite, args.interface_change, args.commit, **published):
        print(f"wrote {path}")
    return 0


def _cmd_export_dataset(args: argparse.Namespace) -> int:
    from clinical_cf.exports.datasets import export_dataset
    from clinical_cf.suites import get_suite

    for name, path in export_dataset(get_suite(args.suite), Path(args.out)).items():
        print(f"{name}: {path}")
    return 0


def _cmd_export_lm_eval(args: argparse.Namespace) -> int:
    from clinical_cf.exports.lm_eval import export_lm_eval

    for path in export_lm_eval(Path(args.out), args.suite):
        print(f"wrote {path}")
    print(f"run: lm_eval --include_path {args.out} --tasks clinical_cf ...")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clinical-cf", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    catalog = sub.add_parser("catalog", help="pre-registered intervention catalogs").add_subparsers(dest="action", required=True)
    lock = catalog.add_parser("lock", help="write the catalog's lock (a deliberate re-registration)")
    lock.add_argument("catalog", nargs="?")
    lock.set_defaults(func=_cmd_lock)
    check = catalog.add_parser("check", help="validate a catalog and compare it with its lock")
    check.add_argument("catalog", nargs="?")
    check.set_defaults(func=_cmd_check)
    summary = catalog.add_parser("summary", help="expansion counts per intervention (the CSS paper's Table 1)")
    summary.add_argument("--catalog")
    summary.add_argument("--cases")
    summary.add_argument("--families", help="e.g. D or ABCDEN (default: all)")
    summary.add_argument("--mode", choices=["regex", "structured"], default="regex")
    summary.add_argument("--compare-modes", action="store_true", help="also count tuples that differ between modes")
    summary.add_argument("--json", action="store_true")
    summary.set_defaults(func=_cmd_summary)

    shortcut = catalog.add_parser("audit", help="shortcut audit: is each family's edit detectable from the surface?")
    shortcut.add_argument("--catalog")
    shortcut.add_argument("--cases")
    shortcut.add_argument("--families")
    shortcut.add_argument("--mode", choices=["regex", "structured"], default="regex")
    shortcut.add_argument("--out", help="also write the table as CSV")
    shortcut.set_defaults(func=_cmd_audit)

    cases = sub.add_parser("cases", help="case files").add_subparsers(dest="action", required=True)
    validate = cases.add_parser("validate", help="validate a cases JSONL file")
    validate.add_argument("path")
    validate.set_defaults(func=_cmd_validate_cases)

    generate = sub.add_parser("generate", help="regenerate bundled synthetic data").add_subparsers(dest="action", required=True)
    css = generate.add_parser("css", help="the synthetic tumor-board cohort (catalog/css/cases.jsonl)")
    css.add_argument("--out")
    css.set_defaults(func=_cmd_generate)

    report = sub.add_parser("report", help="comparison report over many CSS logs (Tables 2-4, cross-judge)")
    report.add_argument("logs", nargs="+", help="log files or directories")
    report.add_argument("--out", required=True, help="output directory for report.md and the CSV tables")
    report.add_argument("--rewards", help="also write per-tuple reward records (JSONL) to this file")
    report.add_argument("--confirmatory", action="store_true", help="test the pre-registered predictions on the test split")
    report.add_argument("--predictions", help="predictions YAML (default: catalog/css/predictions.yaml; needs its lock)")
    report.add_argument("--baseline", nargs="+", help="reference logs for --gate")
    report.add_argument("--gate", action="store_true", help="exit 1 when a family's CSS drops against --baseline")
    report.add_argument("--margin", type=float, default=0.05, help="gate: largest tolerated CSS drop (default 0.05)")
    report.set_defaults(func=_cmd_report)

    annotate = sub.add_parser("annotate", help="human validation of the judge").add_subparsers(dest="action", required=True)
    export = annotate.add_parser("export", help="blinded, family-stratified annotation sheet (CSV + HTML form) and its key")
    export.add_argument("logs", nargs="+")
    export.add_argument("--out", required=True)
    export.add_argument("--n", type=int, default=100)
    export.add_argument("--seed", type=int, default=0)
    export.set_defaults(func=_cmd_annotate_export)
    imp = annotate.add_parser("import", help="agreement between raters and with the LLM judge")
    imp.add_argument("raters", nargs="+", help="filled sheets, one per rater")
    imp.add_argument("--key", required=True)
    imp.add_argument("--out", required=True)
    imp.set_defaults(func=_cmd_annotate_import)

    from clinical_cf.analysis.workflow_controller import build_parser as workflow_controller_parser
    from clinical_cf.analysis.workflow_controller import run_args as workflow_controller_run

    controller = sub.add_parser(
        "workflow-controller", help="post-hoc workflow-aware controller, detector P/R and lexical OOV audit over workflow logs"
    )
    workflow_controller_parser(controller)
    controller.set_defaults(func=workflow_controller_run)

    exports = sub.add_parser("export", help="plug into other harnesses and loaders").add_subparsers(dest="action", required=True)
    register = exports.add_parser("register", help="inspect_evals Register eval.yaml per suite, versioned N-X")
    register.add_argument("--out", help="register directory (default: the checkout's register/)")
    register.add_argument("--suite", action="append", help="only this suite (repeatable)")
    register.add_argument("--interface-change", action="store_true", help="bump X: the interface changed, scores did not")
    register.add_argument("--commit", help="pin this commit as the entries' source (default: the one pinned before, else HEAD)")
    register.set_defaults(func=_cmd_export_register)
    dataset = exports.add_parser("dataset", help="a suite's records and samples as JSONL with a dataset card")
    dataset.add_argument("--suite", required=True)
    dataset.add_argument("--out", required=True)
    dataset.set_defaults(func=_cmd_export_dataset)
    lm_eval = exports.add_parser("lm-eval", help="lm-evaluation-harness task YAML and data (MedPIC, workflow)")
    lm_eval.add_argument("--out", required=True)
    lm_eval.add_argument("--suite", action="append", help="only this suite (repeatable)")
    lm_eval.set_defaults(func=_cmd_export_lm_eval)

    schema = sub.add_parser("schema", help="print a JSON Schema").add_subparsers(dest="action", required=True)
    schema.add_parser("css-case", help="one line of a CSS cases file").set_defaults(func=_cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (CatalogError, MutationError, ValueError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
