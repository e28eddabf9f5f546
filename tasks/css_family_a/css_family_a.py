"""CSS Family A: biomarker flip, HER2 positive/negative, ER/PR, PD-L1 TPS.

    inspect eval tasks/css_family_a --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, families="A", setting="single_shot")
def css_family_a(**args: Any) -> Task:
    """Biomarker flip: HER2 positive/negative, ER/PR, PD-L1 TPS.

    Paired negative controls (family N) are scored but kept out of CSS.
    """
