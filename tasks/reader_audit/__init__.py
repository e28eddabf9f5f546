from clinical_cf.tasks.reader_audit.reader_audit import reader_audit

__all__ = ["reader_audit"]
