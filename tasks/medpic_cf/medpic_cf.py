"""MedPIC counterfactual pairs only (seed 002).

    inspect eval tasks/medpic_cf [-T operations=deactivation] [-T rationale_judge=true --model-role judge=...]

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task` (kinds fixed to cf).
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_medpic_task, kinds="cf", name="medpic_cf")
def medpic_cf() -> Task:
    """Activation, deactivation and pair accuracy on linked counterfactual pairs."""
