"""The suite specs (`clinical_cf.suites`) hold real references, and the tools read them.

- no spec field is a `"module:function"` string: schemas are classes, loaders, report sections,
  tables and banners are callables, store models are `StoreModel` classes;
- every input kind the validator and `clinical-cf validate --kind` know is declared by exactly one
  suite, and each suite's bundled file of that kind validates as that kind;
- every task a suite registers is built by `build_task` from a spec of that suite, and logs the
  suite (and, for the CSS tasks with a model under test, its setting).
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from inspect_ai.util import StoreModel
from pydantic import BaseModel

from clinical_cf.catalog.validate import KINDS, validate_file
from clinical_cf.suites import SUITES, input_kinds, suite_of_task


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
    if suite.store_model is not None:
        assert issubclass(suite.store_model(), StoreModel)
    assert suite.solvers() and suite.scorers()


def test_store_models_are_the_names_analysis_reads():
    assert SUITES["css"].store_model().__name__ == "CSSArms"
    assert SUITES["sensitivity"].store_model().__name__ == "SensitivityArms"
    assert set(SUITES["sensitivity"].store_model().model_fields) >= {"baseline", "perturbed"}
    assert SUITES["workflow"].store_model().__name__ == "WorkflowDecisions"
    assert "decisions" in SUITES["workflow"].store_model().model_fields


def test_every_scorer_declares_its_metrics():
    for suite in SUITES.values():
        metrics = suite.metrics()
        assert metrics and all(metrics.values()), suite.name
    assert "clinical_cf/css" in SUITES["css"].metrics()["clinical_cf/judge_direction"]


def test_the_validator_kinds_are_the_specs_kinds():
    assert sorted(KINDS) == sorted(input_kinds())


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


def test_every_registered_task_is_built_from_its_suites_spec():
    import importlib

    from clinical_cf import _registry
    from clinical_cf.tasks.build import TaskSpec

    specs = {}
    for module in ("css_task", "css_observation_task", "judge_audit_task", "medpic_task", "sensitivity_task", "workflow_task"):
        spec = importlib.import_module(f"clinical_cf.tasks.{module}").SPEC
        assert isinstance(spec, TaskSpec)
        specs[module] = spec
    assert {s.suite.name for s in specs.values()} == set(SUITES)
    for suite in SUITES.values():
        for task in suite.tasks:
            assert callable(getattr(_registry, task)), task


# Tasks whose build takes well under a second (the CSS family tasks expand the whole cohort; they share css's scorers).
QUICK_TASKS = ("css_judge_audit", "css_agent_observation", "sensitivity", "medpic", "medpic_gf", "medpic_cf", "workflow")


def test_each_suite_declares_the_registered_scorers_its_tasks_run():
    """The scorers a suite declares (its report's metric columns) are Inspect scorers, and every scorer a task runs is one."""
    from inspect_ai.util import registry_info

    from clinical_cf.suites import create_task

    declared = {}
    for name, suite in SUITES.items():
        infos = [registry_info(factory) for factory in suite.scorers()]  # a plain function is not registered: this raises
        assert infos and all(info.type == "scorer" and info.name.startswith("clinical_cf/") for info in infos), name
        declared[name] = {info.name for info in infos}
    for task in QUICK_TASKS:
        ran = {registry_info(scorer).name for scorer in create_task(task).scorer}
        assert ran and ran <= declared[suite_of_task(task).name], (task, ran - declared[suite_of_task(task).name])


def test_a_task_is_a_folder_plus_a_line_in_its_suite_spec():
    # Every registered task has its folder and entry-point import; nothing is registered that no suite declares.
    from pathlib import Path

    from inspect_ai.util import registry_info

    from clinical_cf import _registry

    tasks_dir = Path(__file__).resolve().parents[1] / "tasks"
    declared = [t for s in SUITES.values() for t in s.tasks]
    assert len(declared) == len(set(declared)), "a task is declared by two suites"
    for name in declared:
        assert (tasks_dir / name / f"{name}.py").is_file(), f"tasks/{name}/{name}.py missing"
        assert registry_info(getattr(_registry, name)).name.endswith(name)
    registered = {n for n, v in vars(_registry).items() if callable(v) and getattr(v, "__module__", "").startswith("clinical_cf.tasks.")}
    assert registered == set(declared)
