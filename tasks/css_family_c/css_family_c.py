"""CSS Family C: biomarker strip (biomarker results deleted).

    inspect eval tasks/css_family_c --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, single-shot, with families fixed to C.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import single_shot_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@single_shot_css(families="C")
def css_family_c() -> Task:
    """CSS on Family C (biomarker strip (biomarker results deleted).) with paired negative controls."""
