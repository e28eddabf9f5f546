"""`clinical-cf`: catalog and cohort maintenance that Inspect's own CLI does not cover.

    clinical-cf catalog lock [CATALOG]          record the catalog's SHA-256 (pre-registration)
    clinical-cf catalog check [CATALOG]         validate the catalog and compare it with its lock
    clinical-cf catalog summary [--families D]  eligible / no-op / incoherent / residue / scored per intervention
                                [--cases F --show]  ... and per tuple the diff and the residue verdict
    clinical-cf catalog audit [--mode structured] shortcut audit: is each family's edit visible from the surface?
    clinical-cf cases validate CASES.jsonl      validate a cases file against the case schema
    clinical-cf cases import PATH... --out F    packet text -> cases JSONL, listing what it inferred and could not
    clinical-cf counterfactuals build --cases F --editor MODEL|regex|structured [--checker M] --out DIR
                                                frozen, verified, locked counterfactuals + review page
    clinical-cf validate FILE [--kind KIND]     validate any input file (kind detected), with its hash and lock status
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
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import resolve_user_path


def _catalog_default() -> Path:
    from clinical_cf.catalog.css import CATALOG_PATH

    return CATALOG_PATH


def _validate_catalog(path: Path) -> int:
    """Validate any pre-registered catalog or data file with the one validator; return its entry count."""
    from clinical_cf.catalog.validate import validate_file

    return validate_file(path).entries


def _families(value: str | None) -> list[str] | None:
    """--families as letters among A-E and N (controls); an unknown letter is an error, not an empty table."""
    if not value:
        return None
    letters = sorted({c.upper() for c in value if c.isalnum()})
    unknown = [c for c in letters if c not in "ABCDEN"]
    if unknown or not letters:
        raise ValueError(f"--families: got {value!r}; expected letters among A, B, C, D, E, N")
    return letters


def _cmd_lock(args: argparse.Namespace) -> int:
    from clinical_cf.core.locking import read_lock, write_lock

    path = resolve_user_path(args.catalog) if args.catalog else _catalog_default()
    _validate_catalog(path)  # never lock a catalog that does not validate
    before = read_lock(path)
    lock = write_lock(path)
    after = read_lock(path)
    change = "unchanged" if before.locked_sha256 == after.catalog_sha256 else f"was {before.locked_sha256 or 'unlocked'}"
    print(f"locked {path} -> {lock}\n  sha256 {after.catalog_sha256} ({change})")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from clinical_cf.core.locking import read_lock

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
    families = _families(args.families)
    expansion = expand_tuples(cases, catalog, args.mode, families=families, residue=args.residue)
    rows = expansion.summary()
    if args.json:
        print(json.dumps({"mode": args.mode, "residue": args.residue, "cases": len(cases), "interventions": rows}, indent=2))
        return 0
    print(f"{len(cases)} cases, mutation_mode={args.mode}, residue={args.residue}")
    header = f"{'intervention':<44}{'family':>7}{'eligible':>10}{'no-op':>8}{'incoherent':>12}{'residue':>9}{'scored':>8}"
    print(header + "\n" + "-" * len(header))
    totals = [0, 0, 0, 0, 0]
    for iid, row in rows.items():
        values = [int(row[k]) for k in ("eligible", "noop", "incoherent", "residue", "scored")]
        totals = [a + b for a, b in zip(totals, values, strict=False)]
        print(f"{iid:<44}{row['family']:>7}{values[0]:>10}{values[1]:>8}{values[2]:>12}{values[3]:>9}{values[4]:>8}")
    print("-" * len(header))
    print(f"{'total':<44}{'':>7}{totals[0]:>10}{totals[1]:>8}{totals[2]:>12}{totals[3]:>9}{totals[4]:>8}")
    if args.show:
        _show_tuples(expansion)
    if args.compare_modes:
        diff = mode_differences(cases, catalog, families=families)
        print(
            f"\nregex vs structured: {diff['differ']} tuples differ "
            f"({diff['tuples_regex']} regex tuples, {diff['tuples_structured']} structured; "
            f"{diff['only_regex']} only in regex, {diff['only_structured']} only in structured)"
        )
    return 0


def _show_tuples(expansion) -> None:
    """Per tuple: the case, the diff against the baseline and the residue verdict."""
    import difflib

    for t in sorted([*expansion.tuples, *expansion.dropped], key=lambda t: t.id):
        dropped = " (dropped)" if t in expansion.dropped else ""
        print(f"\n### {t.id}  [{t.verdict}{dropped}]")
        diff = difflib.unified_diff(t.baseline.text.split("\n"), t.counterfactual.text.split("\n"), lineterm="", n=0)
        for line in diff:
            if not line.startswith(("---", "+++", "@@")):
                print(f"  {line}")
        for hit in t.residue:
            print(f"  RESIDUE {hit.implication}/{hit.kind} in {hit.section}: {hit.line}")


def _cmd_counterfactuals_build(args: argparse.Namespace) -> int:
    """Freeze counterfactuals by an editor (a model role, or regex/structured mode) for review."""
    import asyncio

    from clinical_cf.catalog.css.counterfactuals import (
        build_counterfactuals,
        write_counterfactuals,
    )
    from clinical_cf.catalog.css.interventions import load_catalog
    from clinical_cf.catalog.css.schema import load_cases

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases))
    families = "".join(f for f in args.families.upper() if f.isalpha())
    editor: object = args.editor
    checker = None
    if args.editor not in ("regex", "structured"):
        from inspect_ai.model import GenerateConfig, get_model

        config = GenerateConfig(max_retries=args.max_retries, timeout=args.timeout)
        editor = get_model(args.editor, role="editor", config=config)
        checker = get_model(args.checker, role="checker", config=config) if args.checker else None
    elif args.checker:
        raise ValueError("--checker needs a model --editor (regex and structured edits are deterministic)")
    result = asyncio.run(
        build_counterfactuals(cases, catalog, editor, checker, families, args.retries, args.max_tokens, args.limit)  # type: ignore[arg-type]
    )
    paths = write_counterfactuals(result, args.out)
    print(f"{len(result.accepted)} counterfactuals accepted, {len(result.rejected)} rejected")
    for reason in sorted({r.reasons[0].split(":")[0] for r in result.rejected if r.reasons}):
        print(f"  rejected: {sum(1 for r in result.rejected if r.reasons and r.reasons[0].startswith(reason))} x {reason}")
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    print("review review.html, then evaluate with -T counterfactuals=" + str(paths["counterfactuals"]))
    return 0


def _cmd_counterfactuals_lock(args: argparse.Namespace) -> int:
    """Re-lock a frozen set after review (approvals), validating it first."""
    from clinical_cf.catalog.css.counterfactuals import FrozenCounterfactual
    from clinical_cf.core.loading import load_jsonl
    from clinical_cf.core.locking import write_lock

    path = resolve_user_path(args.path)
    entries = load_jsonl(path, FrozenCounterfactual, "tuple_id")
    print(f"locked {path} ({len(entries)} counterfactuals, {sum(e.approved for e in entries)} approved) -> {write_lock(path)}")
    return 0


def _cmd_counterfactuals_review(args: argparse.Namespace) -> int:
    """Write review decisions into a frozen set; the new lock covers them."""
    from clinical_cf.catalog.css.counterfactuals import apply_decisions

    path = resolve_user_path(args.path)
    _, counts = apply_decisions(path, resolve_user_path(args.decisions))
    print(f"recorded decisions in {path}: {counts['approved']} approved, {counts['rejected']} rejected, {counts['unreviewed']} unreviewed")
    print("re-locked; the lock covers the decisions")
    if counts["unreviewed"]:
        print(
            f"CSS tasks given this set refuse it until the {counts['unreviewed']} unreviewed entries are decided (or -T unreviewed=allow)"
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
    families = _families(args.families)
    table = audit(expand_tuples(cases, catalog, args.mode, families=families).tuples)
    print(table.to_string(index=False))
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


def _cmd_validate_cases(args: argparse.Namespace) -> int:
    """Validate a cases file, listing every problem of every line in one run."""
    from clinical_cf.catalog.css.schema import case_problems
    from clinical_cf.catalog.validate import validate_file

    problems = case_problems(resolve_user_path(args.path))
    if problems:
        for problem in problems:
            print(f"{args.path}: {problem}", file=sys.stderr)
        print(
            f"{args.path}: {len(problems)} problem(s); fix them all, then run `clinical-cf cases validate {args.path}` again",
            file=sys.stderr,
        )
        return 2  # bad input, as for every other input error
    result = validate_file(resolve_user_path(args.path), "cases")
    print(f"{args.path}: {result.entries} cases, valid")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from clinical_cf.catalog.validate import validate_file
    from clinical_cf.core.locking import read_lock
    from clinical_cf.registration import display_path, is_bundled, published_hashes

    path = resolve_user_path(args.path)
    result = validate_file(path, args.kind)
    status = read_lock(path)
    released = published_hashes().get(display_path(path)) if is_bundled(path) else None
    print(f"{args.path}: {result.kind}, {result.entries} entries, valid")
    print(f"  sha256 {status.catalog_sha256}")
    lock = "matches its lock" if status.registered else f"does not match its lock (locked: {status.locked_sha256 or 'none'})"
    print(f"  registered: {'yes' if status.registered else 'no'} ({lock} {status.lock_path})")
    if released is not None:
        print(f"  published: {'yes' if released == status.catalog_sha256 else 'no (released ' + released[:12] + '…)'}")
    return 0


def _cmd_import_cases(args: argparse.Namespace) -> int:
    """Packet text -> cases JSONL; prints what was inferred (to confirm) and what could not be."""
    from clinical_cf.catalog.css.importer import import_packet, read_packets
    from clinical_cf.catalog.css.interventions import load_catalog

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    reports = [import_packet(text, cid, catalog, source) for cid, source, text in read_packets(args.paths)]
    out = Path(args.out)
    todo = out.with_name(out.stem + ".todo.jsonl")
    ready = [r for r in reports if r.case is not None]
    out.write_text("".join(r.case.model_dump_json() + "\n" for r in ready), encoding="utf-8")  # type: ignore[union-attr]
    pending = [r for r in reports if r.case is None]
    if pending:
        todo.write_text("".join(json.dumps(r.draft, default=str) + "\n" for r in pending), encoding="utf-8")
    for r in reports:
        print(f"\n{r.case_id} ({r.source}): {'ready' if r.case else 'NEEDS INPUT'}")
        for key, value in r.inferred.items():
            print(f"  inferred {key}: {value}")
        for note in r.notes:
            print(f"  note: {note}")
        for item in r.missing:
            print(f"  could not infer: {item}")
    print(f"\nwrote {len(ready)} cases to {out}" + (f"; {len(pending)} need input, drafts in {todo}" if pending else ""))
    weak = sorted({f"{r.case_id}: {', '.join(r.weak)}" for r in reports if r.weak})
    if weak:
        print("inferred only indirectly (check these first): " + "; ".join(weak))
    print("confirm every inferred field (its evidence is quoted above): they decide which interventions apply")
    if pending:
        print(
            f"next: in {todo}, set each field listed under 'could not infer' on its case's line, then run\n"
            f"  clinical-cf cases validate {todo}\n"
            f"(it lists every remaining problem at once) and append the valid lines to {out}"
        )
    else:
        print(
            f"next: clinical-cf counterfactuals build --cases {out} --editor regex --out counterfactuals/"
            f" (or --editor MODEL --checker MODEL)"
        )
    return 0 if not pending else 1


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


def _margin(value: str) -> float:
    """--margin: a finite number >= 0 (`nan` would pass every candidate, `inf` every drop)."""
    import math

    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (got {value})")
    return number


def _positive_int(value: str) -> int:
    """An integer of at least 1 (`annotate export --n`)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {number})")
    return number


