"""The `medpic_cf` task, exported so `inspect eval tasks/medpic_cf` and the package resolve it by name."""

from clinical_cf.tasks.medpic_cf.medpic_cf import medpic_cf

__all__ = ["medpic_cf"]
