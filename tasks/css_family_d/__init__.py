"""The `css_family_d` task, exported so `inspect eval tasks/css_family_d` and the package resolve it by name."""

from clinical_cf.tasks.css_family_d.css_family_d import css_family_d

__all__ = ["css_family_d"]
