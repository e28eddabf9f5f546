"""Counterfactual completeness on packets written by others (a benchmark, not a test).

Prints, for the hand-written corpus (tests/fixtures/packets/corpus.yaml, four styles the
generator does not use), in regex mode:
  applicability recall = correct and complete counterfactuals / must-apply tuples
  residue among scored = scored must-apply tuples that still say what the packet's author
                         listed as gone (goal 0), and tuples the residue check dropped
  outcomes per class   = complete / incomplete / residue / no-op / incoherent / not applicable
and, in the same run, the catalog's drop counts (no-op, incoherent, residue, scored) per
intervention family on the bundled cohort in regex and in structured mode. With
`--catalog OLD.yaml` the corpus is also graded under another catalog (e.g. version 1 from
git) as a baseline.

    python bench/counterfactuals.py [--corpus PATH] [--catalog OTHER.yaml] [--v3-only]

Corpus v3 (issue 22, bench/counterfactual_corpus_v3/) is raw packet text: each packet goes
through `cases import` as a user would, and the table reports, per mode:
  correct and complete / must-apply   (goal >= 90 %)
  incomplete scored                   scored tuples that still say an `absent` phrase or say
                                      none of the `present` ones (goal 0)
  wrongly applied                     must-not-apply tuples that were scored (goal 0)
  dropped by reason                   must-apply tuples not scored: refused case, not in the
                                      catalog, not applicable, no-op, incoherent, residue
  import rounds                       runs of import/validate until the case is accepted: a
                                      simulated user fixes exactly the fields each round names
                                      (a field the importer states is taken as stated)
  fields inferred wrong               fields the importer stated that differ from what the
                                      packet says (`expected` in the corpus)
Structured mode needs a structured record; imported packets have none, so it does not apply.
"""

from __future__ import annotations

import argparse
import difflib
import html
import os
import re
import tempfile
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import yaml
from pydantic import ValidationError

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH, importer
from clinical_cf.catalog.css.completeness import MustApply, _grade, evaluate_corpus, load_corpus
from clinical_cf.catalog.css.counterfactuals import BuildResult, freeze_tuple, render_review, suspect_statements
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.importer import import_packet
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import Case, load_cases
from clinical_cf.catalog.css.sentences import statements as _statements
from clinical_cf.core.errors import CatalogError
from clinical_cf.tasks.css.css import css

CORPUS = "tests/fixtures/packets/corpus.yaml"
CORPUS_V3 = "bench/counterfactual_corpus_v3/corpus.yaml"
SECOND = "tests/fixtures/packets/heldout.yaml"


