"""`clinical-cf`: catalog and cohort maintenance that Inspect's own CLI does not cover.

    clinical-cf catalog lock [CATALOG]          record the catalog's SHA-256 (pre-registration)
    clinical-cf catalog check [CATALOG]         validate the catalog, audit its scopes and compare it with its lock
    clinical-cf catalog template --cancer-type T --marker M --out F   your own cancer type's intervention (TODOs to fill)
    clinical-cf catalog summary [--families D]  eligible / no-op / incoherent / residue / scored per intervention
                                [--cases F --show]  ... and per tuple the diff and the residue verdict
    clinical-cf catalog audit [--mode structured] shortcut audit: is each family's edit visible from the surface?
    clinical-cf catalog review-packet --per-intervention N --seed S --out DIR
                                                review page for N sampled bundled tuples per intervention
    clinical-cf cases validate CASES.jsonl      validate a cases file against the case schema
    clinical-cf cases import PATH... --out F    packet text -> F.questions.jsonl: every deciding field pre-filled, quoted
    clinical-cf cases answer F.questions.jsonl --out F   confirm/correct them; writes the confirmed cases to F
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
import asyncio
import difflib
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from inspect_ai.model import GenerateConfig, get_model

from clinical_cf.analysis import report_cache
from clinical_cf.analysis.logs import label_map, list_logs, read_logs
from clinical_cf.analysis.tables import write_table
from clinical_cf.analysis.workflow_controller import build_parser as workflow_controller_parser
from clinical_cf.analysis.workflow_controller import run_args as workflow_controller_run
from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH, CSS_DIR
from clinical_cf.catalog.css.cohort import write_cohort
from clinical_cf.catalog.css.counterfactuals import (
    FrozenCounterfactual,
    apply_decisions,
    build_counterfactuals,
    review_counts,
    write_counterfactuals,
    write_set_and_lock,
)
from clinical_cf.catalog.css.expand import expand_tuples, mode_differences
from clinical_cf.catalog.css.importer import answer_case, import_packet, pending_record, read_packets
from clinical_cf.catalog.css.interventions import intervention_template, load_catalog, scope_audit
from clinical_cf.catalog.css.invariants import RULE_IDS
from clinical_cf.catalog.css.mutate import MutationError
from clinical_cf.catalog.css.review_packet import MAX_PER_INTERVENTION, write_review_packet
from clinical_cf.catalog.css.schema import case_json_schema, case_notes, case_problems, load_cases
from clinical_cf.catalog.css.why import explain
from clinical_cf.core.atomic import same_file, write_text_atomic
from clinical_cf.core.errors import CatalogError, PrerequisiteError, Terminated, shown
from clinical_cf.core.loading import load_json_line, load_jsonl, read_text_checked, resolve_user_path, split_records
from clinical_cf.core.locking import exclusive, lock_path_for, read_lock, write_lock
from clinical_cf.core.options import MAX_COUNT, MAX_SEED, output_path, real_number, whole_number
from clinical_cf.exports.datasets import export_dataset
from clinical_cf.exports.lm_eval import export_lm_eval
from clinical_cf.exports.register import REGISTER_DIR, export_register
from clinical_cf.inputs import detect_kind, validate_file
from clinical_cf.registration import display_path, is_bundled, published_hashes
from clinical_cf.suites import get_suite, input_kinds

# Imports are at module level, except the analysis modules that bring scipy and scikit-learn (0.8-1.2 s of CPU each,
# measured after this module and its parser): the subcommand that needs one imports it, so `clinical-cf catalog lock`
# does not pay for a report.


def _catalog_default() -> Path:
    return CATALOG_PATH


def _validate_catalog(path: Path, kind: str | None = None) -> int:
    """Validate any pre-registered catalog or data file with the one validator; return its entry count."""
    return validate_file(path, kind).entries


def _families(value: str | None) -> list[str] | None:
    """--families as letters among A-E and N (controls); an unknown letter is an error, not an empty table."""
    if not value:
        return None
    letters = sorted({c.upper() for c in value if c.isalnum()})
    unknown = [c for c in letters if c not in "ABCDEN"]
    if unknown or not letters:
        raise ValueError(f"--families: got {shown(value)}; expected letters among A, B, C, D, E, N")
    return letters


def _cmd_lock(args: argparse.Namespace) -> int:
    path = resolve_user_path(args.catalog) if args.catalog else _catalog_default()
    _validate_catalog(path, args.kind)  # never lock a catalog that does not validate
    before = read_lock(path)
    lock = write_lock(path)
    after = read_lock(path)
    change = "unchanged" if before.locked_sha256 == after.catalog_sha256 else f"was {before.locked_sha256 or 'unlocked'}"
    print(f"locked {path} -> {lock}\n  sha256 {after.catalog_sha256} ({change})")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    path = resolve_user_path(args.catalog) if args.catalog else _catalog_default()
    entries = _validate_catalog(path, args.kind)
    status = read_lock(path)
    if _is_intervention_catalog(path):

        problems = scope_audit(load_catalog(path))
        if problems:
            # Scope audit: a direction without its setting and source cannot be scored (the bundled catalog passes it).
            for problem in problems:
                print(f"{path}: {problem}", file=sys.stderr)
            print(f"{path}: {len(problems)} scope problem(s); fix them, then `clinical-cf catalog check {path}` again", file=sys.stderr)
            return 2
    print(f"{path}: {entries} entries, valid")
    print(f"  sha256 {status.catalog_sha256}")
    if status.registered:
        print(f"  matches its lock {status.lock_path}")
        return 0
    print(f"  DOES NOT match its lock {status.lock_path} (locked: {status.locked_sha256 or 'none'})")
    return 1


def _is_intervention_catalog(path: Path) -> bool:
    try:
        return detect_kind(path) == "interventions"
    except CatalogError:
        return False


def _cmd_template(args: argparse.Namespace) -> int:
    """Write a catalog for a user's own cancer type: one marker flip, <TODO> where only the clinician can answer."""

    out = Path(args.out)
    if out.exists():
        raise CatalogError(out, "exists: choose another --out (a template never overwrites a catalog)", field="--out")
    text = intervention_template(args.cancer_type, args.marker, args.agent or [], args.id)
    write_text_atomic(out, text)
    todo = text.count("'<TODO")
    print(f"wrote {out}: one intervention ({args.marker} positive -> not detected, {args.cancer_type}); {todo} <TODO> to fill")
    print(f"next: fill each <TODO>, then `clinical-cf catalog check {out}` and `clinical-cf catalog lock {out}`;")
    print(f"      pass --catalog {out} to cases import/answer and counterfactuals build, -T catalog={out} to the CSS task")
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases) if args.cases else CASES_PATH)
    families = _families(args.families)
    expansion = expand_tuples(cases, catalog, args.mode, families=families, residue=args.residue)
    rows = expansion.summary()
    invariants = expansion.invariant_drops()
    if args.json:
        print(json.dumps({"mode": args.mode, "residue": args.residue, "cases": len(cases), "interventions": rows,
                          "invariant_drops": invariants, "routes": expansion.routes()}, indent=2))
        return 0
    print(f"{len(cases)} cases, mutation_mode={args.mode}, residue={args.residue}")
    keys = ("out_of_scope", "eligible", "noop", "incoherent", "residue", "scored")
    header = (f"{'intervention':<44}{'family':>7}{'out of scope':>14}{'eligible':>10}{'no-op':>8}{'incoherent':>12}"
              f"{'residue':>9}{'scored':>8}")
    print(header + "\n" + "-" * len(header))
    totals = [0] * len(keys)
    widths = (14, 10, 8, 12, 9, 8)
    for iid, row in rows.items():
        values = [int(row[k]) for k in keys]  # type: ignore[arg-type]
        totals = [a + b for a, b in zip(totals, values, strict=True)]
        print(f"{iid:<44}{row['family']:>7}" + "".join(f"{v:>{w}}" for v, w in zip(values, widths, strict=True)))
    print("-" * len(header))
    print(f"{'total':<44}{'':>7}" + "".join(f"{v:>{w}}" for v, w in zip(totals, widths, strict=True)))
    routes = expansion.routes()
    print("\nscored by route: " + (", ".join(f"{r} {n}" for r, n in sorted(routes.items())) or "none"))
    print("\nincoherent tuples by clinical invariant (catalog.css.invariants; a tuple breaking two counts under both):")

    for rule in RULE_IDS:
        print(f"  {rule:<32}{invariants.get(rule, 0):>6}")
    for rule in sorted(set(invariants) - set(RULE_IDS)):
        print(f"  {rule:<32}{invariants[rule]:>6}")
    if args.show:
        _show_tuples(expansion)
    if args.why:
        _show_why(args.why, cases, catalog, expansion)
    if args.compare_modes:
        diff = mode_differences(cases, catalog, families=families)
        print(
            f"\nregex vs structured: {diff['differ']} tuples differ "
            f"({diff['tuples_regex']} regex tuples, {diff['tuples_structured']} structured; "
            f"{diff['only_regex']} only in regex, {diff['only_structured']} only in structured)"
        )
    return 0


