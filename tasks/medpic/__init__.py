"""The `medpic` task, exported so `inspect eval tasks/medpic` and the package resolve it by name."""

from clinical_cf.tasks.medpic.medpic import medpic

__all__ = ["medpic"]
