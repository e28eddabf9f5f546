"""MedPIC guideline-following questions only (seed 002).

    inspect eval tasks/medpic_gf
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@variant(build_medpic_task, kinds="gf", name="medpic_gf")
def medpic_gf(**args: Any) -> Task:
    """MedPIC GF questions only: exact-set accuracy where the rule applies."""
