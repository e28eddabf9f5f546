"""CSS Family D: surgery status (resection history toggled).

    inspect eval tasks/css_family_d --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, single-shot, with families fixed to D.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import single_shot_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@single_shot_css(families="D")
def css_family_d() -> Task:
    """CSS on Family D (surgery status (resection history toggled).) with paired negative controls."""
