"""A clinician's review packet for the bundled CSS content (`clinical-cf catalog review-packet`).

Why this module exists: the shipped benchmark is reviewed the way a user reviews their own frozen set.
It samples N scored tuples per intervention (seeded: the same packet on every machine), freezes them in
the frozen-set format, and writes the existing review page (`catalog.css.counterfactuals`, whose
`counterfactuals review --decisions` records the reviewer's decisions), plus what that page does not
show and a reviewer needs: each tuple's expected change, the intervention's scope and source, the
case's consensus labels and the route that made the counterfactual (`expectations.md`, `packet.json`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from clinical_cf.catalog.css.cohort import COHORT_VERSION
from clinical_cf.catalog.css.counterfactuals import BuildResult, freeze_tuple, write_counterfactuals
from clinical_cf.catalog.css.expand import CSSTuple, MutationMode, expand_tuples
from clinical_cf.catalog.css.interventions import Catalog
from clinical_cf.catalog.css.schema import Case
from clinical_cf.core.atomic import write_text_atomic

MAX_PER_INTERVENTION = 500


def sample_tuples(tuples: Iterable[CSSTuple], per_intervention: int, seed: int) -> list[CSSTuple]:
    """`per_intervention` tuples of each intervention (all of them when it has fewer), chosen by `seed`."""
    if not 1 <= per_intervention <= MAX_PER_INTERVENTION:
        raise ValueError(f"--per-intervention must be 1..{MAX_PER_INTERVENTION}, got {per_intervention}")
    by_intervention: dict[str, list[CSSTuple]] = {}
    for t in sorted(tuples, key=lambda t: t.id):
        by_intervention.setdefault(t.intervention.id, []).append(t)
    chosen: list[CSSTuple] = []
    for iid in sorted(by_intervention):
        pool = by_intervention[iid]
        # One generator per intervention, seeded by (seed, id): adding an intervention leaves the others' samples alone.
        rng = random.Random(f"{seed}:{iid}")
        chosen += sorted(rng.sample(pool, min(per_intervention, len(pool))), key=lambda t: t.id)
    return chosen


def _write_atomic(path: Path, text: str) -> None:
    write_text_atomic(path, text)  # whole or not at all, with the umask's mode


def _expectations(chosen: list[CSSTuple]) -> str:
    rows = ["# Expected changes of the sampled tuples", "",
            "Read with review.html (same order). For each: the expected change the judge scores against, the",
            "intervention's scope, and the case's consensus labels.", ""]
    for n, t in enumerate(chosen, 1):
        item, case = t.intervention, t.case
        rows.append(f"## {n}. {t.id} ({case.cancer_type}, stage {case.stage}, route {t.route})")
        rows.append("")
        rows.append(f"- **Expected change**: {item.expected_change_for(case)}")
        if item.scope is not None:
            rows.append(f"- **Scope**: {item.scope.holds} (source: {item.scope.source})")
        rows.append(f"- **Source**: {item.source}")
        rows.append("- **Consensus (baseline)**: " + "; ".join(f"{c.treatment} [{c.label}]" for c in case.consensus))
        rows.append("")
    return "\n".join(rows) + "\n"


def write_review_packet(
    cases: list[Case],
    catalog: Catalog,
    out_dir: str | Path,
    per_intervention: int,
    seed: int,
    mode: MutationMode = "auto",
    families: str = "ABCDE",
) -> dict[str, Path]:
    """Sample, freeze and write the review packet; returns the paths written."""
    expansion = expand_tuples(cases, catalog, mode, families=families)
    chosen = sample_tuples(expansion.tuples, per_intervention, seed)
    if not chosen:
        raise ValueError(f"no scored tuples for families {families!r}: nothing to review")
    result = BuildResult(accepted=[freeze_tuple(t, t.route) for t in chosen])
    out = Path(out_dir)
    paths = write_counterfactuals(result, out)
    expectations = out / "expectations.md"
    _write_atomic(expectations, _expectations(chosen))
    manifest = out / "packet.json"
    _write_atomic(manifest, json.dumps({
        "catalog_version": catalog.version,
        "cohort_version": COHORT_VERSION,
        "mode": mode,
        "families": families,
        "per_intervention": per_intervention,
        "seed": seed,
        "cases": len(cases),
        "scored_tuples": len(expansion.tuples),
        "sampled": {iid: sum(t.intervention.id == iid for t in chosen) for iid in sorted({t.intervention.id for t in chosen})},
        "routes": {r: sum(t.route == r for t in chosen) for r in sorted({t.route for t in chosen})},
        "invariant_drops": expansion.invariant_drops(),
        "tuples": [t.id for t in chosen],
    }, indent=2) + "\n")
    return {**paths, "expectations": expectations, "manifest": manifest}
