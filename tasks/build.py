"""One task builder for every suite: `build_task(spec, **args)`, and `variant` for the thin `@task` files.

Every task is the same loop (case -> intervention -> expectation -> score), so what surrounds it is
written once here, in this order:

1. **arguments**: each is checked by its checker from `clinical_cf.tasks.arguments` (a bad value
   names the argument, the value and what was expected, and the run does not start);
2. **inputs**: the files the task reads are registered (`clinical_cf.registration.register_inputs`:
   catalogs need their locks, bundled data must match theirs) and the pre-registered one's lock is
   checked (`check_lock`);
3. **samples, solver, scorers**: the task's own part (`TaskSpec.parts`), from the checked arguments
   and the lock;
4. **the task**: every sample stamped, in one place, with the pre-registered file's hash and lock
   state (`catalog_sha256`, `catalog_registered`) and the registration fields; the suite's
   published version (`Task.version`, so the log names it), generate defaults, the registration
   check scorer, and task metadata: the suite, the setting where the task has one, the
   pre-registered file's hash and lock state, the task's own fields and the registration.

A task's builder is its `TaskSpec` plus a function whose signature and docstring document the
arguments (`return build_task(SPEC, **locals())`); a public task that differs from another only in
some arguments is a `variant` of it, and says only what differs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from clinical_cf.core.locking import LockStatus, check_lock
from clinical_cf.registration import Registration, published_version, register_inputs, registration_check
from clinical_cf.suites import Suite
from clinical_cf.tasks.arguments import GENERATE_DEFAULTS, TaskInputError, clean_task_errors

Check = Callable[[str, Any], Any]
"""An argument checker: `(name, value) -> checked value`, raising `TaskInputError` on a bad value."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class TaskInputs:
    """The files a task reads: pre-registered catalogs (locks required) and data files (bundled ones locked)."""

    catalogs: Sequence[Path]
    data: Sequence[Path] = ()
    locked: Path | None = None
    """The pre-registered file whose hash and lock state the samples and the log carry (default: the first catalog)."""


@dataclass(frozen=True)
class TaskParts:
    """What a task builds from its checked arguments and its inputs."""

    samples: list[Sample]
    solver: Solver | list[Solver]
    scorers: list[Scorer]
    dataset: str
    """The dataset's name in the log."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The task's own metadata fields (the common ones are added by `build_task`)."""


@dataclass(frozen=True)
class TaskSpec:
    """How one task is built: its suite, its arguments' checks, its inputs and its parts."""

    suite: Suite
    arguments: Mapping[str, Check]
    """Every argument's checker, in the order they are checked (the first bad one is the one reported)."""
    inputs: Callable[[SimpleNamespace], TaskInputs]
    parts: Callable[[SimpleNamespace], TaskParts]
    setting: Callable[[SimpleNamespace], str] | None = None
    """The task's setting (single_shot, agent, agent_observation), logged as `setting` so analysis reads it from the log."""
    before: Callable[[Mapping[str, Any]], None] | None = None
    """A check over several arguments as given (e.g. two that exclude each other), run before the others."""
    task_name: Callable[[SimpleNamespace], str | None] | None = None
    """The task's name in the log where it is not the registered name (the MedPIC variants)."""