def _cmd_report(args: argparse.Namespace) -> int:
    import time

    from clinical_cf.analysis import report_cache

    predictions = None
    if args.confirmatory:
        from clinical_cf.catalog.css import CSS_DIR

        predictions = resolve_user_path(args.predictions) if args.predictions else CSS_DIR / "predictions.yaml"
    if args.gate and not args.baseline:
        raise SystemExit("--gate needs --baseline LOG_OR_DIR")
    cache = not args.no_cache
    out = Path(args.out)
    # Unchanged logs, labels, predictions and code: the same report, copied from the whole-report cache.
    key = report_cache.report_key(args.logs, args.label, predictions) if cache and not (args.rewards or args.gate) else None
    replayed = report_cache.restore(key, out)
    if replayed is not None:
        for line in replayed:
            print(line, file=sys.stderr)
        print(f"wrote {out / 'report.md'} (tables as CSV and figures next to it, report.html self-contained; "
              "unchanged logs: reused from the report cache)")
        return 0
    from clinical_cf.analysis.logs import label_map, list_logs, read_logs
    from clinical_cf.analysis.report import export_rewards, regression_gate
    from clinical_cf.analysis.sections import build_report

    started = time.time() - 1  # file times may be rounded down to the second
    tee = report_cache.Tee(sys.stderr)
    sys.stderr = tee
    try:
        # Each log's sample summaries are read once; the report, the rewards and the gate all take their rows from this read.
        labels = label_map(args.label, read=list_logs(args.logs, strict=True)) if args.label else None
        rows = read_logs(args.logs, progress=True, mode="summaries", labels=labels, strict=True, use_cache=cache)
        baseline = read_logs(args.baseline, suites=["css"], mode="summaries", strict=True, use_cache=cache) if args.gate else None
        report = build_report(rows, out, predictions)
    finally:
        sys.stderr = tee.stream
    report_cache.save(key, out, tee.lines, since=started)
    print(f"wrote {report} (tables as CSV and figures next to it, report.html self-contained)")
    if args.rewards:
        print(f"wrote {export_rewards(rows, args.rewards)} reward records to {args.rewards}")
    if args.gate:
        table, passed = regression_gate(rows, baseline, args.margin)
        from clinical_cf.analysis.report import gate_lines
        from clinical_cf.analysis.tables import write_table

        write_table(table, Path(args.out) / "gate.csv")
        for line in gate_lines(table):
            print(line)
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
    summary.add_argument("--residue", choices=["drop", "keep"], default="drop", help="drop (default) or keep tuples with residue")
    summary.add_argument("--show", action="store_true", help="print each tuple's diff and residue verdict")
    summary.add_argument("--json", action="store_true")
    summary.set_defaults(func=_cmd_summary)

    shortcut = catalog.add_parser("audit", help="shortcut audit: is each family's edit detectable from the surface?")
    shortcut.add_argument("--catalog")
    shortcut.add_argument("--cases")
    shortcut.add_argument("--families")
    shortcut.add_argument("--mode", choices=["regex", "structured"], default="regex")
    shortcut.add_argument("--out", help="also write the table as CSV")
    shortcut.set_defaults(func=_cmd_audit)

    frozen = sub.add_parser("counterfactuals", help="frozen counterfactual sets").add_subparsers(dest="action", required=True)
    build = frozen.add_parser("build", help="edit each applicable (case, intervention) by an editor, verify, lock, review page")
    build.add_argument("--cases", required=True, help="cases JSONL")
    build.add_argument("--editor", required=True, help="a model (the editor role, e.g. openai/gpt-4o), or regex / structured")
    build.add_argument("--checker", help="optional checker model: does anything still imply the original fact?")
    build.add_argument("--out", required=True, help="directory for counterfactuals.jsonl, its lock, rejected.jsonl, review.html")
    build.add_argument("--catalog")
    build.add_argument("--families", default="ABCDE", help="e.g. D or ABCDEN (default ABCDE; N only for regex/structured)")
    build.add_argument("--retries", type=int, default=1, help="retries of a rejected edit (default 1)")
    build.add_argument("--max-tokens", type=int, default=4096)
    build.add_argument("--max-retries", type=int, default=3, help="provider retries per call")
    build.add_argument("--timeout", type=int, default=300, help="seconds per model call")
    build.add_argument("--limit", type=int, help="only the first N (case, intervention) pairs")
    build.set_defaults(func=_cmd_counterfactuals_build)
    relock = frozen.add_parser("lock", help="validate a reviewed counterfactuals.jsonl and re-lock it")
    relock.add_argument("path")
    relock.set_defaults(func=_cmd_counterfactuals_lock)
    review = frozen.add_parser("review", help="record a reviewer's decisions (saved by review.html) in the set and re-lock it")
    review.add_argument("path", help="counterfactuals.jsonl")
    review.add_argument("--decisions", required=True, help="decisions JSONL saved by review.html")
    review.set_defaults(func=_cmd_counterfactuals_review)

    cases = sub.add_parser("cases", help="case files").add_subparsers(dest="action", required=True)
    validate = cases.add_parser("validate", help="validate a cases JSONL file")
    validate.add_argument("path")
    validate.set_defaults(func=_cmd_validate_cases)
    importer = cases.add_parser("import", help="packet text files (or one JSONL of texts) -> cases JSONL, inferences listed")
    importer.add_argument("paths", nargs="+")
    importer.add_argument("--out", required=True, help="cases JSONL to write (cases that need input go to OUT.todo.jsonl)")
    importer.add_argument("--catalog")
    importer.set_defaults(func=_cmd_import_cases)

    from clinical_cf.suites import input_kinds

    any_file = sub.add_parser("validate", help="validate any input file (cases, catalogs, questions, episodes, ...)")
    any_file.add_argument("path")
    # The kinds the suite specs declare (each suite's InputKinds): a suite's new input kind is validated here at once.
    any_file.add_argument("--kind", choices=list(input_kinds()), help="the file's kind (default: detected from its content)")
    any_file.set_defaults(func=_cmd_validate)

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
    report.add_argument("--margin", type=_margin, default=0.05, help="gate: largest tolerated CSS drop (default 0.05)")
    report.add_argument("--label", action="append", metavar="NAME=LOG_OR_DIR",
                        help="run label for the logs under LOG_OR_DIR (repeatable): labelled runs of one model are kept "
                             "apart instead of the latest replacing the earlier; default: each log's tags")
    report.add_argument("--no-cache", action="store_true",
                        help="parse every log again instead of reusing its rows cached by content hash "
                             "(CLINICAL_CF_CACHE_DIR, default the user cache folder)")
    report.set_defaults(func=_cmd_report)

    annotate = sub.add_parser("annotate", help="human validation of the judge").add_subparsers(dest="action", required=True)
    export = annotate.add_parser("export", help="blinded, family-stratified annotation sheet (CSV + HTML form) and its key")
    export.add_argument("logs", nargs="+")
    export.add_argument("--out", required=True)
    export.add_argument("--n", type=_positive_int, default=100, help="rows in the sheet (at least 1)")
    export.add_argument("--seed", type=int, default=0)
    export.set_defaults(func=_cmd_annotate_export)
    imp = annotate.add_parser("import", help="agreement between raters and with the LLM judge")
    imp.add_argument("raters", nargs="+", help="filled sheets, one per rater")
    imp.add_argument("--key", required=True)
    imp.add_argument("--out", required=True)
    imp.set_defaults(func=_cmd_annotate_import)

    from clinical_cf.analysis.workflow_controller import (
        build_parser as workflow_controller_parser,
    )
    from clinical_cf.analysis.workflow_controller import (
        run_args as workflow_controller_run,
    )

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
    except (OSError, UnicodeError) as ex:
        print(f"error: {getattr(ex, 'filename', None) or 'input'}: cannot read ({ex})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C (a long report): one line and the shell's status for SIGINT, no traceback. Outputs are
        # written atomically, so nothing half-written is left behind.
        print(f"clinical-cf {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
