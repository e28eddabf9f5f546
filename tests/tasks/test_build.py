"""`build_task` and `variant`: the one task builder, on a toy spec (no bundled suite is built here)."""

from __future__ import annotations

import inspect
from functools import partial

import pytest
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate
from inspect_ai.util import registry_info

from clinical_cf.core.errors import CatalogError
from clinical_cf.registration import SAMPLE_FINGERPRINT, published_version
from clinical_cf.scorers.medpic import medpic_exact_set
from clinical_cf.suites import SUITES
from clinical_cf.tasks.arguments import TaskInputError, choice, count, flag
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task, variant


def toy_spec(path, extra_metadata=None) -> TaskSpec:
    def parts(args):
        samples = [Sample(id=f"s{i}", input="q", target="A", metadata={"i": i}) for i in range(args.n)]
        return TaskParts(samples, generate(), [medpic_exact_set()], "toy", {"mode": args.mode, **(extra_metadata or {})})

    return TaskSpec(
        suite=SUITES["medpic"],
        arguments={"n": partial(count, minimum=1), "mode": partial(choice, allowed=("a", "b")), "allow_unregistered": flag},
        inputs=lambda args: TaskInputs(catalogs=[path]),
        parts=parts,
        setting=lambda args: f"mode_{args.mode}",
    )


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "toy.yaml"
    path.write_text("rules: []\n", encoding="utf-8")
    return path


def test_build_task_checks_registers_stamps_and_versions(catalog):
    task = build_task(toy_spec(catalog), n=2, mode="b", allow_unregistered=True)
    assert task.version == published_version("medpic")
    assert task.metadata["suite"] == "medpic" and task.metadata["setting"] == "mode_b" and task.metadata["mode"] == "b"
    assert task.metadata["catalog_registered"] is False and task.metadata["registration"]["registered"] is False
    assert task.config.max_retries == 2  # the generate defaults
    assert registry_info(task.scorer[-1]).name.endswith("registration_check")
    for sample in task.dataset:
        assert sample.metadata[SAMPLE_FINGERPRINT] == task.metadata["registration"]["fingerprint"]
        assert sample.metadata["catalog_sha256"] == task.metadata["catalog_sha256"]


def test_a_bad_argument_names_itself(catalog):
    with pytest.raises(TaskInputError, match="task argument 'mode': got 'c'"):
        build_task(toy_spec(catalog), n=2, mode="c", allow_unregistered=True)
    with pytest.raises(TaskInputError, match="unknown task argument"):
        build_task(toy_spec(catalog), n=2, mode="a", allow_unregistered=True, bogus=1)


def test_an_unlocked_catalog_is_refused_without_allow_unregistered(catalog):
    with pytest.raises(CatalogError):
        build_task(toy_spec(catalog), n=1, mode="a", allow_unregistered=False)


def test_parts_cannot_overwrite_what_build_task_records(catalog):
    with pytest.raises(TaskInputError, match="catalog_sha256"):
        build_task(toy_spec(catalog, {"catalog_sha256": "x"}), n=1, mode="a", allow_unregistered=True)


def base(n: int = 1, mode: str = "a", allow_unregistered: bool = False, extra: str = "x") -> Task:
    return Task(metadata={"n": n, "mode": mode, "allow_unregistered": allow_unregistered, "extra": extra})


def test_a_variant_shows_only_what_differs():
    @variant(base, mode="b", omit=("extra",), defaults={"n": 5})
    def toy() -> Task:
        """A toy variant."""

    assert list(inspect.signature(toy).parameters) == ["n", "allow_unregistered"]
    assert inspect.signature(toy).parameters["n"].default == 5
    assert toy.__doc__ == "A toy variant."
    assert toy().metadata == {"n": 5, "mode": "b", "allow_unregistered": False, "extra": "x"}
    assert toy(n=2).metadata["n"] == 2
    with pytest.raises(TypeError):
        toy(mode="a")  # fixed: not an argument of the variant
    with pytest.raises(TypeError, match="no argument 'nope'"):
        variant(base, nope=1)
