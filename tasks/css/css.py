"""CSS over all intervention families (A-E) with negative controls; `-T families=AB` to choose.

    inspect eval tasks/css --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, setting="single_shot")
def css(**args: Any) -> Task:
    """All families A-E (`-T families=AB` to choose).

    Paired negative controls (family N) are scored but kept out of CSS.
    """
