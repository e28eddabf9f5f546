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

    python bench/counterfactuals.py [--corpus PATH] [--catalog OTHER.yaml]
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.completeness import evaluate_corpus, load_corpus
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.catalog.css import CATALOG_PATH

CORPUS = "tests/fixtures/packets/corpus.yaml"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", help=f"corpus YAML (repeatable; default {CORPUS} and {SECOND})")
    parser.add_argument("--catalog", help="also grade the corpus under this catalog (a baseline)")
    args = parser.parse_args()
    catalog = load_catalog(CATALOG_PATH)
    for path in args.corpus or [CORPUS, SECOND]:
        corpus = load_corpus(path)
        if args.catalog:
            corpus_table(corpus, load_catalog(args.catalog), f"baseline {args.catalog}, {path}")
        corpus_table(corpus, catalog, f"catalog v{catalog.version}, {path}")
    cohort_table(catalog)


if __name__ == "__main__":
    main()
