"""The `css_family_b` task, exported so `inspect eval tasks/css_family_b` and the package resolve it by name."""

from clinical_cf.tasks.css_family_b.css_family_b import css_family_b

__all__ = ["css_family_b"]
