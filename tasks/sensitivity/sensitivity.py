"""Sensitivity suite: how a model's diagnostic distribution moves under pre-registered perturbations.

    inspect eval tasks/sensitivity [-T types=surface,clinical_semantic] [-T distribution=logprob]

Arguments are those of `clinical_cf.tasks.sensitivity_task.build_sensitivity_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.sensitivity_task import build_sensitivity_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_sensitivity_task)
def sensitivity() -> Task:
    """Flip rate, JS divergence, confidence and entropy change, and direction consistency per perturbation type."""
