"""Workflow escalation suite: four actions under missing, stale, conflicting and late information.

    inspect eval tasks/workflow [-T condition=uncertainty] [-T split=test] [-T variant=clean,conflict] [-T cost_ratio=10]

Arguments are those of `clinical_cf.tasks.workflow_task.build_workflow_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.workflow_task import build_workflow_task


@task
def workflow(
    episodes: str | None = None,
    seeds: str | None = None,
    allow_unregistered: bool = False,
    task_class: str | list[str] = "all",
    variant: str | list[str] = "all",
    split: Literal["all", "dev", "test"] = "all",
    condition: Literal["neutral", "uncertainty"] = "neutral",
    cost_ratio: float = 5.0,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Decision accuracy, 5:1 cost-sensitive utility, missed escalations and calibration per variant."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_workflow_task(**locals())