def _show_why(case_id: str, cases, catalog, expansion) -> None:
    """Per intervention: applies or not, and why (its filter's conditions with the case's values), then the tuple's fate."""

    case = next((c for c in cases if c.case_id == case_id), None)
    if case is None:
        raise CatalogError("--why", f"no case {case_id!r} in the cases file ({len(cases)} cases)", field="case_id")
    kept = {t.id for t in expansion.tuples}
    dropped = {t.id: t for t in expansion.dropped}
    print(f"\nwhy, for {case_id} ({case.cancer_type}, stage {case.stage}, metastatic={case.metastatic}, resected={case.resected}, "
          f"prior lines {case.prior_lines}):")
    for item in catalog.interventions:
        applies, reasons = explain(item, case)
        tid = f"{case_id}:{item.id}"
        fate = ""
        if applies:
            counts = expansion.counts.get(item.id)
            mine = [r for r in (counts.incoherent_reasons if counts else []) if r.startswith(f"{case_id}:")]
            fate = ("scored" if tid in kept else "dropped: residue" if tid in dropped else
                    f"dropped: incoherent ({mine[0].split(': ', 1)[1]})" if mine else "dropped: no-op or family not selected")
        print(f"  {item.id:<44} {'APPLIES' if applies else 'no':<8} {'; '.join(reasons)}" + (f" -> {fate}" if fate else ""))


