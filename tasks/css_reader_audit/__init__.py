"""The `css_reader_audit` task, exported so `inspect eval tasks/css_reader_audit` and the package resolve it by name."""

from clinical_cf.tasks.css_reader_audit.css_reader_audit import css_reader_audit

__all__ = ["css_reader_audit"]
