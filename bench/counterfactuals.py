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
import re
from collections import Counter, defaultdict
from pathlib import Path

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.completeness import evaluate_corpus, load_corpus
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases

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
    from clinical_cf.catalog.css.schema import PERCENT_STATUS  # noqa: F401  (status of percent values below)

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
    from pydantic import ValidationError

    from clinical_cf.catalog.css.importer import import_packet
    from clinical_cf.catalog.css.schema import Case

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
    import yaml

    from clinical_cf.catalog.css.completeness import _grade
    from clinical_cf.catalog.css.expand import expand_tuples

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
                from clinical_cf.catalog.css.completeness import MustApply

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", help=f"corpus YAML (repeatable; default {CORPUS} and {SECOND})")
    parser.add_argument("--catalog", help="also grade the corpus under this catalog (a baseline)")
    parser.add_argument("--v3-only", action="store_true", help=f"grade only corpus v3 ({CORPUS_V3})")
    args = parser.parse_args()
    catalog = load_catalog(CATALOG_PATH)
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
