"""CSS Family B: prior treatment failure (injected progression).

    inspect eval tasks/css_family_b --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, single-shot, with families fixed to B.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import single_shot_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@single_shot_css(families="B")
def css_family_b() -> Task:
    """CSS on Family B (prior treatment failure (injected progression).) with paired negative controls."""
