"""Before/after of the bundled CSS content, per defect class of the first and second clinical reviews.

    .venv/bin/python bench/css_content.py [--cases FILE] [--catalog FILE] [--mode auto|regex|structured] [--json]

Counts, over the default task's tuples (families A-E, residue dropped, no controls) and the whole
cohort: tuples with a wrong direction in their setting, incoherent counterfactual packets, baselines
that contradict themselves, wrong consensus labels, and (second review) staging that contradicts its record, structured
events without their evidence, wrong scopes and histories (see `clinical_cf.catalog.css.review_classes`).
The measured numbers are in docs/css-scope-audit.md.

`--timeline` (issue 42) counts, per timeline constraint (`catalog.css.invariants` rules 14-21), the arms that break it
before any drop (`catalog.css.arms`): every baseline and every in-scope A-E counterfactual of the bundled cohort, and of
`--generated` cases drawn by the cohort generator with other seeds (seeded, so the count is reproducible), with the
counterfactual arms broken down per intervention.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH, cohort
from clinical_cf.catalog.css.arms import arm_violations
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.invariants import RULES, TIMELINE_RULE_IDS
from clinical_cf.catalog.css.review_classes import (
    baseline_contradictions,
    counts,
    event_gaps,
    history_errors,
    incoherent,
    narrative_contradictions,
    scope_errors,
    staging_contradictions,
    wrong_direction,
    wrong_labels,
)
from clinical_cf.catalog.css.schema import Case, load_cases


def generated_cases(n: int, seed: int = 42) -> list[Case]:
    """n cases from the cohort generator with seeds other than the cohort's: every type, scenario slot and seed drawn."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        cancer_type = rng.choice(sorted(cohort.PLANNERS))
        slots = cohort._scenarios(cancer_type)
        index = rng.randint(1, len(slots))
        out.append(cohort._case(rng.randrange(2**31), cancer_type, index, *slots[index - 1]).model_copy(
            update={"case_id": f"gen{i}-{cancer_type}-{index:03d}"}))
    return out


def timeline(cases: list[Case], catalog_path: str) -> dict[str, dict[str, int]]:
    """Rule -> {'baseline': n, '<intervention>': n, 'cases': distinct cases}."""
    rules = [r for r in RULES if r.id in TIMELINE_RULE_IDS]
    broken = arm_violations(cases, load_catalog(catalog_path), rules)
    out = {}
    for rule, ids in broken.items():
        per = Counter(i.rsplit(":", 1)[1] for i in ids)
        out[rule] = {"arms": len(ids), "cases": len({i.rsplit(":", 1)[0] for i in ids}), **dict(sorted(per.items()))}
    return out


def measure(cases_path: str, catalog_path: str, mode: str) -> dict[str, object]:
    cases = load_cases(cases_path)
    catalog = load_catalog(catalog_path)
    expansion = expand_tuples(cases, catalog, mode, families="ABCDE")  # type: ignore[arg-type]
    tuples = expansion.tuples
    return {
        "mode": mode,
        "tuples": len(tuples),
        "cases": len(cases),
        "wrong_direction": counts(wrong_direction(tuples)),
        "incoherent": counts(incoherent(tuples)),
        "baseline_contradictions": counts(baseline_contradictions(cases)),
        "wrong_labels": counts(wrong_labels(cases)),
        # Second review (issue 34): staging arithmetic, incomplete structured events, scopes, histories.
        "staging_contradictions": counts(staging_contradictions(cases)),
        "event_gaps": counts(event_gaps(tuples)),
        "scope_errors": counts(scope_errors(tuples, cases, catalog)),
        "history_errors": counts(history_errors(cases)),
        "narrative_contradictions": counts(narrative_contradictions(cases)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=str(CASES_PATH))
    parser.add_argument("--catalog", default=str(CATALOG_PATH))
    parser.add_argument("--mode", default="auto", choices=["auto", "regex", "structured"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timeline", action="store_true", help="count the timeline constraints' broken arms only")
    parser.add_argument("--generated", type=int, default=200, help="generated cases for --timeline (default 200)")
    args = parser.parse_args()
    if args.timeline:
        result_t = {"bundled": timeline(load_cases(args.cases), args.catalog),
                    f"generated_{args.generated}": timeline(generated_cases(args.generated), args.catalog)}
        print(json.dumps(result_t, indent=2))
        return
    result = measure(args.cases, args.catalog, args.mode)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['cases']} cases, {result['tuples']} A-E tuples (mode {result['mode']})")
    for group in ("wrong_direction", "incoherent", "baseline_contradictions", "wrong_labels",
                  "staging_contradictions", "event_gaps", "scope_errors", "history_errors", "narrative_contradictions"):
        rows = result[group]
        assert isinstance(rows, dict)
        print(f"\n{group}: {sum(rows.values())}")
        for name, n in rows.items():
            print(f"  {n:>4}  {name}")


if __name__ == "__main__":
    main()
