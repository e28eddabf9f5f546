"""Task-argument checks and the run settings every task carries in its own config (so a retry replays them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinical_cf import _registry
from clinical_cf.suites import SUITES, create_task
from clinical_cf.tasks.arguments import TaskInputError, annotations_of, choice, count, file_arguments, flag, number, selection

ROOT = Path(__file__).resolve().parents[2]

def test_checks_accept_what_inspect_passes_and_refuse_the_rest():
    assert flag("x", True) is True and flag("x", "false") is False
    assert number("x", "2.5", positive=True) == 2.5 and count("x", "3") == 3 and count("x", None, optional=True) is None
    assert selection("x", ["a", "b"], ("a", "b", "c")) == {"a", "b"} and selection("x", "all", ("a", "b")) == {"a", "b"}
    assert choice("x", "a", ("a", "b")) == "a"
    for check, value in [(flag, "yes"), (number, "1e999"), (count, 2.5), (count, True)]:
        with pytest.raises(TaskInputError, match="task argument 'x'"):
            check("x", value)
    with pytest.raises(TaskInputError, match="allowed: a, b"):
        selection("x", "a,z", ("a", "b"))


@pytest.mark.slow  # builds five tasks, the bundled CSS cohort among them
@pytest.mark.parametrize("name", ["css_family_d", "css_agent_observation", "sensitivity", "medpic", "workflow"])
def test_every_task_bounds_retries_and_timeouts_in_its_own_config(name):
    config = create_task(name).config
    assert config.max_retries == 2 and config.timeout == 600


def test_project_env_does_not_set_run_settings():
    lines = [line.strip() for line in (ROOT / ".env").read_text().splitlines()]
    settings = [line for line in lines if line and not line.startswith("#")]
    assert not any(line.startswith(("INSPECT_EVAL_MAX_RETRIES", "INSPECT_EVAL_TIMEOUT")) for line in settings)


def _registered_tasks():
    return {name: getattr(_registry, name) for suite in SUITES.values() for name in suite.tasks}


def test_every_task_checks_its_path_arguments_and_every_path_argument_is_declared_a_file():
    """Each registered task refuses `-T path=` / `=null` (checked_paths under @task), for every argument naming a file."""

    for name, factory in _registered_tasks().items():
        layers, fn = [], factory
        while fn is not None:
            layers.append(fn)
            fn = getattr(fn, "__wrapped__", None)
        assert any(getattr(layer, "checks_paths", False) for layer in layers), f"{name}: no @checked_paths under @task"
        files = file_arguments(factory)
        for argument, annotation in annotations_of(factory).items():
            # An argument that defaults to None and takes a plain string is a path; it must say so (UserFile).
            if annotation == (str | None):
                raise AssertionError(f"{name}: '{argument}' is `str | None`; a file argument is annotated UserFile")
        assert files >= {a for a in annotations_of(factory) if a in ("cases", "catalog", "rules", "questions", "episodes", "seeds")}, name
        assert files, f"{name}: every task reads at least one file a user can replace"
        with pytest.raises(TaskInputError, match="expected a file path"):
            factory(**{sorted(files)[0]: ""})
