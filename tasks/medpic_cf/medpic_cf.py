"""MedPIC counterfactual pairs only (seed 002).

    inspect eval tasks/medpic_cf [-T operations=deactivation] [-T rationale_judge=true --model-role judge=...]

Every argument is `build_medpic_task`'s (clinical_cf/tasks/medpic_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.medpic_task import Operations, Populations, build_medpic_task


@task
@checked_paths  # `-T rules=` / `=null` refused, a path with commas rejoined
def medpic_cf(
    operations: Operations = None,
    populations: Populations = None,
    rules: UserFile = None,
    questions: UserFile = None,
    allow_unregistered: bool = False,
    rationale_judge: bool = False,
    json_schema: bool = True,
    reader: RoleName = "reader",
) -> Task:
    """MedPIC CF pairs only: activation, deactivation and pair accuracy."""
    return build_medpic_task(kinds="cf", name="medpic_cf", **locals())
