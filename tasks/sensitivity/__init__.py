"""The `sensitivity` task, exported so `inspect eval tasks/sensitivity` and the package resolve it by name."""

from clinical_cf.tasks.sensitivity.sensitivity import sensitivity

__all__ = ["sensitivity"]
