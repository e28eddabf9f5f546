"""Editor audit: can this editor model be trusted to write counterfactuals of free text?

    inspect eval clinical_cf/editor_audit --model <any> --model-role editor=<editor to audit> [-T tuples=40]

Arguments are those of `clinical_cf.tasks.editor_audit_task.build_editor_audit_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.editor_audit_task import build_editor_audit_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_editor_audit_task)
def editor_audit() -> Task:
    """Completeness and unwarranted changes of the editor role's edits, against the structured route's counterfactuals."""
