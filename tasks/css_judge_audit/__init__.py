"""The `css_judge_audit` task, exported so `inspect eval tasks/css_judge_audit` and the package resolve it by name."""

from clinical_cf.tasks.css_judge_audit.css_judge_audit import css_judge_audit

__all__ = ["css_judge_audit"]
