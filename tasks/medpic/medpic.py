"""MedPIC suite: GF and paired CF medication-safety questions (seed 002, MedPIC-Bench).

    inspect eval tasks/medpic [-T kinds=gf,cf] [-T rationale_judge=true --model-role judge=...]

Every argument is `build_medpic_task`'s (clinical_cf/tasks/medpic_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.medpic_task import Kinds, Operations, Populations, build_medpic_task


@task
@checked_paths  # `-T rules=` / `=null` refused, a path with commas rejoined
def medpic(
    kinds: Kinds = "gf,cf",
    operations: Operations = None,
    populations: Populations = None,
    rules: UserFile = None,
    questions: UserFile = None,
    allow_unregistered: bool = False,
    rationale_judge: bool = False,
    json_schema: bool = True,
    reader: RoleName = "reader",
) -> Task:
    """Medication-safety questions from verified rules: guideline-following (GF) and paired counterfactual (CF) questions (seed 002)."""
    return build_medpic_task(name="medpic", **locals())