@clean_task_errors
def build_task(spec: TaskSpec, /, **args: Any) -> Task:
    """The task `spec` describes, built from every one of its arguments (see the module docstring for the steps).

    A task's builder documents its arguments and their defaults in its signature and passes them all:
    `return build_task(SPEC, **locals())`.
    """
    unknown = sorted(set(args) - set(spec.arguments))
    if unknown:
        raise TaskInputError(f"unknown task argument(s) {', '.join(map(repr, unknown))}; known: {', '.join(spec.arguments)}")
    missing = [name for name in spec.arguments if name not in args]
    if missing:  # defaults live in the builder's signature, which passes every argument
        raise TypeError(f"build_task: missing argument(s) {', '.join(missing)}")
    if spec.before is not None:
        spec.before(args)
    checked = SimpleNamespace(**{name: check(name, args[name]) for name, check in spec.arguments.items()})
    inputs = spec.inputs(checked)
    allow_unregistered = bool(getattr(checked, "allow_unregistered", False))
    registration = register_inputs(list(inputs.catalogs), list(inputs.data), allow_unregistered)
    locked = inputs.locked or inputs.catalogs[0]
    lock = check_lock(locked, allow_unregistered=allow_unregistered)
    parts = spec.parts(checked)
    if not parts.samples:  # Inspect would say only "The specified dataset is empty"
        raise TaskInputError(_selected_nothing(inputs.data, args, spec.suite.name))
    metadata: dict[str, Any] = {"suite": spec.suite.name}
    if spec.setting is not None:
        metadata["setting"] = spec.setting(checked)
    metadata |= {"catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered}
    overridden = sorted(set(parts.metadata) & (set(metadata) | {"registration"}))
    if overridden:
        raise ValueError(f"task metadata {', '.join(overridden)} is set by build_task, not by the task's parts")
    metadata |= parts.metadata
    metadata |= registration.task_metadata()
    name = spec.task_name(checked) if spec.task_name else None
    return Task(
        version=published_version(spec.suite.name),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(stamp(parts.samples, lock, registration), name=parts.dataset),
        solver=parts.solver,
        scorer=[*parts.scorers, registration_check()],
        config=GENERATE_DEFAULTS,
        metadata=metadata,
        **({"name": name} if name else {}),
    )


SELECTING_ARGUMENTS = ("split", "families", "kinds", "samples", "conditions", "condition", "operations", "populations",
                      "types", "task_class", "variant", "residue", "controls")
"""Task arguments that choose which entries become samples; named when a selection gives none."""


def _selected_nothing(data: Any, args: dict[str, Any], suite: str) -> str:
    files = ", ".join(str(path) for path in data) or "the bundled data"
    chosen = ", ".join(f"{name}={args[name]!r}" for name in SELECTING_ARGUMENTS if name in args)
    hint = " (`clinical-cf catalog summary --cases FILE` counts what each intervention applies to)" if suite == "css" else ""
    return f"no samples: {chosen} selects nothing from {files}; widen that selection or pass a file with such entries{hint}"


def stamp(samples: list[Sample], lock: LockStatus, registration: Registration) -> list[Sample]:
    """Every sample's provenance: the pre-registered file's hash and lock state, and the fingerprint of all its inputs."""
    fields = {"catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered, **registration.sample_metadata()}
    for sample in samples:
        sample.metadata = {**(sample.metadata or {}), **fields}
    return samples


def variant(
    base: Callable[..., Task], /, *, omit: Sequence[str] = (), defaults: Mapping[str, Any] | None = None, **fixed: Any
) -> Callable[[F], F]:
    """A public task that is `base` with some arguments fixed, some left out and some defaults changed.

    Use under `@task`, on a function whose docstring describes the task (its body is not run):

        @task
        @variant(build_css_task, families="D", omit=AGENT_ARGUMENTS)
        def css_family_d() -> Task:
            \"\"\"CSS on Family D with paired negative controls.\"\"\"

    The task's signature (what `-T` takes and `inspect list` shows) is `base`'s, without the fixed
    and omitted arguments, with the changed defaults; Inspect reads it from `__signature__`.
    """
    defaults = dict(defaults or {})
    base_signature = inspect.signature(base)
    for name in [*omit, *fixed, *defaults]:
        if name not in base_signature.parameters:
            raise TypeError(f"{getattr(base, '__qualname__', base)} has no argument {name!r}")
    parameters = [
        p.replace(default=defaults.get(p.name, p.default))
        for p in base_signature.parameters.values()
        if p.name not in fixed and p.name not in omit
    ]
    signature = base_signature.replace(parameters=parameters)

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def build(*args: Any, **kwargs: Any) -> Task:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return base(**fixed, **bound.arguments)

        build.__signature__ = signature  # type: ignore[attr-defined]
        del build.__wrapped__  # type: ignore[attr-defined]  # the signature is the variant's, not the placeholder's
        return build  # type: ignore[return-value]

    return decorate
