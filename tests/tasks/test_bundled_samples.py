"""Every bundled task at its default arguments builds exactly the samples recorded in the fixture.

The fixture records, per task: the sample count, a SHA-256 per sample over its id, input, target
and metadata in canonical JSON, the task's version, its metadata keys and its arguments with their
defaults (what `-T` takes and `inspect list` shows). A refactor of how tasks
are built must leave all of it unchanged; a deliberate change of the samples regenerates it:

    .venv/bin/python tests/tasks/test_bundled_samples.py
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from clinical_cf.exports.docs import task_function
from clinical_cf.suites import SUITES, create_task, task_folders

FIXTURE = Path(__file__).parent / "fixtures" / "bundled_samples.json"

TASKS = task_folders()
"""Every task folder: a new task has no record until the fixture is regenerated, and its test says so."""
FAST_TASKS = ("css_agent_observation", "css_judge_audit", "medpic_cf")
"""Quick to build (no packet mutation), and between them they go through three different builders."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def sample_digest(sample: Any) -> str:
    record = {"id": sample.id, "input": sample.input, "target": sample.target, "metadata": sample.metadata or {}}
    if not isinstance(record["input"], str):
        record["input"] = [m.model_dump(exclude={"id"}) for m in record["input"]]
    return hashlib.sha256(_canonical(record).encode()).hexdigest()


def task_arguments(name: str) -> dict[str, str]:
    """The registered task's arguments and the repr of their defaults, as Inspect reads its signature."""

    return {p.name: repr(p.default) for p in inspect.signature(task_function(name)).parameters.values()}


def task_record(name: str) -> dict[str, Any]:
    task = create_task(name)
    samples = list(task.dataset)
    return {
        "samples": len(samples),
        "version": task.version,
        "metadata_keys": sorted(task.metadata or {}),
        "arguments": task_arguments(name),
        "digests": {str(s.id): sample_digest(s) for s in samples},
    }


def _check(name: str) -> None:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert name in recorded, f"task {name} has no record in {FIXTURE.name}: run `.venv/bin/python tests/tasks/test_bundled_samples.py`"
    expected = recorded[name]
    actual = task_record(name)
    assert actual["samples"] == expected["samples"]
    assert actual["version"] == expected["version"]
    assert actual["metadata_keys"] == expected["metadata_keys"]
    changed = sorted(k for k in expected["digests"] if actual["digests"].get(k) != expected["digests"][k])
    added = sorted(set(actual["digests"]) - set(expected["digests"]))
    assert not changed and not added, f"{name}: {len(changed)} changed, {len(added)} new sample(s), e.g. {(changed + added)[:3]}"


@pytest.mark.parametrize("name", FAST_TASKS)
def test_bundled_samples_unchanged_fast(name):
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [t for t in TASKS if t not in FAST_TASKS])
def test_bundled_samples_unchanged(name):
    _check(name)


@pytest.mark.parametrize("name", TASKS)
def test_task_arguments_unchanged(name):
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert name in recorded, f"task {name} has no record in {FIXTURE.name}: run `.venv/bin/python tests/tasks/test_bundled_samples.py`"
    expected = recorded[name]["arguments"]
    assert task_arguments(name) == expected


def test_fixture_covers_every_registered_task():
    recorded = set(json.loads(FIXTURE.read_text(encoding="utf-8")))
    assert recorded == set(TASKS) == {t for s in SUITES.values() for t in s.tasks}


if __name__ == "__main__":
    names = sys.argv[1:] or list(TASKS)
    current = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
    for name in names:
        current[name] = task_record(name)
        print(f"{name}: {current[name]['samples']} samples", file=sys.stderr)
    FIXTURE.write_text(json.dumps(dict(sorted(current.items())), indent=1, sort_keys=True) + "\n", encoding="utf-8")