def _cmd_review_packet(args: argparse.Namespace) -> int:
    families = "".join(_families(args.families) or []) or "ABCDE"
    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases) if args.cases else CASES_PATH)
    try:
        paths = write_review_packet(cases, catalog, args.out, args.per_intervention, args.seed, args.mode, families)
    except ValueError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2
    manifest = json.loads(paths["manifest"].read_text())
    print(f"{sum(manifest['sampled'].values())} tuples from {len(manifest['sampled'])} interventions (seed {args.seed}): {paths['review']}")
    print(f"  expected changes, scopes and consensus labels: {paths['expectations']}")
    print(f"  record decisions: clinical-cf counterfactuals review {paths['counterfactuals']} --decisions DECISIONS.jsonl")
    return 0


def _show_tuples(expansion) -> None:
    """Per tuple: the case, the diff against the baseline and the residue verdict."""

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

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    cases = load_cases(resolve_user_path(args.cases))
    families = "".join(f for f in args.families.upper() if f.isalpha())
    editor: object = args.editor
    checker = None
    if args.editor not in ("regex", "structured"):

        config = GenerateConfig(max_retries=args.max_retries, timeout=args.timeout)
        editor = _model_role(get_model, args.editor, "editor", config)
        checker = _model_role(get_model, args.checker, "checker", config) if args.checker else None
    elif args.checker:
        raise ValueError("--checker needs a model --editor (regex and structured edits are deterministic)")
    try:
        result = asyncio.run(
            build_counterfactuals(cases, catalog, editor, checker, families, args.retries, args.max_tokens, args.limit)  # type: ignore[arg-type]
        )
    except (CatalogError, MutationError, ValueError, KeyboardInterrupt):
        raise
    except Exception as ex:  # noqa: BLE001 - a provider's failure (refused, unauthorised, timed out) is one line, not a traceback
        if args.editor in ("regex", "structured"):
            raise
        raise ValueError(f"--editor {args.editor}{f' / --checker {args.checker}' if args.checker else ''}: a model call failed "
                         f"({_root_cause(ex)}); nothing was written") from None
    paths = write_counterfactuals(result, args.out)
    print(f"{len(result.accepted)} counterfactuals accepted, {len(result.rejected)} rejected")
    if args.editor not in ("regex", "structured") and not args.checker:
        print("note: no --checker: only the deterministic checks looked for residue; the review page is the only other reader")
    drafts = sum(e.draft for e in result.accepted)
    if drafts:
        print(f"note: {drafts} are regex drafts of cases without a record: scored only once a clinician approves them")
    for reason in sorted({r.reasons[0].split(":")[0] for r in result.rejected if r.reasons}):
        group = [r for r in result.rejected if r.reasons and r.reasons[0].startswith(reason)]
        # The whole first problem of each kind, not only its kind (rejected.jsonl has every one).
        print(f"  rejected: {len(group)} x {reason} (first, {group[0].tuple_id}: {' '.join(group[0].reasons[0].split())[:300]})")
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    print("review review.html, then evaluate with -T counterfactuals=" + str(paths["counterfactuals"]))
    return 0


def _root_cause(error: BaseException) -> str:
    """The first cause of a provider failure (Inspect's retries wrap it), as `Type: message` on one line."""
    while error.__cause__ is not None or (error.__context__ is not None and not error.__suppress_context__):
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"


def _model_role(get_model, name: str, role: str, config):
    """The model for a role, or one line naming what is missing (a provider's credential, its package)."""

    try:
        return get_model(name, role=role, config=config)
    except PrerequisiteError as ex:
        text = re.sub(r"\[/?[a-z ]+\]", "", str(ex)).replace("ERROR:", "")
        raise ValueError(f"--{role} {name}: {' '.join(text.split())}") from None
    except (ImportError, ValueError, KeyError) as ex:
        raise ValueError(f"--{role} {name}: cannot create the model ({type(ex).__name__}: {' '.join(str(ex).split())[:300]})") from None


def _cmd_counterfactuals_lock(args: argparse.Namespace) -> int:
    """Re-lock a frozen set after review (approvals), validating it first."""

    path = resolve_user_path(args.path)
    with exclusive(path, "counterfactuals lock"):  # not while a review of the set is being recorded
        return _relock_counterfactuals(path)


def _relock_counterfactuals(path: Path) -> int:
    entries = load_jsonl(path, FrozenCounterfactual, "tuple_id")
    # Locking never approves: a decision made on other text than the entry now holds is dropped, so an entry
    # edited after review (and re-locked, or with its lock deleted and re-created) must be reviewed again.
    stale = [e.tuple_id for e in entries if e.review == "stale"]
    entries = [
        e.model_copy(update={"approved": False, "decision": None, "approved_sha256": None, "reviewer": None}) if e.review == "stale" else e
        for e in entries
    ]
    write_set_and_lock(path, entries)
    counts = review_counts(entries)
    print(f"locked {path} ({len(entries)} counterfactuals: {counts['approved']} approved, {counts['rejected']} rejected, "
          f"{counts['unreviewed']} unreviewed) -> {lock_path_for(path)}")
    if stale:
        print(f"dropped {len(stale)} decision(s) made on other text than the entry now holds (first: {stale[0]}): review them again")
    return 0


