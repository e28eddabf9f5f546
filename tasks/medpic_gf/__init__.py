"""The `medpic_gf` task, exported so `inspect eval tasks/medpic_gf` and the package resolve it by name."""

from clinical_cf.tasks.medpic_gf.medpic_gf import medpic_gf

__all__ = ["medpic_gf"]
