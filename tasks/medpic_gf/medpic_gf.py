"""MedPIC guideline-following questions only (seed 002).

    inspect eval tasks/medpic_gf

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task` (kinds fixed to gf).
"""

from clinical_cf.tasks.medpic_task import build_medpic_task
from inspect_ai import Task, task


@task
def medpic_gf(
    populations: str | list[str] | None = None,
    rules: str | None = None,
    questions: str | None = None,
    allow_unregistered: bool = False,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Exact-set accuracy on fixed cases where the rule applies."""
    return build_medpic_task(**locals(), kinds="gf", name="medpic_gf")
