"""The `workflow` task, exported so `inspect eval tasks/workflow` and the package resolve it by name."""

from clinical_cf.tasks.workflow.workflow import workflow

__all__ = ["workflow"]
