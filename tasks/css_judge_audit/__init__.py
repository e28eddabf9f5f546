from clinical_cf.tasks.css_judge_audit.css_judge_audit import css_judge_audit

__all__ = ["css_judge_audit"]
