"""The suite specs (`clinical_cf.suites`) hold real references, and the tools read them.

- no spec field is a `"module:function"` string: schemas are classes, loaders, report sections,
  tables and banners are callables;
- every input kind the validator and `clinical-cf validate --kind` know is declared by exactly one
  suite, and each suite's bundled file of that kind validates as that kind;
- every task a suite registers is built by `build_task` from a spec of that suite, and logs the
  suite (and, for the CSS tasks with a model under test, its setting).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
import shutil
import sys
from pathlib import Path

import pytest
from inspect_ai.util import registry_info
from pydantic import BaseModel

from clinical_cf.catalog.validate import loaders, validate_file
from clinical_cf.suites import SUITES, create_task, input_kinds, suite_of_task, task_folders
from helpers import HANDWRITTEN_CASES


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list)):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("name", list(SUITES))
def test_no_spec_reference_is_a_string(name):
    suite = SUITES[name]
    for item in dataclasses.fields(suite):
        for text in _strings(getattr(suite, item.name)):
            assert not re.fullmatch(r"[\w.]+:\w+", text), f"{name}.{item.name} holds a string reference {text!r}"
    assert issubclass(suite.schema, BaseModel) and callable(suite.loader)
    assert callable(suite.report_section) and all(callable(f) for f in (*suite.report_tables, *suite.report_banners))
    assert all(callable(item.load) for item in suite.inputs)
    assert suite.scorers and all(registry_info(s).type == "scorer" for s in suite.scorers)
    assert all(path.is_file() for path in suite.extra_published)


def _small(name: str) -> dict[str, str]:
    """Arguments that keep a task quick to build: the hand-written cases (record-less, so their regex edits are drafts,
    scored only with `unreviewed=allow`); the bundled cohort's samples are tests/tasks/test_bundled_samples.py's.
    Family B applies to none of them (catalog v3 drops B1 on the hand-written packets), and the editor audit needs
    cases with a structured record."""
    from clinical_cf import _registry

    parameters = inspect.signature(getattr(_registry, name)).parameters
    if "cases" not in parameters or name in ("css_family_b", "css_editor_audit"):
        return {}
    return {"cases": str(HANDWRITTEN_CASES), **({"unreviewed": "allow"} if "unreviewed" in parameters else {})}


@pytest.mark.slow  # builds every task of every suite (over 3 s)
def test_every_scorer_a_suites_tasks_use_is_in_its_spec():
    """The spec's scorers are the ones its tasks are built with (besides the registration check every task gets)."""
    for suite in SUITES.values():
        declared = {registry_info(s).name for s in suite.scorers}
        for name in suite.tasks:
            used = {registry_info(s).name for s in create_task(name, **_small(name)).scorer} - {"clinical_cf/registration_check"}
            assert used <= declared, f"{name} uses scorers {sorted(used - declared)} that suite {suite.name!r} does not declare"


def test_every_scorer_declares_its_metrics():
    for suite in SUITES.values():
        metrics = suite.metrics()
        assert metrics and all(metrics.values()), suite.name
    assert "clinical_cf/css" in SUITES["css"].metrics()["clinical_cf/judge_direction"]


def test_the_validator_kinds_are_the_specs_kinds():
    assert sorted(loaders()) == sorted(input_kinds())


@pytest.mark.parametrize("kind", [k for k, item in input_kinds().items() if item.bundled is not None])
def test_each_bundled_input_validates_as_its_kind(kind):
    item = input_kinds()[kind]
    result = validate_file(item.bundled, kind)
    assert result.kind == kind and result.entries > 0


def test_the_cli_offers_the_specs_kinds():
    from clinical_cf.cli import build_parser

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["validate", "x.yaml", "--kind", "no_such_kind"])
    for kind in input_kinds():
        assert parser.parse_args(["validate", "x.yaml", "--kind", kind]).kind == kind


def test_suite_of_task():
    assert suite_of_task("css_family_d").name == "css"
    assert suite_of_task("medpic_gf").name == "medpic"
    with pytest.raises(ValueError, match="no suite"):
        suite_of_task("nope")


ROOT = Path(__file__).resolve().parents[1]


