"""CSS judge audit: how often do injection probes in a model's lists move the judge's verdict?

    inspect eval clinical_cf/css_judge_audit --model <any> --model-role judge=<judge to audit>

Arguments are those of `clinical_cf.tasks.judge_audit_task.build_judge_audit_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.judge_audit_task import build_judge_audit_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_judge_audit(
    probes: str | None = None,
    conditions: Literal["identical,changed", "identical", "changed"] = "identical,changed",
    allow_unregistered: bool = False,
    json_schema: bool = True,
) -> Task:
    """Flip rate of the judge role under pre-registered injection probes, with the identical-lists control."""
    return build_judge_audit_task(**locals())
