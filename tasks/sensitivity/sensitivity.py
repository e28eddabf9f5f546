"""Sensitivity suite: how a model's diagnostic distribution moves under pre-registered perturbations.

    inspect eval tasks/sensitivity [-T types=surface,clinical_semantic] [-T distribution=logprob]

Arguments are those of `clinical_cf.tasks.sensitivity_task.build_sensitivity_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.sensitivity_task import build_sensitivity_task


@task
def sensitivity(
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
    """Flip rate, JS divergence, confidence and entropy change, and direction consistency per perturbation type."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_sensitivity_task(**locals())
