"""CSS Family A: biomarker flip (HER2, ER/PR, PD-L1 status).

    inspect eval tasks/css_family_a --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, single-shot, with families fixed to A.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import single_shot_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@single_shot_css(families="A")
def css_family_a() -> Task:
    """CSS on Family A (biomarker flip (HER2, ER/PR, PD-L1 status).) with paired negative controls."""
