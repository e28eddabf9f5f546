"""`build_task`: the one task builder, on a toy spec whose signature declares its arguments (no bundled suite is built here)."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate
from inspect_ai.util import registry_info

from clinical_cf.core.errors import CatalogError
from clinical_cf.registration import SAMPLE_FINGERPRINT, published_version
from clinical_cf.scorers.medpic import medpic_exact_set
from clinical_cf.suites import SUITES
from clinical_cf.tasks.arguments import Between, TaskInputError, argument_checks
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task


def toy_builder(n: Annotated[int, Between(1)] = 1, mode: Literal["a", "b"] = "a", allow_unregistered: bool = False) -> Task:
    """The toy task's declaration: its signature is the arguments' checks."""
    raise AssertionError("build_task reads the signature; the toy builder itself is never called")


def toy_spec(path, extra_metadata=None) -> TaskSpec:
    def parts(args):
        samples = [Sample(id=f"s{i}", input="q", target="A", metadata={"i": i}) for i in range(args.n)]
        return TaskParts(samples, generate(), [medpic_exact_set()], "toy", {"mode": args.mode, **(extra_metadata or {})})

    return TaskSpec(
        suite=SUITES["medpic"],
        arguments=toy_builder,
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


def test_the_checks_are_the_signatures_annotations_in_its_order():
    checks = argument_checks(toy_builder)
    assert list(checks) == ["n", "mode", "allow_unregistered"]
    assert checks["n"]("n", "3") == 3 and checks["mode"]("mode", "b") == "b" and checks["allow_unregistered"]("x", "true") is True
    with pytest.raises(TaskInputError, match="task argument 'n': got 0; expected a whole number >= 1"):
        checks["n"]("n", 0)


def test_an_argument_whose_annotation_declares_no_check_is_refused():
    def loose(x: str = "a") -> Task:  # a bare str: nothing says which values are allowed
        raise AssertionError

    with pytest.raises(TypeError, match="declares no check"):
        argument_checks(loose)
