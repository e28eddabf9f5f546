"""CSS editor audit: can this editor model be trusted to write counterfactuals of free text?

    inspect eval clinical_cf/css_editor_audit --model <any> --model-role editor=<editor to audit> [-T tuples=40]
"""

from typing import Annotated

from inspect_ai import Task, task

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.lexicon import LEXICON_PATH
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import Between, RoleName, UserFile, checked_paths
from clinical_cf.tasks.build import TaskInputs, TaskSpec, build_task
from clinical_cf.tasks.css_task import Families, Tuples
from clinical_cf.tasks.editor_audit_task import parts


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_editor_audit(
    families: Families = "ABCDE",
    tuples: Tuples = 40,
    max_tokens: Annotated[int, Between(256, 32_768)] = 4096,
    editor: RoleName = "editor",
    allow_unregistered: bool = False,
    catalog: UserFile = None,
    cases: UserFile = None,
) -> Task:
    """The editor role itself: completeness and unwarranted changes of its free-text edits against the structured
    route's correct counterfactuals (see [Counterfactual sets](docs/counterfactual-sets.md#auditing-the-editor)).

    Args:
        families: Intervention families to audit (default A-E).
        tuples: How many (case, intervention) pairs, a fixed subset chosen by hash (None: all).
        max_tokens: Output cap of one edit.
        editor: Model role that makes the edits (default `editor`; bind it with --model-role editor=...).
        allow_unregistered: Run even if the catalog does not match its lock.
        catalog: Intervention catalog (default: the bundled one).
        cases: Cases JSONL with structured records (default: the bundled cohort).
    """
    return build_task(SPEC, **locals())


SPEC = TaskSpec(
    suite=CSS,
    arguments=css_editor_audit,
    inputs=lambda args: TaskInputs(catalogs=[args.catalog or CATALOG_PATH, LEXICON_PATH], data=[args.cases or CASES_PATH]),
    parts=parts,
)