def _cmd_counterfactuals_review(args: argparse.Namespace) -> int:
    """Write review decisions into a frozen set; the new lock covers them."""

    path = resolve_user_path(args.path)
    _, counts = apply_decisions(path, resolve_user_path(args.decisions))
    print(f"recorded decisions in {path}: {counts['approved']} approved, {counts['rejected']} rejected, {counts['unreviewed']} unreviewed"
          + (f", {counts['stale']} with a decision on other text (refused by tasks)" if counts["stale"] else ""))
    print("re-locked; the lock covers the decisions")
    if counts["unreviewed"]:
        print(
            f"CSS tasks given this set refuse it until the {counts['unreviewed']} unreviewed entries are decided (or -T unreviewed=allow)"
        )
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    # deferred: pandas, scipy and scikit-learn (0.8-1.2 s of CPU, measured) only for this subcommand
    from clinical_cf.analysis.shortcuts import audit

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
    problems = case_problems(resolve_user_path(args.path))
    _print_case_notes(args.path)
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


def _print_case_notes(shown: str) -> None:
    """What validation read as something else (a cancer-type synonym), one line each, before the verdict."""

    for note in case_notes(resolve_user_path(shown)):
        print(f"{shown}: note: {note}")


def _cmd_validate(args: argparse.Namespace) -> int:
    path = resolve_user_path(args.path)
    result = validate_file(path, args.kind)
    if result.kind == "cases":
        _print_case_notes(args.path)
    status = read_lock(path)
    released = published_hashes().get(display_path(path)) if is_bundled(path) else None
    print(f"{args.path}: {result.kind}, {result.entries} entries, valid")
    print(f"  sha256 {status.catalog_sha256}")
    lock = "matches its lock" if status.registered else f"does not match its lock (locked: {status.locked_sha256 or 'none'})"
    print(f"  registered: {'yes' if status.registered else 'no'} ({lock} {status.lock_path})")
    if released is not None:
        print(f"  published: {'yes' if released == status.catalog_sha256 else 'no (released ' + released[:12] + '…)'}")
    return 0


def _questions_path(out: Path) -> Path:
    return out.with_name(out.stem + ".questions.jsonl")


def _refuse_overwrite(out: Path, inputs: list[str], what: str) -> None:
    for raw in inputs:
        if same_file(out, raw):
            raise CatalogError(out, f"{what} would overwrite the input {raw}: choose another --out", field="--out")


def _cmd_import_cases(args: argparse.Namespace) -> int:
    """Packet text -> questions to confirm (every deciding field pre-filled with its quote); no case is written yet."""

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    out = Path(args.out)
    questions_path = _questions_path(out)
    _refuse_overwrite(out, args.paths, "--out")
    _refuse_overwrite(questions_path, args.paths, f"the questions file {questions_path.name}")
    reports = [import_packet(text, cid, catalog, source) for cid, source, text in read_packets(args.paths)]
    write_text_atomic(questions_path, "".join(json.dumps(pending_record(r), default=str) + "\n" for r in reports))
    for r in reports:
        print(f"\n{r.case_id} ({r.source})")
        for note in r.notes:
            print(f"  note: {note}")
        for name, q in r.questions.items():
            value = "?" if q["value"] is None else json.dumps(q["value"])
            quote = "" if not q["evidence"] else f"  <- {q['evidence'][:150]}"
            quoted = q["evidence"] and '"' in q["evidence"]
            check = "" if q["quote_verified"] or not q["evidence"] else (" [QUOTE NOT FOUND in the text]" if quoted else " [derived]")
            print(f"  {name} = {value}{' (weak)' if q['weak'] else ''}{quote}{check}")
    open_count = sum(1 for r in reports for q in r.questions.values() if q["value"] is None)
    print(
        f"\nwrote {len(reports)} packet(s) with their questions to {questions_path} ({open_count} without a pre-filled value);"
        f" nothing is written to {out} until you confirm"
    )
    print("every field above decides which interventions apply: confirm or correct each, in one place:")
    print(f"  clinical-cf cases answer {questions_path} --out {out}        (asks each open question in turn)")
    print(f"  clinical-cf cases answer {questions_path} --out {out} --confirm CASE --set CASE:stage=IIIB ...")
    return 1


