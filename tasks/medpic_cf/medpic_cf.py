"""MedPIC counterfactual pairs only (seed 002).

    inspect eval tasks/medpic_cf [-T operations=deactivation] [-T rationale_judge=true --model-role judge=...]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@variant(build_medpic_task, kinds="cf", name="medpic_cf")
def medpic_cf(**args: Any) -> Task:
    """MedPIC CF pairs only: activation, deactivation and pair accuracy."""
