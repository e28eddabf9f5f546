from clinical_cf.tasks.editor_audit.editor_audit import editor_audit

__all__ = ["editor_audit"]
