"""The sensitivity task's parts: vignettes x applicable perturbations, skipped combinations counted (`tasks/sensitivity/`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from types import SimpleNamespace
from typing import Annotated, Literal, get_args

from inspect_ai.dataset import Sample

from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import Perturbation, load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.solvers.sensitivity import candidate_distributions
from clinical_cf.tasks.arguments import CommaList
from clinical_cf.tasks.build import TaskInputs, TaskParts

TYPES: tuple[str, ...] = get_args(Perturbation.model_fields["type"].annotation)

# The sensitivity task's own argument types (its signature is in tasks/sensitivity/sensitivity.py).
Types = Annotated[str | list[str], CommaList(TYPES, all_word=False)]
Distribution = Literal["verbalised", "logprob"]


def inputs(args: SimpleNamespace) -> TaskInputs:
    return TaskInputs(catalogs=[args.perturbations or PERTURBATIONS_PATH], data=[args.vignettes or VIGNETTES_PATH])


def parts(args: SimpleNamespace) -> TaskParts:
    path = args.perturbations or PERTURBATIONS_PATH
    items, tolerance = load_perturbations(path)
    items = [p for p in items if p.type in args.types]
    if not items:
        raise ValueError(f"{path}: no perturbations of types {sorted(args.types)}")
    skipped: Counter[str] = Counter()
    samples = []
    for v in load_vignettes(args.vignettes or VIGNETTES_PATH):
        for p in items:
            reason = p.skip_reason(v)
            if reason:
                skipped[f"{p.id}: {reason}"] += 1
                continue
            samples.append(Sample(
                id=f"{v.vignette_id}:{p.id}",
                input=p.render(v),
                target=v.gold,
                metadata={
                    "vignette_id": v.vignette_id, "presentation": v.presentation, "perturbation_id": p.id,
                    **({"invariance_attribute": p.attribute} if p.attribute else {}),
                    "type": p.type, "expected": p.expected_for(v), "expected_target": p.expected_target(v), "gold": v.gold,
                    "gold_index": v.candidates.index(v.gold), "candidates": v.candidates,
                    "baseline_text": v.render(), "tolerance": asdict(tolerance),
                },
            ))
    return TaskParts(
        samples=samples,
        solver=candidate_distributions(args.baseline_cache, args.json_schema, args.logprobs, args.reader),
        scorers=[direction_consistency(args.distribution)],
        dataset="sensitivity",
        metadata={"samples": len(samples), "skipped": dict(skipped), "distribution": args.distribution},
    )
