"""MedPIC suite: GF and paired CF medication-safety questions (seed 002, MedPIC-Bench).

    inspect eval tasks/medpic [-T kinds=gf,cf] [-T rationale_judge=true --model-role judge=...]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.medpic_task import build_medpic_task


@task
@variant(build_medpic_task, name="medpic")
def medpic(**args: Any) -> Task:
    """Medication-safety questions from verified rules: guideline-following (GF) and paired counterfactual (CF) questions (seed 002)."""
