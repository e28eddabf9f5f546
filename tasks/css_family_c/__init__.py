"""The `css_family_c` task, exported so `inspect eval tasks/css_family_c` and the package resolve it by name."""

from clinical_cf.tasks.css_family_c.css_family_c import css_family_c

__all__ = ["css_family_c"]