def task_places(tasks_dir: Path, registry_text: str, packages: list[str], readme_text: str) -> list[str]:
    """What is missing for the task folders under `tasks_dir`, each naming the folder and the place."""
    folders = sorted(p.parent.name for p in tasks_dir.glob("*/__init__.py"))
    problems = []
    registered = set(re.findall(r"^from clinical_cf\.tasks\.(\w+)\.(\w+) import (\w+)$", registry_text, re.MULTILINE))
    for name in folders:
        if not (tasks_dir / name / f"{name}.py").is_file():
            problems.append(f"tasks/{name}/ has no {name}.py")
        if (name, name, name) not in registered:
            problems.append(f"tasks/{name}/ has no line in clinical_cf/_registry.py: from clinical_cf.tasks.{name}.{name} import {name}")
        if f"clinical_cf.tasks.{name}" not in packages:
            problems.append(f"tasks/{name}/ is not packaged by setup.py")
        if f"`tasks/{name}`" not in readme_text:
            problems.append(f"tasks/{name}/ has no row in README.md's task table: run `python -m clinical_cf.exports.docs`")
        owners = [s for s in SUITES if name == s or name.startswith(f"{s}_")]
        if len(owners) != 1:
            problems.append(f"tasks/{name}/ belongs to {len(owners)} suites: name it after one (<suite> or <suite>_<what>)")
    problems += [f"clinical_cf/_registry.py imports {name}, which has no folder tasks/{name}/"
                 for _, _, name in registered if name not in folders]
    return problems


def _setup_packages(tasks_dir: Path) -> list[str]:
    spec = importlib.util.spec_from_file_location("clinical_cf_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines packages(); setup() runs only as __main__
    return module.packages(tasks_dir)


def _places(tasks_dir: Path = ROOT / "tasks") -> list[str]:
    return task_places(tasks_dir, (ROOT / "clinical_cf" / "_registry.py").read_text(encoding="utf-8"), _setup_packages(tasks_dir),
                       (ROOT / "README.md").read_text(encoding="utf-8"))


def test_a_task_is_its_folder_plus_its_registry_line():
    assert _places() == []
    assert sorted(t for s in SUITES.values() for t in s.tasks) == sorted(task_folders())


def test_a_folder_without_its_registry_line_is_named(tmp_path):
    tasks = tmp_path / "tasks"
    shutil.copytree(ROOT / "tasks", tasks, ignore=shutil.ignore_patterns("__pycache__"))
    new = tasks / "css_family_f"
    new.mkdir()
    (new / "__init__.py").write_text("", encoding="utf-8")
    (new / "css_family_f.py").write_text("", encoding="utf-8")
    problems = _places(tasks)
    assert "tasks/css_family_f/ has no line in clinical_cf/_registry.py: from clinical_cf.tasks.css_family_f.css_family_f import css_family_f" in problems
    assert any(p.startswith("tasks/css_family_f/ has no row in README.md") for p in problems)
    assert not any("is not packaged" in p for p in problems)  # setup.py packages every folder itself
    (tasks / "orphan").mkdir()
    (tasks / "orphan" / "__init__.py").write_text("", encoding="utf-8")
    assert any(p.startswith("tasks/orphan/ belongs to 0 suites") for p in _places(tasks))


@pytest.mark.parametrize("name", task_folders())
def test_every_task_folder_builds_by_name_from_its_suites_spec(name):

    task = create_task(name, **_small(name))
    assert task.metadata["suite"] == suite_of_task(name).name
    assert len(task.dataset) > 0


@pytest.mark.parametrize("name", task_folders())
def test_a_public_tasks_arguments_are_its_builders_with_the_same_declarations(name):
    """A variant shows its arguments in its own signature, annotated with the builder's declarations (not new ones)."""
    from clinical_cf import _registry
    from clinical_cf.tasks.arguments import annotations_of
    from clinical_cf.tasks.css_task import build_css_task
    from clinical_cf.tasks.medpic_task import build_medpic_task

    builder = {"css": build_css_task, "medpic": build_medpic_task}.get(suite_of_task(name).name)
    declared = annotations_of(getattr(_registry, name))
    assert declared, name
    # A task whose module holds its own SPEC (the audits, the observation agent) is its own builder.
    own_spec = getattr(sys.modules[getattr(_registry, name).__module__], "SPEC", None)
    if builder is not None and own_spec is None:
        base = annotations_of(builder)
        for argument, annotation in declared.items():
            assert base.get(argument) == annotation, f"{name}: argument {argument!r} is declared differently from {builder.__name__}"
