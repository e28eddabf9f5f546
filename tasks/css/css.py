"""CSS over all intervention families (A-E) with negative controls.

    inspect eval tasks/css --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, in the single-shot setting.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import single_shot_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@single_shot_css()
def css() -> Task:
    """Causal Sensitivity Score over the selected families (default all, A-E)."""