def corpus_table(corpus, catalog, label: str) -> None:
    report = evaluate_corpus(corpus, catalog)
    outcomes = report.outcomes()
    print(f"\n[{label}] corpus: {len({g.case_id for g in report.graded})} packets, {report.must_apply} must-apply tuples")
    print(f"  applicability recall  {report.complete}/{report.must_apply} = {report.recall:.2f}")
    print(f"  residue among scored  {report.scored_with_residue}/{report.scored} (by the authors' expectations)")
    print(f"  dropped for residue   {outcomes.get('residue', 0)}")
    print("  outcomes              " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    by_style: dict[str, Counter] = defaultdict(Counter)
    for g in report.graded:
        by_style[g.style][g.outcome] += 1
    for style, counts in sorted(by_style.items()):
        print(f"    {style:<10} complete {counts['complete']}/{sum(counts.values())}")
    flagged = sum(f.outcome == "flagged" for f in report.flagged)
    print(f"  must-flag tuples dropped for residue: {flagged}/{len(report.flagged)}")
    for g in report.graded:
        if g.outcome != "complete":
            print(f"    {g.case_id} {g.intervention_id}: {g.outcome} {g.detail[:100]}")


def cohort_table(catalog) -> None:
    cases = load_cases(CASES_PATH)
    print(f"\nbundled cohort: {len(cases)} cases (drop counts per family)")
    print(f"  {'mode':<11}{'family':>7}{'eligible':>10}{'no-op':>8}{'incoherent':>12}{'residue':>9}{'scored':>8}")
    for mode in ("regex", "structured"):
        expansion = expand_tuples(cases, catalog, mode)
        per_family: dict[str, Counter] = defaultdict(Counter)
        for c in expansion.counts.values():
            per_family[c.family].update(
                {"eligible": c.eligible, "noop": c.noop, "incoherent": c.incoherent, "residue": c.residue, "scored": c.scored}
            )
        for family, c in sorted(per_family.items()):
            print(f"  {mode:<11}{family:>7}{c['eligible']:>10}{c['noop']:>8}{c['incoherent']:>12}{c['residue']:>9}{c['scored']:>8}")


GRADED_FIELDS = ("cancer_type", "sex", "age", "stage", "metastatic", "resected", "prior_lines", "board_date")


def _stage_group(stage: object) -> str:
    return re.sub(r"[A-C]?\d?$", "", str(stage)) if stage is not None else ""


def _marker_status(value: object) -> str:
    text = str(value)
    if not text.endswith("%"):
        return text
    number = float(re.sub(r"[^\d.]", "", text) or 0)
    return "positive" if number >= 1 else "negative"


def wrong_fields(draft: dict, missing: set[str], expected: dict) -> list[str]:
    """Fields the importer stated (not left for the user) whose value differs from the packet."""
    wrong = []
    for name in GRADED_FIELDS:
        if name in missing or name not in draft or draft[name] is None:
            continue
        got, want = draft[name], expected[name]
        if name == "stage":
            same = _stage_group(got) == _stage_group(want)
        else:
            same = str(got) == str(want)
        if not same:
            wrong.append(f"{name}={got!r} (packet: {want!r})")
    markers = draft.get("biomarkers") or {}
    if "biomarkers" not in missing:
        for name, want in (expected.get("biomarkers") or {}).items():
            got = markers.get(name)
            if got is None or _marker_status(got) != want:
                wrong.append(f"biomarkers.{name}={got!r} (packet: {want!r})")
    return wrong


def _problem_field(problem: str) -> str:
    return re.split(r"[\s:.(]", problem.strip(), maxsplit=1)[0]


def import_as_user(packet: dict, catalog) -> tuple[object, int, list[str], str]:
    """(case or None, import rounds, fields inferred wrong, why refused) for one raw packet."""

    expected = packet["expected"]
    report = import_packet(packet["text"], packet["id"], catalog, source="synthetic")
    problems = [_problem_field(p) for p in report.missing]
    unknown = set(problems) | set(getattr(report, "unknown", []) or [])
    wrong = wrong_fields(report.draft, unknown, expected)
    draft = dict(report.draft)
    if report.case is not None and not problems:
        return report.case, 1, wrong, ""
    rounds, fixed = 1, set()
    while rounds < 6:
        rounds += 1
        for name in problems:
            if name in ("", "__root__") or name not in (*GRADED_FIELDS, "biomarkers", "consensus"):
                # A whole-case problem (stage disagrees with metastatic ...): the user sets both as the packet says.
                for f in ("stage", "metastatic"):
                    draft[f] = expected[f]
                continue
            if name == "consensus":
                draft["consensus"] = [{"treatment": "the plan written in the packet", "label": "tacit"}]
            elif name == "biomarkers":
                draft["biomarkers"] = dict(expected.get("biomarkers") or {})
            else:
                if name in fixed and draft.get(name) == expected[name]:
                    return None, rounds, wrong, f"{name}={expected[name]!r} is refused by the case schema"
                draft[name] = expected[name]
            fixed.add(name)
        try:
            return Case.model_validate(draft), rounds, wrong, ""
        except ValidationError as ex:
            problems = [str(e["loc"][0]) if e["loc"] else "" for e in ex.errors()]
    return None, rounds, wrong, "still invalid after 5 rounds"


def v3_table(path: str, catalog) -> None:
    packets = yaml.safe_load(Path(path).read_text(encoding="utf-8"))["packets"]
    known = {i.id for i in catalog.interventions}
    must_apply = complete = incomplete = wrongly = must_not = 0
    dropped: Counter = Counter()
    rounds_hist: Counter = Counter()
    wrong_total = 0
    lines: list[str] = []
    by_style: dict[str, Counter] = defaultdict(Counter)
    for packet in packets:
        case, rounds, wrong, refused = import_as_user(packet, catalog)
        rounds_hist[rounds] += 1
        wrong_total += len(wrong)
        if wrong:
            lines.append(f"    {packet['id']}: inferred wrong: {'; '.join(wrong)}")
        kept, drop = {}, {}
        counts = {}
        if case is not None:
            expansion = expand_tuples([case], catalog, "regex", residue="drop")
            kept = {t.intervention.id: t for t in expansion.tuples}
            drop = {t.intervention.id: t for t in expansion.dropped}
            counts = expansion.counts
        for spec in packet["must_apply"]:
            must_apply += 1
            iid = spec["id"]
            outcome, detail = "", ""
            if case is None:
                outcome, detail = "refused_case", refused
            elif iid not in known:
                outcome = "not_in_catalog"
            elif iid in kept:

                outcome, detail = _grade(kept[iid], MustApply(id=iid, absent=spec.get("absent", []), present=spec.get("present", [])))
            elif iid in drop:
                outcome = "residue"
                detail = "; ".join(f"[{h.section}] {h.line[:70]}" for h in drop[iid].residue[:2])
            elif not catalog.by_id(iid).applies_to.matches(case):
                outcome = "not_applicable"
            else:
                mine = [r for r in counts[iid].incoherent_reasons if r.startswith(f"{case.case_id}:")]
                outcome, detail = ("incoherent", mine[0]) if mine else ("noop", "")
            by_style[packet["style"]][outcome] += 1
            if outcome == "complete":
                complete += 1
            elif outcome == "incomplete":
                incomplete += 1
            else:
                dropped[outcome] += 1
            if outcome != "complete":
                lines.append(f"    {packet['id']} {iid}: {outcome} {detail[:110]}")
        for spec in packet.get("must_not_apply", []):
            must_not += 1
            if spec["id"] in kept:
                wrongly += 1
                lines.append(f"    {packet['id']} {spec['id']}: WRONGLY APPLIED ({spec['why']})")
    print(f"\n[catalog v{catalog.version}, regex mode] corpus v3 {path}: {len(packets)} raw packets")
    print(f"  correct and complete   {complete}/{must_apply} = {complete / must_apply:.2f}")
    print(f"  incomplete scored      {incomplete}")
    print(f"  wrongly applied        {wrongly}/{must_not} must-not-apply tuples")
    print("  dropped by reason      " + (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"))
    print("  import rounds          " + ", ".join(f"{n} round{'s' if n > 1 else ''}: {c}" for n, c in sorted(rounds_hist.items())))
    print(f"  fields inferred wrong  {wrong_total}")
    for style, counts_ in sorted(by_style.items()):
        print(f"    {style:<10} complete {counts_['complete']}/{sum(counts_.values())}")
    print("  structured mode        not applicable (imported packets carry no structured record)")
    print("\n".join(lines))


CORPUS_V4 = "bench/counterfactual_corpus_v4/corpus.yaml"
INVISIBLE = {"{BOM}": "\ufeff", "{ZWSP}": "\u200b", "{ZWJ}": "\u200d", "{RLO}": "\u202e", "{LRO}": "\u202d", "{PDF}": "\u202c",
             "{LRM}": "\u200e"}
"""The corpus writes invisible characters as names; the bench puts the characters in place."""


def load_v4(path: str = CORPUS_V4) -> list[dict]:
    packets = yaml.safe_load(Path(path).read_text(encoding="utf-8"))["packets"]
    for packet in packets:
        for name, char in INVISIBLE.items():
            packet["text"] = packet["text"].replace(name, char)
            for spec in packet["must_apply"]:
                spec["absent"] = [a.replace(name, "") for a in spec.get("absent", [])]
    return packets


def _visible(text: str) -> str:
    """Text as a reader sees it: format characters (zero-width, bidi controls, BOM) are invisible."""

    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _user_case(packet: dict, catalog):
    """(case, fields pre-filled wrong, of those used without the user's confirmation, fields the user had to type).

    The simulated user reads the packet (`expected`) and answers every question the importer
    asks: a field to confirm is confirmed when right and corrected when wrong; a missing one is
    typed. A field the importer uses without asking is taken as it is.
    """

    if not hasattr(importer, "answer_case"):  # the importer before issue 28: stated values are used as stated
        case, _rounds, wrong, refused = import_as_user(packet, catalog)
        report = importer.import_packet(packet["text"], packet["id"], catalog, source="synthetic")
        typed = len(report.missing)
        return case, wrong, wrong, typed, refused
    report = importer.import_packet(packet["text"], packet["id"], catalog, source="synthetic")
    asked = set(report.questions)
    wrong = [w for w in wrong_fields(report.draft, set(), packet["expected"]) if "=None " not in w]  # None: left open, asked
    unconfirmed_wrong = [w for w in wrong if w.split("=")[0] not in asked]
    answers: dict = {}
    confirm: set[str] = set()
    typed = 0
    for name, question in report.questions.items():
        want = _expected_value(packet["expected"], name, question.get("value"))
        if question.get("value") is None or str(question["value"]) != str(want):
            typed += question.get("value") is None
            answers[name] = want
        else:
            confirm.add(name)
    _record, case, problems = importer.answer_case(importer.pending_record(report), answers, confirm)
    return case, wrong, unconfirmed_wrong, typed, "; ".join(problems)[:160]


def _expected_value(expected: dict, name: str, prefilled: object):
    """What the packet says: the corpus's `expected`; for a field it does not grade, the pre-filled value stands."""
    if name.startswith("biomarkers."):
        marker = name.split(".", 1)[1]
        graded = expected.get("biomarkers") or {}
        if marker in graded:
            return graded[marker] if _marker_status(prefilled) != graded[marker] else prefilled
        return prefilled if prefilled is not None else "not_tested"
    if name == "stage" and _stage_group(prefilled) == _stage_group(expected.get(name)):
        return prefilled
    if name == "consensus":
        return "the plan written in the packet"
    if name in ("stage_date", "operation"):
        return prefilled if prefilled is not None else ("none" if name == "operation" and not expected["resected"] else "unknown")
    return expected.get(name)


def _default_scored(cases) -> int | str:
    """Counterfactual samples the CSS task scores by default (`-T cases=` alone) for these imported cases."""

    handle, tmp = tempfile.mkstemp(suffix=".jsonl")
    os.close(handle)
    Path(tmp).write_text("".join(c.model_dump_json() + "\n" for c in cases), encoding="utf-8")
    try:
        task = css(cases=tmp, controls="none", split="all")
        return sum(1 for s in task.dataset if not str(s.id).endswith(":N"))
    except (CatalogError, ValueError) as ex:
        return f"0 (refused: {str(ex).splitlines()[0][:120]})"
    finally:
        os.unlink(tmp)


def _highlighted(page: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", m)).lower() for m in re.findall(r'<mark class="suspect"[^>]*>(.*?)</mark>', page, re.S)]


def highlight_table(path: str, catalog) -> None:
    """The review page's highlighting on a corpus of cases written by others (not used to build it)."""

    corpus = load_corpus(path)
    statements_found = marked = 0
    missed = []
    for entry in corpus:
        expansion = expand_tuples([entry.case], catalog, "regex", residue="drop")
        drafts = {t.intervention.id: t for t in [*expansion.tuples, *expansion.dropped]}
        page = render_review(BuildResult(accepted=[freeze_tuple(t, "regex") for t in drafts.values()]))
        marks = _highlighted(page)
        for spec in entry.must_apply:
            t = drafts.get(spec.id)
            if t is None:
                continue
            text = _visible(t.counterfactual.text).lower()
            for phrase in spec.absent:
                if phrase.lower() in text:
                    statements_found += 1
                    hit = any(phrase.lower() in m for m in marks)
                    marked += hit
                    if not hit:
                        missed.append(f"    {entry.case.case_id} {spec.id}: {phrase!r}")
    share = marked / statements_found if statements_found else 1.0
    print(f"\n[review page, {path}] residue statements in regex drafts highlighted: {marked}/{statements_found} = {share:.2f}")
    print("\n".join(missed))


def v4_table(path: str, catalog) -> dict:
    """Issue 28's corpus: import as a user, then regex mode; the review page's highlights of the drafts."""

    packets = load_v4(path)
    must_apply = complete = incomplete = wrongly = must_not = 0
    wrong_total = unconfirmed_total = typed_total = 0
    residue_statements = highlighted = 0
    marked_total = statement_total = drafts_total = 0
    dropped: Counter = Counter()
    lines: list[str] = []
    cases = []
    for packet in packets:
        case, wrong, unconfirmed, typed, refused = _user_case(packet, catalog)
        wrong_total += len(wrong)
        unconfirmed_total += len(unconfirmed)
        typed_total += typed
        if wrong:
            lines.append(f"    {packet['id']}: pre-filled wrong: {'; '.join(wrong)}" + (" (UNCONFIRMED)" if unconfirmed else ""))
        kept, drop = {}, {}
        if case is not None:
            cases.append(case)
            expansion = expand_tuples([case], catalog, "regex", residue="drop")
            kept = {t.intervention.id: t for t in expansion.tuples}
            drop = {t.intervention.id: t for t in expansion.dropped}
            drafts = [*expansion.tuples, *expansion.dropped]
            page = render_review(BuildResult(accepted=[freeze_tuple(t, "regex") for t in drafts]))
            marks = _highlighted(page)

            marked_total += len(marks)
            statement_total += sum(len(_statements(t.counterfactual.text)) for t in drafts)
            drafts_total += len(drafts)
            for spec in packet["must_apply"]:
                t = kept.get(spec["id"]) or drop.get(spec["id"])
                if t is None:
                    continue
                text = _visible(t.counterfactual.text).lower()
                for phrase in spec.get("absent", []):
                    if phrase.lower() in text:
                        residue_statements += 1
                        hit = any(phrase.lower() in m for m in marks)
                        highlighted += hit
                        if not hit:
                            lines.append(f"    {packet['id']} {spec['id']}: residue not highlighted: {phrase!r}")
        for spec in packet["must_apply"]:
            must_apply += 1
            iid = spec["id"]
            if case is None:
                outcome, detail = "refused_case", refused
            elif iid in kept:
                outcome, detail = _grade(kept[iid], MustApply(id=iid, absent=spec.get("absent", []), present=spec.get("present", [])))
            elif iid in drop:
                outcome, detail = "residue", "; ".join(f"[{h.section}] {h.line[:70]}" for h in drop[iid].residue[:2])
            elif not catalog.by_id(iid).applies_to.matches(case):
                outcome, detail = "not_applicable", ""
            else:
                outcome, detail = "noop_or_incoherent", ""
            if outcome == "complete":
                complete += 1
            elif outcome == "incomplete":
                incomplete += 1
            else:
                dropped[outcome] += 1
            if outcome != "complete":
                lines.append(f"    {packet['id']} {iid}: {outcome} {detail[:110]}")
        for spec in packet.get("must_not_apply", []):
            must_not += 1
            if spec["id"] in kept or spec["id"] in drop:
                wrongly += 1
                lines.append(f"    {packet['id']} {spec['id']}: WRONGLY APPLIED ({spec['why']})")
    scored_default = _default_scored(cases) if cases else 0
    print(f"\n[catalog v{catalog.version}, regex mode, issue-28 route] {path}: {len(packets)} raw packets, "
          f"{len({p['style'] for p in packets})} styles")
    print(f"  fields pre-filled wrong            {wrong_total}")
    print(f"  ... used without confirmation      {unconfirmed_total}   (goal 0)")
    print(f"  fields the user had to type        {typed_total}")
    print(f"  wrongly applied                    {wrongly}/{must_not} must-not-apply tuples (goal 0)")
    print(f"  correct and complete (regex)       {complete}/{must_apply}")
    print(f"  incomplete regex drafts            {incomplete}")
    print("  not produced by reason             " + (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"))
    print(f"  unreviewed scored by default       {scored_default}   (goal 0; `-T cases=` alone)")
    share = highlighted / residue_statements if residue_statements else 1.0
    print(f"  residue highlighted on review page {highlighted}/{residue_statements} = {share:.2f}   (goal >= 0.90)")
    print(f"  statements marked (reviewer load)  {marked_total}/{statement_total} statements of {drafts_total} drafts"
          f" = {marked_total / max(statement_total, 1):.2f} (the share a reviewer is pointed at)")
    print("\n".join(lines))
    return {"unconfirmed_wrong": unconfirmed_total, "wrongly_applied": wrongly, "highlighted": share}


CORPUS_V5 = "bench/counterfactual_corpus_v5/corpus.yaml"
USER_CATALOG_V5 = "bench/counterfactual_corpus_v5/user_interventions.yaml"
"""The user's own interventions for corpus v5's new cancer types, written by following docs/counterfactual-sets.md."""


def _marks_of(draft) -> list[str]:
    return _highlighted(render_review(BuildResult(accepted=[draft])))


def v5_table(path: str, catalog, user_catalog_path: str | None = USER_CATALOG_V5) -> dict:
    """Issue 35's corpus: import as a user; deciding markers asked; drafts: verdicts, residue P/R, forbidden wording."""

    packets = load_v4(path)
    user_catalog = None
    if user_catalog_path and Path(user_catalog_path).exists():
        user_catalog = load_catalog(user_catalog_path)
    t = Counter()
    dropped: Counter = Counter()
    lines: list[str] = []
    cases = []
    for packet in packets:

        report = importer.import_packet(packet["text"], packet["id"], catalog, source="synthetic")
        for marker in packet.get("must_ask", []):
            t["must_ask"] += 1
            if f"biomarkers.{marker}" in report.questions:
                t["asked"] += 1
            else:
                lines.append(f"    {packet['id']}: deciding marker {marker} never asked")
        case, wrong, unconfirmed, _typed, refused = _user_case(packet, catalog)
        t["wrong"] += len(wrong)
        t["silent"] += len(unconfirmed)
        if wrong:
            lines.append(f"    {packet['id']}: pre-filled wrong: {'; '.join(wrong)}" + (" (UNCONFIRMED)" if unconfirmed else ""))
        drafts: dict[str, object] = {}
        kept: dict[str, object] = {}
        if case is not None:
            cases.append(case)
            for cat in [catalog] + ([user_catalog] if user_catalog else []):
                expansion = expand_tuples([case], cat, "regex", residue="drop")
                kept.update({x.intervention.id: x for x in expansion.tuples})
                drafts.update({x.intervention.id: x for x in [*expansion.tuples, *expansion.dropped]})
        for iid, tup in drafts.items():
            text = _visible(tup.counterfactual.text).lower()
            for phrase in packet.get("forbidden", []):
                if phrase.lower() in text and phrase.lower() not in _visible(tup.baseline.text).lower():
                    t["forbidden"] += 1
                    lines.append(f"    {packet['id']} {iid}: draft inserts forbidden wording {phrase!r}")
        for spec in packet["must_apply"]:
            t["must_apply"] += 1
            iid = spec["id"]
            tup = drafts.get(iid)
            if tup is not None:
                frozen = freeze_tuple(tup, "regex")
                marks = _marks_of(frozen)
                text = _visible(tup.counterfactual.text).lower()
                surviving = [p for p in spec.get("absent", []) if p.lower() in text]
                t["marks"] += len(marks)
                t["true_marks"] += sum(1 for m in marks if any(p.lower() in m for p in surviving))
                for phrase in surviving:
                    t["residue"] += 1
                    if any(phrase.lower() in m for m in marks):
                        t["highlighted"] += 1
                    else:
                        lines.append(f"    {packet['id']} {iid}: residue not highlighted: {phrase!r}")
                if surviving and frozen.verdict == "complete":
                    t["complete_with_residue"] += 1
                    lines.append(f"    {packet['id']} {iid}: draft called {frozen.verdict!r} but still says {surviving}")
                t["drafts"] += 1
                t["called_complete"] += frozen.verdict == "complete"
                # A lazy editor that changed one statement only (the regex draft's first changed line, the rest as the
                # baseline): does the page point the reviewer at every statement of the old fact still there?
                lazy = _lazy_draft(frozen)
                lazy_marks = _marks_of(lazy.model_copy(update={"suspects": suspect_statements(lazy, tup.intervention, case)}))
                lazy_text = _visible("\n".join(lazy.counterfactual_sections.values())).lower()
                for phrase in spec.get("absent", []):
                    if phrase.lower() in lazy_text:
                        t["lazy_residue"] += 1
                        if any(phrase.lower() in m for m in lazy_marks):
                            t["lazy_highlighted"] += 1
                        else:
                            lines.append(f"    {packet['id']} {iid}: (lazy edit) residue not highlighted: {phrase!r}")
                t["lazy_marks"] += len(lazy_marks)
                t["lazy_true_marks"] += sum(1 for m in lazy_marks if any(p.lower() in m for p in spec.get("absent", [])))
            if case is None:
                outcome, detail = "refused_case", refused
            elif iid in kept:
                outcome, detail = _grade(kept[iid], MustApply(id=iid, absent=spec.get("absent", []), present=spec.get("present", [])))
            elif iid in drafts:
                outcome, detail = "residue", ""
            elif iid.startswith("U") and user_catalog is None:
                outcome, detail = "not_in_catalog", "no user intervention for this type"
            else:
                owner = user_catalog if iid.startswith("U") else catalog
                try:
                    applies = owner.by_id(iid).applies_to.matches(case)
                except KeyError:
                    applies = None
                outcome, detail = ("not_applicable", "") if applies is False else ("not_produced", "")
            if outcome == "complete":
                t["complete"] += 1
            elif outcome == "incomplete":
                t["incomplete"] += 1
            else:
                dropped[outcome] += 1
            if outcome != "complete":
                lines.append(f"    {packet['id']} {iid}: {outcome} {detail[:110]}")
        for spec in packet.get("must_not_apply", []):
            t["must_not"] += 1
            if spec["id"] in drafts:
                t["wrongly"] += 1
                lines.append(f"    {packet['id']} {spec['id']}: WRONGLY APPLIED ({spec['why']})")
    print(f"\n[catalog v{catalog.version}{' + user catalog' if user_catalog else ''}, regex drafts, issue-35 route] {path}: "
          f"{len(packets)} raw packets, {len({p['style'] for p in packets})} styles")
    print(f"  fields pre-filled wrong (asked or not)   {t['wrong']}   (goal 0)")
    print(f"  ... used without confirmation (silent)   {t['silent']}   (goal 0)")
    print(f"  deciding markers asked                   {t['asked']}/{t['must_ask']}")
    print(f"  wrongly applied                          {t['wrongly']}/{t['must_not']} must-not-apply tuples (goal 0)")
    print(f"  correct and complete (regex drafts)      {t['complete']}/{t['must_apply']}")
    print(f"  incomplete regex drafts                  {t['incomplete']}")
    print("  not produced by reason                   " + (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"))
    print(f"  drafts called complete / drafts          {t['called_complete']}/{t['drafts']}")
    print(f"  ... called complete with residue         {t['complete_with_residue']}   (goal 0)")
    print(f"  forbidden wording inserted               {t['forbidden']}   (goal 0)")
    print(f"  unreviewed scored by default             {_default_scored(cases) if cases else 0}   (goal 0; `-T cases=` alone)")
    recall = t["highlighted"] / t["residue"] if t["residue"] else 1.0
    precision = t["true_marks"] / t["marks"] if t["marks"] else 1.0
    print(f"  residue highlighted (recall)             {t['highlighted']}/{t['residue']} = {recall:.2f}")
    print(f"  highlights on a listed residue (precision, lower bound) {t['true_marks']}/{t['marks']} = {precision:.2f}")
    lazy_recall = t["lazy_highlighted"] / t["lazy_residue"] if t["lazy_residue"] else 1.0
    lazy_precision = t["lazy_true_marks"] / t["lazy_marks"] if t["lazy_marks"] else 1.0
    print(f"  lazy one-statement edits: residue highlighted {t['lazy_highlighted']}/{t['lazy_residue']} = {lazy_recall:.2f}; "
          f"highlights on a listed residue {t['lazy_true_marks']}/{t['lazy_marks']} = {lazy_precision:.2f}")
    print("\n".join(lines))
    return dict(t)


def _lazy_draft(frozen):
    """The draft with only its first changed line kept: every other statement of the old fact is still there."""
    sections = dict(frozen.baseline_sections)
    for name in sections:
        before, after = frozen.baseline_sections[name].split("\n"), frozen.counterfactual_sections[name].split("\n")
        if before != after:

            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
                if tag != "equal":
                    sections[name] = "\n".join(before[:i1] + after[j1:j2] + before[i2:])
                    return frozen.model_copy(update={"counterfactual_sections": sections})
    return frozen.model_copy(update={"counterfactual_sections": sections})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", help=f"corpus YAML (repeatable; default {CORPUS} and {SECOND})")
    parser.add_argument("--catalog", help="also grade the corpus under this catalog (a baseline)")
    parser.add_argument("--v3-only", action="store_true", help=f"grade only corpus v3 ({CORPUS_V3})")
    parser.add_argument("--v4-only", action="store_true", help=f"grade only corpus v4 ({CORPUS_V4}, issue 28)")
    parser.add_argument("--v5-only", action="store_true", help=f"grade only corpus v5 ({CORPUS_V5}, issue 35)")
    args = parser.parse_args()
    catalog = load_catalog(CATALOG_PATH)
    v5_table(CORPUS_V5, catalog)
    if args.v5_only:
        return
    v4_table(CORPUS_V4, catalog)
    if args.v4_only:
        return
    v4_table(CORPUS_V3, catalog)  # the same route on corpus v3 (written before issue 28: a check of generality)
    for path in (CORPUS, SECOND):
        highlight_table(path, catalog)
    v3_table(CORPUS_V3, catalog)
    if args.v3_only:
        return
    for path in args.corpus or [CORPUS, SECOND]:
        corpus = load_corpus(path)
        if args.catalog:
            corpus_table(corpus, load_catalog(args.catalog), f"baseline {args.catalog}, {path}")
        corpus_table(corpus, catalog, f"catalog v{catalog.version}, {path}")
    cohort_table(catalog)


if __name__ == "__main__":
    main()
