"""CSS Family C: biomarker strip (biomarker results deleted).

    inspect eval tasks/css_family_c --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, single-shot, with families fixed to C.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.css_task import single_shot_css


@task
@single_shot_css(families="C")
def css_family_c() -> Task:
    """CSS on Family C (biomarker strip (biomarker results deleted).) with paired negative controls."""
