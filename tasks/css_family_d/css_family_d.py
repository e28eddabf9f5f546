"""CSS Family D: surgery status, resection removed or added.

    inspect eval tasks/css_family_d --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, families="D", setting="single_shot")
def css_family_d(**args: Any) -> Task:
    """Surgery status: resection removed or added.

    Paired negative controls (family N) are scored but kept out of CSS.
    """
