"""Build the sensitivity task: vignettes x applicable perturbations, skipped combinations counted."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Literal, get_args

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.core.locking import check_lock
from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import Perturbation, load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.exports.register import published_version
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.registration import register_inputs, registration_check
from clinical_cf.solvers.sensitivity import candidate_distributions
from clinical_cf.tasks.arguments import GENERATE_DEFAULTS, choice, clean_task_errors, flag, input_file, selection

TYPES: tuple[str, ...] = get_args(Perturbation.model_fields["type"].annotation)


@clean_task_errors
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
        reader: Model role that reads replies the distribution JSON or lines do not state; "none" turns it off.
    """
    wanted = selection("types", types, TYPES, all_word=False)
    allow_unregistered = flag("allow_unregistered", allow_unregistered)
    distribution = choice("distribution", distribution, ("verbalised", "logprob"))  # type: ignore[assignment]
    logprobs = flag("logprobs", logprobs)
    baseline_cache = flag("baseline_cache", baseline_cache)
    json_schema = flag("json_schema", json_schema)
    path = input_file("perturbations", perturbations) or PERTURBATIONS_PATH
    vignettes_path = input_file("vignettes", vignettes) or VIGNETTES_PATH
    registration = register_inputs([path], [vignettes_path], allow_unregistered)
    lock = check_lock(path, allow_unregistered=allow_unregistered)
    items, tolerance = load_perturbations(path)
    items = [p for p in items if p.type in wanted]
    if not items:
        raise ValueError(f"{path}: no perturbations of types {sorted(wanted)}")
    cases = load_vignettes(vignettes_path)
    skipped: Counter[str] = Counter()
    samples = []
    for v in cases:
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
                    "baseline_text": v.render(), "tolerance": asdict(tolerance), "catalog_sha256": lock.catalog_sha256,
                    "catalog_registered": lock.registered, **registration.sample_metadata(),
                },
            ))
    return Task(
        version=published_version("sensitivity"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(samples, name="sensitivity"),
        solver=candidate_distributions(baseline_cache, json_schema, logprobs, reader),
        scorer=[direction_consistency(distribution), registration_check()],
        config=GENERATE_DEFAULTS,
        metadata={"suite": "sensitivity", "catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered,
                  "samples": len(samples), "skipped": dict(skipped), "distribution": distribution,
                  **registration.task_metadata()},
    )
