"""MedPIC guideline-following questions only (seed 002).

    inspect eval tasks/medpic_gf

Arguments are those of `clinical_cf.tasks.medpic_task.build_medpic_task` (kinds fixed to gf).
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_medpic_task, kinds="gf", name="medpic_gf", omit=("operations", "rationale_judge"))
def medpic_gf() -> Task:
    """Exact-set accuracy on fixed cases where the rule applies."""
