"""The `css` task, exported so `inspect eval tasks/css` and the package resolve it by name."""

from clinical_cf.tasks.css.css import css

__all__ = ["css"]
