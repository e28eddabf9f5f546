"""The `css_editor_audit` task, exported so `inspect eval tasks/css_editor_audit` and the package resolve it by name."""

from clinical_cf.tasks.css_editor_audit.css_editor_audit import css_editor_audit

__all__ = ["css_editor_audit"]
