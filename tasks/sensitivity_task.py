"""Build the sensitivity task: vignettes x applicable perturbations, skipped combinations counted."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from functools import partial
from types import SimpleNamespace
from typing import Literal, get_args

from inspect_ai import Task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import Perturbation, load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.solvers.sensitivity import candidate_distributions
from clinical_cf.suites import SENSITIVITY
from clinical_cf.tasks.arguments import choice, flag, input_file, model_role, selection
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task

TYPES: tuple[str, ...] = get_args(Perturbation.model_fields["type"].annotation)


def _inputs(args: SimpleNamespace) -> TaskInputs:
    return TaskInputs(catalogs=[args.perturbations or PERTURBATIONS_PATH], data=[args.vignettes or VIGNETTES_PATH])


def _parts(args: SimpleNamespace) -> TaskParts:
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
                input=p.apply(v).render(),
                target=v.gold,
                metadata={
                    "vignette_id": v.vignette_id, "presentation": v.presentation, "perturbation_id": p.id,
                    "type": p.type, "expected": p.expected_for(v), "gold": v.gold,
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


SPEC = TaskSpec(
    suite=SENSITIVITY,
    arguments={
        "types": partial(selection, allowed=TYPES, all_word=False),
        "allow_unregistered": flag,
        "distribution": partial(choice, allowed=("verbalised", "logprob")),
        "logprobs": flag,
        "baseline_cache": flag,
        "json_schema": flag,
        "reader": model_role,
        "perturbations": input_file,
        "vignettes": input_file,
    },
    inputs=_inputs,
    parts=_parts,
)


def build_sensitivity_task(
    types: str | list[str] = "surface,clinical_semantic,background,conflicting_result,timeline",
    vignettes: str | None = None,
    perturbations: str | None = None,
    allow_unregistered: bool = False,
    distribution: Literal["verbalised", "logprob"] = "verbalised",
    logprobs: bool = True,
    baseline_cache: bool = True,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Sensitivity of the candidate distribution to pre-registered perturbations (seed 001).

    Args:
        types: Comma-separated perturbation types to run.
        vignettes: JSONL of vignettes (default: the bundled 60).
        perturbations: Perturbation catalog YAML (default: bundled; needs its lock).
        allow_unregistered: Run a perturbation catalog that does not match its lock.
        distribution: Which distribution the scores use: "verbalised" JSON or option-letter "logprob".
        logprobs: Also request the logprob distribution (kept in the store either way it is scored).
        baseline_cache: Share the unperturbed arm across a vignette's perturbations.
        json_schema: Send the distribution's JSON Schema as `response_schema`.
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
    """
    return build_task(SPEC, **locals())
