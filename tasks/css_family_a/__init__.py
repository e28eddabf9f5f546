"""The `css_family_a` task, exported so `inspect eval tasks/css_family_a` and the package resolve it by name."""

from clinical_cf.tasks.css_family_a.css_family_a import css_family_a

__all__ = ["css_family_a"]