def _cmd_answer_cases(args: argparse.Namespace) -> int:
    """Record confirmations and corrections; write each case whose every question is answered."""

    catalog = load_catalog(resolve_user_path(args.catalog) if args.catalog else _catalog_default())
    path = resolve_user_path(args.questions)
    out = Path(args.out)
    _refuse_overwrite(out, [str(path)], "--out")
    records = [load_json_line(line, path, n) for n, line in enumerate(split_records(read_text_checked(path)), 1) if line.strip()]
    by_id = {r["case_id"]: r for r in records if isinstance(r, dict) and "questions" in r}
    if len(by_id) != len(records):
        raise CatalogError(path, "not a questions file written by `clinical-cf cases import` (a line lacks case_id/questions)")
    answers: dict[str, dict[str, str]] = {}
    confirm: dict[str, set[str]] = {}
    for item in args.set or []:
        target, _, value = item.partition("=")
        cid, _, name = target.partition(":")
        if not value or not name or cid not in by_id:
            raise CatalogError(path, f"--set {item!r}: write CASE:FIELD=VALUE with a case of this file ({', '.join(list(by_id)[:4])} ...)")
        answers.setdefault(cid, {})[name] = value
    for item in args.confirm or []:
        cid, _, name = item.partition(":")
        if cid not in by_id:
            raise CatalogError(path, f"--confirm {item!r}: no case {cid!r} in this file")
        confirm.setdefault(cid, set()).add(name or "*")
    interactive = not (args.set or args.confirm) and sys.stdin.isatty()
    existing = {c.case_id: c for c in load_cases(out)} if out.exists() and out.stat().st_size else {}
    written, still_open = dict(existing), []
    updated = []
    for cid, record in by_id.items():
        if interactive:
            answers[cid], confirm[cid] = _ask_interactively(record)
        record, case, problems = answer_case(record, answers.get(cid), confirm.get(cid), catalog)
        updated.append(record)
        if case is not None:
            written[cid] = case
        else:
            still_open.append((cid, problems))
    write_text_atomic(path, "".join(json.dumps(r, default=str) + "\n" for r in updated))
    if written:
        write_text_atomic(out, "".join(c.model_dump_json() + "\n" for c in written.values()))
    print(f"wrote {len(written)} confirmed case(s) to {out}; answers recorded in {path}")
    for cid, problems in still_open:
        # The whole problem, one per line: "case" alone (the text before the first colon) told the user nothing.
        print(f"  {cid}: {len(problems)} open:")
        for problem in problems:
            print(f"    {problem}")
    if still_open:
        print(f"answer them: clinical-cf cases answer {path} --out {out} --set CASE:FIELD=VALUE (or --confirm CASE:FIELD)")
        return 1
    print(f"next: clinical-cf catalog summary --cases {out} --why CASE, then counterfactuals build --cases {out} --editor MODEL")
    return 0


def _ask_interactively(record: dict) -> tuple[dict[str, str], set[str]]:
    """Each unconfirmed question in turn: Enter keeps the pre-filled value, anything else corrects it."""
    answers: dict[str, str] = {}
    confirm: set[str] = set()
    print(f"\n{record['case_id']} ({record['source']})")
    for name, q in record["questions"].items():
        if q.get("confirmed"):
            continue
        shown = "?" if q["value"] is None else json.dumps(q["value"])
        print(f"  {name} = {shown}" + (f"  <- {q['evidence'][:150]}" if q.get("evidence") else ""))
        reply = input(f"    {q['ask']}\n    [Enter: keep {shown}] > ").strip()
        if reply:
            answers[name] = reply
        elif q["value"] is not None:
            confirm.add(name)
    return answers, confirm


def _cmd_generate(args: argparse.Namespace) -> int:
    out = write_cohort(Path(args.out) if args.out else CASES_PATH)
    print(f"wrote {out}")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(case_json_schema(), indent=2))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    predictions = None
    if args.confirmatory:
        predictions = resolve_user_path(args.predictions) if args.predictions else CSS_DIR / "predictions.yaml"
    if args.gate and not args.baseline:
        raise SystemExit("--gate needs --baseline LOG_OR_DIR")
    cache = not args.no_cache
    out = Path(args.out)
    # Unchanged logs, labels, predictions and code: the same report, copied from the whole-report cache.
    options = [*(args.label or []), *(["--include-incomplete"] if args.include_incomplete else [])]
    key = report_cache.report_key(args.logs, options, predictions) if cache and not (args.rewards or args.gate) else None
    replayed = report_cache.restore(key, out)
    if replayed is not None:
        for line in replayed:
            print(line, file=sys.stderr)
        print(f"wrote {out / 'report.md'} (tables as CSV and figures next to it, report.html self-contained; "
              "unchanged logs: reused from the report cache)")
        return 0
    # deferred: pandas, scipy and scikit-learn (0.8-1.2 s of CPU, measured) only for this subcommand
    from clinical_cf.analysis.report import export_rewards, regression_gate
    from clinical_cf.analysis.sections import REPORT_SUITES, build_report

    started = time.time() - 1  # file times may be rounded down to the second
    tee = report_cache.Tee(sys.stderr)
    sys.stderr = tee
    try:
        # Each log's sample summaries are read once; the report, the rewards and the gate all take their rows from this read.
        labels = label_map(args.label, read=list_logs(args.logs, strict=True)) if args.label else None
        rows = read_logs(args.logs, progress=True, mode="summaries", labels=labels, strict=True, use_cache=cache,
                         include_incomplete=args.include_incomplete, known_suites=REPORT_SUITES)
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
        # deferred: pandas, scipy and scikit-learn (0.8-1.2 s of CPU, measured) only for this subcommand
        from clinical_cf.analysis.report import gate_lines

        write_table(table, Path(args.out) / "gate.csv")
        for line in gate_lines(table):
            print(line)
        print("gate passed" if passed else "gate failed")
        return 0 if passed else 1
    return 0


def _cmd_annotate_export(args: argparse.Namespace) -> int:
    # deferred: pandas, scipy and scikit-learn (0.8-1.2 s of CPU, measured) only for this subcommand
    from clinical_cf.analysis.validation import export_sheet

    sheet, form, key = export_sheet(args.logs, args.out, n=args.n, seed=args.seed)
    print(f"raters get {sheet} or {form}; keep {key} away from them")
    return 0


