"""The suites: each declared once, in its own module (`clinical_cf.suites.<name>`), and registered here.

Everything per suite is derived from its `Suite` spec (`clinical_cf.suites.spec`): the validator's input
kinds and their detection (`clinical_cf.inputs`), packaging (setup.py finds the catalog packages), the
scoring contract and fingerprint, the published version and Register entries, the dataset and
lm-eval exports, the task table, the report section and the tests. A new suite is its module plus two
lines here: its import and its entry in `SUITES` (docs/adding-a-suite.md).
"""

from __future__ import annotations

from typing import Any

from clinical_cf.suites.css import CSS
from clinical_cf.suites.medpic import MEDPIC
from clinical_cf.suites.sensitivity import SENSITIVITY
from clinical_cf.suites.spec import CATALOG_DIR, TASKS_DIR, InputKind, Suite, display_path, task_folders, task_function
from clinical_cf.suites.workflow import WORKFLOW

__all__ = [
    "CATALOG_DIR", "CSS", "MEDPIC", "SENSITIVITY", "SUITES", "TASKS_DIR", "WORKFLOW", "InputKind", "Suite", "create_task",
    "display_path", "get_suite", "input_kinds", "suite_of_task", "task_folders", "task_function",
]

SUITES: dict[str, Suite] = {s.name: s for s in (CSS, SENSITIVITY, MEDPIC, WORKFLOW)}


def input_kinds(suites: dict[str, Suite] | None = None) -> dict[str, InputKind]:
    """Every input kind any suite reads, by name (what `clinical-cf validate --kind` accepts)."""
    kinds: dict[str, InputKind] = {}
    for suite in (SUITES if suites is None else suites).values():
        for item in suite.inputs:
            if item.kind in kinds:
                raise ValueError(f"input kind {item.kind!r} is declared by two suites")
            kinds[item.kind] = item
    return kinds


def suite_of_task(task: str) -> Suite:
    """The suite that registers `task`."""
    for suite in SUITES.values():
        if task in suite.tasks:
            return suite
    raise ValueError(f"no suite registers a task named {task!r}")


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}") from None


def create_task(name: str, **args: Any):
    """A task by name, built with `args` (as `-T` would)."""
    return task_function(name)(**args)
