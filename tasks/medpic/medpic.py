"""MedPIC suite: GF and paired CF medication-safety questions (seed 002, MedPIC-Bench).

    inspect eval tasks/medpic [-T kinds=gf,cf] [-T rationale_judge=true --model-role judge=...]

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_medpic_task, name="medpic")
def medpic() -> Task:
    """Exact-set accuracy, GF/CF accuracy and gap, activation/deactivation and pair accuracy."""
