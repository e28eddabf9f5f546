"""MedPIC guideline-following questions only (seed 002).

    inspect eval tasks/medpic_gf

Every argument is `build_medpic_task`'s (clinical_cf/tasks/medpic_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.medpic_task import Populations, build_medpic_task


@task
@checked_paths  # `-T rules=` / `=null` refused, a path with commas rejoined
def medpic_gf(
    populations: Populations = None,
    rules: UserFile = None,
    questions: UserFile = None,
    allow_unregistered: bool = False,
    json_schema: bool = True,
    reader: RoleName = "reader",
) -> Task:
    """MedPIC GF questions only: exact-set accuracy where the rule applies."""
    return build_medpic_task(kinds="gf", name="medpic_gf", **locals())
