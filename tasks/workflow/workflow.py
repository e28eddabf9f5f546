"""Workflow escalation suite: four actions under missing, stale, conflicting and late information.

    inspect eval tasks/workflow [-T condition=uncertainty] [-T split=test] [-T variant=clean,conflict] [-T cost_ratio=10]

Arguments are those of `clinical_cf.tasks.workflow_task.build_workflow_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.workflow_task import build_workflow_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_workflow_task)
def workflow() -> Task:
    """Decision accuracy, 5:1 cost-sensitive utility, missed escalations and calibration per variant."""
