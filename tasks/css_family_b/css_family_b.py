"""CSS Family B: prior treatment failure, progression injected on first line or on the current line.

    inspect eval tasks/css_family_b --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, families="B", setting="single_shot")
def css_family_b(**args: Any) -> Task:
    """Prior treatment failure: progression injected on first line or on the current line.

    Paired negative controls (family N) are scored but kept out of CSS.
    """
