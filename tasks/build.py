"""One task builder for every suite: `build_task(spec, **args)`.

Every task is the same loop (case -> intervention -> expectation -> score), so what surrounds it is
written once here, in this order:

1. **arguments**: each is checked by the check its annotation in the builder's signature declares
   (`clinical_cf.tasks.arguments.argument_checks`: a bad value names the argument, the value and
   what was expected, and the run does not start);
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

A task's builder is its `TaskSpec` plus a function whose signature declares the arguments (types,
ranges, choices and defaults) and whose docstring describes them: `return build_task(SPEC, **locals())`,
with `SPEC = TaskSpec(..., arguments=<that function>)`. A public task (`tasks/<name>/<name>.py`) is a
plain `@task` function with its own signature that calls a builder and passes what differs
(`return build_css_task(families="D", setting="single_shot", **locals())`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from clinical_cf.core.locking import LockStatus, check_lock
from clinical_cf.registration import Registration, published_version, register_inputs, registration_check
from clinical_cf.suites import Suite
from clinical_cf.tasks.arguments import GENERATE_DEFAULTS, Check, TaskInputError, argument_checks, clean_task_errors

__all__ = ["Check", "TaskInputs", "TaskParts", "TaskSpec", "build_task", "stamp"]


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
    arguments: Callable[..., Task]
    """The builder whose signature declares every argument: its annotations are the checks, run in signature order."""
    inputs: Callable[[SimpleNamespace], TaskInputs]
    parts: Callable[[SimpleNamespace], TaskParts]
    setting: Callable[[SimpleNamespace], str] | None = None
    """The task's setting (single_shot, agent, agent_observation), logged as `setting` so analysis reads it from the log."""
    before: Callable[[Mapping[str, Any]], None] | None = None
    """A check over several arguments as given (e.g. two that exclude each other), run before the others."""
    task_name: Callable[[SimpleNamespace], str | None] | None = None
    """The task's name in the log where it is not the registered name (the MedPIC variants)."""
    needs_model: bool = True
    """Its solver asks the model under test (the judge audit asks only the judge role): `none/none` is refused."""


NO_MODEL = (
    "no model to evaluate: pass --model <provider>/<model> (for example --model openai/gpt-5) "
    "or set INSPECT_EVAL_MODEL in the environment or a .env file"
)


def check_model_under_test() -> None:
    """Refuse to build inside an eval whose model is Inspect's `none/none` (no --model and no INSPECT_EVAL_MODEL).

    Inspect builds a task with the eval's model active; with neither given that model is `none/none`,
    and a solver that asks it crashed in the middle of the run. Outside an eval (tests, exports
    counting samples) there is no model to check and nothing is asked.
    """
    try:
        model = get_model()
    except Exception:  # no active model and no INSPECT_EVAL_MODEL (or one that cannot be built here): not an eval
        return
    if str(model) == "none/none":
        raise TaskInputError(NO_MODEL)


@clean_task_errors
def build_task(spec: TaskSpec, /, **args: Any) -> Task:
    """The task `spec` describes, built from every one of its arguments (see the module docstring for the steps).

    A task's builder documents its arguments and their defaults in its signature and passes them all:
    `return build_task(SPEC, **locals())`.
    """
    checks = argument_checks(spec.arguments)
    unknown = sorted(set(args) - set(checks))
    if unknown:
        raise TaskInputError(f"unknown task argument(s) {', '.join(map(repr, unknown))}; known: {', '.join(checks)}")
    missing = [name for name in checks if name not in args]
    if missing:  # defaults live in the builder's signature, which passes every argument
        raise TypeError(f"build_task: missing argument(s) {', '.join(missing)}")
    if spec.before is not None:
        spec.before(args)
    checked = SimpleNamespace(**{name: check(name, args[name]) for name, check in checks.items()})
    if spec.needs_model:
        check_model_under_test()
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
