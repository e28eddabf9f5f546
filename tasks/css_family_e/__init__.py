"""The `css_family_e` task, exported so `inspect eval tasks/css_family_e` and the package resolve it by name."""

from clinical_cf.tasks.css_family_e.css_family_e import css_family_e

__all__ = ["css_family_e"]
