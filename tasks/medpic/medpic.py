"""MedPIC suite: GF and paired CF medication-safety questions (seed 002, MedPIC-Bench).

    inspect eval tasks/medpic [-T kinds=gf,cf] [-T rationale_judge=true --model-role judge=...]

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task`.
"""

from clinical_cf.tasks.medpic_task import build_medpic_task
from inspect_ai import Task, task


@task
def medpic(
    kinds: str | list[str] = "gf,cf",
    operations: str | list[str] | None = None,
    populations: str | list[str] | None = None,
    rules: str | None = None,
    questions: str | None = None,
    allow_unregistered: bool = False,
    rationale_judge: bool = False,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Exact-set accuracy, GF/CF accuracy and gap, activation/deactivation and pair accuracy."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_medpic_task(**locals(), name="medpic")
