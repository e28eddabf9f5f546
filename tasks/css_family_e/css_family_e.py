"""CSS Family E: stage perturbation, new distant metastases.

    inspect eval tasks/css_family_e --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, families="E", setting="single_shot")
def css_family_e(**args: Any) -> Task:
    """Stage perturbation: new distant metastases.

    Paired negative controls (family N) are scored but kept out of CSS.
    """
