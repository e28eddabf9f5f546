"""CSS judge audit: how often do injection probes in a model's lists move the judge's verdict?

    inspect eval clinical_cf/css_judge_audit --model <any> --model-role judge=<judge to audit>

Arguments are those of `clinical_cf.tasks.judge_audit_task.build_judge_audit_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.judge_audit_task import build_judge_audit_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_judge_audit_task)
def css_judge_audit() -> Task:
    """Flip rate of the judge role under pre-registered injection probes, with the identical-lists control."""
