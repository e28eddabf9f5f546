"""MedPIC counterfactual pairs only (seed 002).

    inspect eval tasks/medpic_cf [-T operations=deactivation] [-T rationale_judge=true --model-role judge=...]

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task` (kinds fixed to cf).
"""

from clinical_cf.tasks.medpic_task import build_medpic_task
from inspect_ai import Task, task


@task
def medpic_cf(
    operations: str | list[str] | None = None,
    populations: str | list[str] | None = None,
    rules: str | None = None,
    questions: str | None = None,
    allow_unregistered: bool = False,
    rationale_judge: bool = False,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Activation, deactivation and pair accuracy on linked counterfactual pairs."""
    return build_medpic_task(**locals(), kinds="cf", name="medpic_cf")
