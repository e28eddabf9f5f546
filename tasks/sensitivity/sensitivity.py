"""Sensitivity suite: how a model's diagnostic distribution moves under pre-registered perturbations.

    inspect eval tasks/sensitivity [-T types=surface,clinical_semantic] [-T distribution=logprob]
"""

from inspect_ai import Task, task

from clinical_cf.suites import SENSITIVITY
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.build import TaskSpec, build_task
from clinical_cf.tasks.sensitivity_task import Distribution, Types, inputs, parts


@task
@checked_paths  # `-T vignettes=` / `=null` refused, a path with commas rejoined
def sensitivity(
    types: Types = "surface,clinical_semantic,background,conflicting_result,timeline",
    vignettes: UserFile = None,
    perturbations: UserFile = None,
    allow_unregistered: bool = False,
    distribution: Distribution = "verbalised",
    logprobs: bool = True,
    baseline_cache: bool = True,
    json_schema: bool = True,
    reader: RoleName = "reader",
) -> Task:
    """Diagnostic distributions under surface, semantic, background, conflict and timeline perturbations (seed 001).

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


SPEC = TaskSpec(suite=SENSITIVITY, arguments=sensitivity, inputs=inputs, parts=parts)