def _cmd_annotate_import(args: argparse.Namespace) -> int:
    # deferred: pandas, scipy and scikit-learn (0.8-1.2 s of CPU, measured) only for this subcommand
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
    out = Path(args.out) if args.out else REGISTER_DIR
    # Elsewhere than the checkout's register/, the published record goes beside the entries.
    published = {"published_path": out / "published.json"} if args.out else {}
    for path in export_register(out, args.suite, args.interface_change, args.commit, **published):
        print(f"wrote {path}")
    return 0


def _cmd_export_dataset(args: argparse.Namespace) -> int:
    for name, path in export_dataset(get_suite(args.suite), Path(args.out)).items():
        print(f"{name}: {path}")
    return 0


def _cmd_export_lm_eval(args: argparse.Namespace) -> int:
    for path in export_lm_eval(Path(args.out), args.suite):
        print(f"wrote {path}")
    print(f"run: lm_eval --include_path {args.out} --tasks clinical_cf ...")
    return 0


class CommandLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line naming the argument (argparse prints the whole usage first).

    Subcommands' parsers are this class too (`add_subparsers` builds them with the parent's class).
    """

    def error(self, message: str) -> NoReturn:
        # argparse quotes the value it refused ("invalid choice: '...'"): never echoed whole (it may be a secret).
        message = re.sub(r"(invalid [^:']*: )'([^']*)'", lambda m: m.group(1) + shown(m.group(2)), message)
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


Argument = tuple[tuple[str, ...], dict[str, Any]]


def _arg(*flags: str, **options: Any) -> Argument:
    """One `add_argument` call, written as data so each command below is one line per argument."""
    return flags, options


def _command(
    parent: Any, name: str, help: str, func: Callable[[argparse.Namespace], int], *arguments: Argument, description: str | None = None
) -> Any:
    """A subcommand of `parent` (the action of `add_subparsers`) with its arguments and the function it runs."""
    command = parent.add_parser(name, help=help, description=description)
    for flags, options in arguments:
        command.add_argument(*flags, **options)
    command.set_defaults(func=func)
    return command


def _group(parent: Any, name: str, help: str) -> Any:
    """A subcommand that only holds subcommands (`catalog`, `cases`, `export`, ...): one of them is required."""
    return parent.add_parser(name, help=help).add_subparsers(dest="action", required=True)


SEED = whole_number(0, MAX_SEED)
MODES = _arg("--mode", choices=["regex", "structured"], default="regex")
AUTO_MODES = _arg("--mode", choices=["auto", "regex", "structured"], default="auto",
                  help="auto (default): structured for cases with a record, regex for the others")


def build_parser() -> argparse.ArgumentParser:
    parser = CommandLineParser(prog="clinical-cf", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for add_commands in (_catalog_commands, _counterfactual_commands, _case_commands, _input_commands, _report_commands,
                         _validation_commands, _export_commands):
        add_commands(sub)
    return parser


def _catalog_commands(sub: Any) -> None:
    catalog = _group(sub, "catalog", "pre-registered intervention catalogs")
    # --kind: the file's kind when its content does not say (the validator's own error asks for it).
    kind = _arg("--kind", choices=list(input_kinds()), help="the file's kind (default: detected from its content)")
    _command(catalog, "lock", "write the catalog's lock (a deliberate re-registration)", _cmd_lock, _arg("catalog", nargs="?"), kind)
    _command(catalog, "check", "validate a catalog, audit its scopes and compare it with its lock", _cmd_check,
             _arg("catalog", nargs="?"), kind)
    _command(
        catalog, "template", "write a catalog for your own cancer type: a marker flip with <TODO> where only you can answer",
        _cmd_template,
        _arg("--cancer-type", required=True, help="a lower-case type, e.g. cholangiocarcinoma"),
        _arg("--marker", required=True, help="the marker whose positive result is flipped to not detected, e.g. FGFR2"),
        _arg("--agent", action="append", help="a drug that presupposes the marker (repeatable), e.g. futibatinib"),
        _arg("--id", help="the intervention id (default U_<marker>_positive_to_negative_<type>)"),
        _arg("--out", required=True, help="the catalog YAML to write (never overwritten)"),
        description="Writes a schema-checked catalog with one intervention: the filter, the edit patterns, the residue "
        "vocabulary and the editor's instruction are written; the expected change, its scope, source and rationale are "
        "<TODO> placeholders, and every command and task refuses the file until they are filled. See "
        "docs/counterfactual-sets.md, 'Interventions for your own cancer types'.",
    )
    _command(
        catalog, "summary", "expansion counts per intervention (the CSS paper's Table 1)", _cmd_summary,
        _arg("--catalog"), _arg("--cases"), _arg("--families", help="e.g. D or ABCDEN (default: all)"), AUTO_MODES,
        _arg("--compare-modes", action="store_true", help="also count tuples that differ between modes"),
        _arg("--residue", choices=["drop", "keep"], default="drop", help="drop (default) or keep tuples with residue"),
        _arg("--show", action="store_true", help="print each tuple's diff and residue verdict"),
        _arg("--json", action="store_true"),
        _arg("--why", metavar="CASE", help="for this case, why each intervention does or does not apply"),
    )
    _command(
        catalog, "review-packet", "a clinician's review page for N sampled bundled tuples per intervention", _cmd_review_packet,
        _arg("--per-intervention", type=whole_number(1, MAX_PER_INTERVENTION), required=True,
             help=f"tuples sampled per intervention (1-{MAX_PER_INTERVENTION})"),
        _arg("--seed", type=SEED, required=True, help="sampling seed (the same packet on every machine)"),
        _arg("--out", type=output_path, required=True,
             help="directory for review.html, counterfactuals.jsonl, expectations.md, packet.json"),
        _arg("--catalog"), _arg("--cases"), _arg("--families", default="ABCDE", help="e.g. D or ABCDE (default ABCDE)"),
        _arg("--mode", choices=["auto", "regex", "structured"], default="auto"),
    )
    _command(
        catalog, "audit", "shortcut audit: is each family's edit detectable from the surface?", _cmd_audit,
        _arg("--catalog"), _arg("--cases"), _arg("--families"), MODES, _arg("--out", type=output_path, help="also write the table as CSV"),
    )


def _counterfactual_commands(sub: Any) -> None:
    frozen = _group(sub, "counterfactuals", "frozen counterfactual sets")
    _command(
        frozen, "build", "edit each applicable (case, intervention) by an editor, verify, lock, review page",
        _cmd_counterfactuals_build,
        _arg("--cases", required=True, help="cases JSONL"),
        _arg("--editor", required=True, help="a model (the editor role, e.g. openai/gpt-4o), or regex / structured"),
        _arg("--checker", help="optional checker model: does anything still imply the original fact?"),
        _arg("--out", type=output_path, required=True,
             help="directory for counterfactuals.jsonl, its lock, rejected.jsonl, review.html"),
        _arg("--catalog"),
        _arg("--families", default="ABCDE", help="e.g. D or ABCDEN (default ABCDE; N only for regex/structured)"),
        _arg("--retries", type=whole_number(0, 10), default=1, help="retries of a rejected edit (0-10, default 1)"),
        # The editor audit task's range (tasks/css_editor_audit): room to rewrite a section, at most what providers serve.
        _arg("--max-tokens", type=whole_number(256, 32_768), default=4096, help="output tokens per edit (256-32768, default 4096)"),
        _arg("--max-retries", type=whole_number(0, 100), default=3, help="provider retries per call (0-100, default 3)"),
        _arg("--timeout", type=whole_number(1, 86_400), default=300, help="seconds per model call (1-86400, default 300)"),
        _arg("--limit", type=whole_number(1, MAX_COUNT), help="only the first N (case, intervention) pairs"),
    )
    _command(
        frozen, "lock", "validate a counterfactuals.jsonl and re-lock it (drops decisions made on other text)", _cmd_counterfactuals_lock,
        _arg("path"),
    )
    _command(
        frozen, "review", "record a reviewer's decisions (saved by review.html) in the set and re-lock it",
        _cmd_counterfactuals_review,
        _arg("path", help="counterfactuals.jsonl"), _arg("--decisions", required=True, help="decisions JSONL saved by review.html"),
    )


def _case_commands(sub: Any) -> None:
    cases = _group(sub, "cases", "case files")
    _command(cases, "validate", "validate a cases JSONL file", _cmd_validate_cases, _arg("path"))
    _command(
        cases, "import", "packet text files (or one JSONL of texts) -> questions to confirm; writes only OUT.questions.jsonl",
        _cmd_import_cases,
        _arg("paths", nargs="+", help="packet .txt files, or .jsonl of {\"id\", \"text\"}"),
        _arg("--out", type=output_path, required=True, help="the cases JSONL that `cases answer` will write (never an input)"),
        _arg("--catalog"),
        description="Reads each packet (NFKC, invisible characters removed), pre-fills every field that decides applicability "
        "with the quote it came from, and writes ONLY the questions file OUT.questions.jsonl (OUT's name with .questions.jsonl). "
        "OUT itself is written by `clinical-cf cases answer` once every question of a case is confirmed or corrected. "
        "Exit status 1: questions are open.",
    )
    _command(
        cases, "answer", "confirm or correct the imported fields; writes each fully answered case to OUT", _cmd_answer_cases,
        _arg("questions", help="the OUT.questions.jsonl written by `cases import`"),
        _arg("--out", type=output_path, required=True, help="cases JSONL to write"),
        _arg("--set", action="append", metavar="CASE:FIELD=VALUE",
             help="correct (and confirm) one field, e.g. b1:resected=false, b1:biomarkers.PD-L1=positive (repeatable)"),
        _arg("--confirm", action="append", metavar="CASE[:FIELD]",
             help="confirm a pre-filled value as shown (CASE alone: all of that case's pre-filled values)"),
        _arg("--catalog", help="the catalog whose filters decide which markers are asked (default: the bundled one)"),
        description="Records answers in the questions file and writes OUT (cases already in OUT are kept; a re-answered case "
        "replaces its line). Without --set/--confirm on a terminal it asks each open question in turn (Enter keeps the value).",
    )


def _input_commands(sub: Any) -> None:
    _command(
        sub, "validate", "validate any input file (cases, catalogs, questions, episodes, ...)", _cmd_validate,
        _arg("path"),
        # The kinds the suite specs declare (each suite's InputKinds): a suite's new input kind is validated here at once.
        _arg("--kind", choices=list(input_kinds()), help="the file's kind (default: detected from its content)"),
    )

    generate = _group(sub, "generate", "regenerate bundled synthetic data")
    _command(generate, "css", "the synthetic tumor-board cohort (catalog/css/cases.jsonl)", _cmd_generate, _arg("--out"))


def _report_commands(sub: Any) -> None:
    _command(
        sub, "report", "comparison report over many CSS logs (Tables 2-4, cross-judge)", _cmd_report,
        _arg("logs", nargs="+", help="log files or directories"),
        _arg("--out", type=output_path, required=True, help="output directory for report.md and the CSV tables"),
        _arg("--rewards", type=output_path, help="also write per-tuple reward records (JSONL) to this file"),
        _arg("--confirmatory", action="store_true", help="test the pre-registered predictions on the test split"),
        _arg("--predictions", help="predictions YAML (default: catalog/css/predictions.yaml; needs its lock)"),
        _arg("--baseline", nargs="+", help="reference logs for --gate"),
        _arg("--gate", action="store_true", help="exit 1 when a family's CSS drops against --baseline"),
        # CSS lies in [0, 1]: a margin above 1 (or nan, inf) would pass every candidate.
        _arg("--margin", type=real_number(0.0, 1.0), default=0.05, help="gate: largest tolerated CSS drop (0-1, default 0.05)"),
        _arg("--label", action="append", metavar="NAME=LOG_OR_DIR",
             help="run label for the logs under LOG_OR_DIR (repeatable): labelled runs of one model are kept "
                  "apart instead of the latest replacing the earlier; default: each log's tags"),
        _arg("--no-cache", action="store_true",
             help="parse every log again instead of reusing its rows cached by content hash "
                  "(CLINICAL_CF_CACHE_DIR, default the user cache folder)"),
        _arg("--include-incomplete", action="store_true",
             help="also score the completed samples of logs whose eval did not complete (status error, cancelled, "
                  "started); listed with their status either way, and never replacing a complete run's samples"),
    )


def _validation_commands(sub: Any) -> None:
    annotate = _group(sub, "annotate", "human validation of the judge")
    _command(
        annotate, "export", "blinded, family-stratified annotation sheet (CSV + HTML form) and its key", _cmd_annotate_export,
        _arg("logs", nargs="+"), _arg("--out", type=output_path, required=True),
        _arg("--n", type=whole_number(1, MAX_COUNT), default=100, help="rows in the sheet (at least 1)"),
        _arg("--seed", type=SEED, default=0),
    )
    _command(
        annotate, "import", "agreement between raters and with the LLM judge", _cmd_annotate_import,
        _arg("raters", nargs="+", help="filled sheets, one per rater"), _arg("--key", required=True),
        _arg("--out", type=output_path, required=True),
    )

    controller = sub.add_parser(
        "workflow-controller", help="post-hoc workflow-aware controller, detector P/R and lexical OOV audit over workflow logs"
    )
    workflow_controller_parser(controller)
    controller.set_defaults(func=workflow_controller_run)


def _export_commands(sub: Any) -> None:
    exports = _group(sub, "export", "plug into other harnesses and loaders")
    _command(
        exports, "register", "inspect_evals Register eval.yaml per suite, versioned N-X", _cmd_export_register,
        _arg("--out", type=output_path, help="register directory (default: the checkout's register/)"),
        _arg("--suite", action="append", help="only this suite (repeatable)"),
        _arg("--interface-change", action="store_true", help="bump X: the interface changed, scores did not"),
        _arg("--commit", help="pin this commit as the entries' source (default: the one pinned before, else HEAD)"),
    )
    _command(
        exports, "dataset", "a suite's records and samples as JSONL with a dataset card", _cmd_export_dataset,
        _arg("--suite", required=True), _arg("--out", type=output_path, required=True),
    )
    _command(
        exports, "lm-eval", "lm-evaluation-harness task YAML and data (MedPIC, workflow)", _cmd_export_lm_eval,
        _arg("--out", type=output_path, required=True), _arg("--suite", action="append", help="only this suite (repeatable)"),
    )

    schema = _group(sub, "schema", "print a JSON Schema")
    _command(schema, "css-case", "one line of a CSS cases file", _cmd_schema)


def _terminate(signum, frame) -> NoReturn:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM ends a command as Ctrl-C does: raised where it runs, so worker pools are ended and files left whole.
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        return _run(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args))
    except (CatalogError, MutationError, ValueError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2
    except UnicodeError as ex:
        print(f"error: input: cannot read ({ex})", file=sys.stderr)
        return 2
    except OSError as ex:
        # By its real cause: a full disk on writing is not "cannot read".
        where = getattr(ex, "filename", None) or "input"
        print(f"error: {where}: {ex.strerror or ex}" + (f" (errno {ex.errno})" if ex.errno else ""), file=sys.stderr)
        return 2
    except KeyboardInterrupt as ex:
        # Ctrl-C or SIGTERM (a long report): one line and the shell's status for the signal, no traceback.
        # Outputs are written atomically, so nothing half-written is left behind.
        if isinstance(ex, Terminated):
            print(f"clinical-cf {args.command}: terminated", file=sys.stderr)
            return 143
        print(f"clinical-cf {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
