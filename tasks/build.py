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
with `SPEC = TaskSpec(..., arguments=<that function>)`. A public task (`tasks/<name>/<name>.py`) that
is a builder with some arguments fixed is a *variant*: one `@task` declaration naming only what differs,

    @task
    @variant(build_css_task, families="D", setting="single_shot")
    def css_family_d(**args: Any) -> Task:
        '''Surgery status: resection removed or added.'''

whose signature (what `-T` takes, what Inspect logs with its defaults, what docs/arguments.md lists) is
the builder's without the fixed arguments and without those marked `Only(...)` for another value of a
fixed one (see `variant`).
"""

from __future__ import annotations

import inspect
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
from clinical_cf.judging import judge_bound
from clinical_cf.registration import Registration, published_version, register_inputs, registration_check
from clinical_cf.suites import Suite
from clinical_cf.tasks.arguments import (
    GENERATE_DEFAULTS,
    Check,
    TaskInputError,
    annotations_of,
    applies,
    argument_checks,
    checked_paths,
    clean_task_errors,
)

__all__ = ["Check", "TaskInputs", "TaskParts", "TaskSpec", "build_task", "stamp", "variant"]


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
    judged: Callable[[SimpleNamespace], bool] | None = None
    """Whether the task (with these arguments) asks a judge role; if so its builder takes `self_judging: SelfJudging`, and
    with no judge bound each sample stops in its setup step unless that is "allow" (`clinical_cf.judging.judge_bound`)."""


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
    judged = spec.judged is not None and spec.judged(checked)
    inputs = spec.inputs(checked)
    allow_unregistered = bool(getattr(checked, "allow_unregistered", False))
    registration = register_inputs(list(inputs.catalogs), list(inputs.data), allow_unregistered)
    locked = inputs.locked or inputs.catalogs[0]
    lock = check_lock(locked, allow_unregistered=allow_unregistered)
    parts = spec.parts(checked)
    if not parts.samples:  # Inspect would say only "The specified dataset is empty"
        raise TaskInputError(_selected_nothing(inputs.data, args, spec))
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
        # Built outside the eval (a Python caller), the roles were not known yet: each sample checks before it starts.
        **({"setup": judge_bound(f"this {spec.suite.short_name} task")} if judged and checked.self_judging != "allow" else {}),
        **({"name": name} if name else {}),
    )


def _selected_nothing(data: Any, args: dict[str, Any], spec: TaskSpec) -> str:
    """Why a selection gave no samples: every argument given a value other than its default (what chose the entries)."""
    files = ", ".join(str(path) for path in data) or "the bundled data"
    defaults = {name: p.default for name, p in inspect.signature(inspect.unwrap(spec.arguments)).parameters.items()}
    chosen = ", ".join(f"{name}={value!r}" for name, value in args.items() if name in defaults and value != defaults[name])
    hint = " (`clinical-cf catalog summary --cases FILE` counts what each intervention applies to)" if spec.suite.name == "css" else ""
    chosen = chosen or "the defaults"
    return f"no samples: {chosen} select nothing from {files}; widen that selection or pass a file with such entries{hint}"


def stamp(samples: list[Sample], lock: LockStatus, registration: Registration) -> list[Sample]:
    """Every sample's provenance: the pre-registered file's hash and lock state, and the fingerprint of all its inputs."""
    fields = {"catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered, **registration.sample_metadata()}
    for sample in samples:
        sample.metadata = {**(sample.metadata or {}), **fields}
    return samples


def variant(
    builder: Callable[..., Task], /, defaults: Mapping[str, Any] | None = None, **fixed: Any
) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Declare a public task as `builder` with `fixed` arguments: the decorated function's name and docstring, the
    builder's other arguments (with their defaults, or those in `defaults` where the variant's differ).

    The task's signature is derived, never copied: the builder's parameters, in its order, with its
    annotations and defaults, less the fixed ones and those marked `Only(...)` for a value the fixed
    arguments exclude (`Only(setting="agent")` under `setting="single_shot"`). Inspect reads it for
    `-T` and logs every argument with its default; the docs list it; a path argument passed empty is
    refused (`checked_paths`). The decorated function takes `**args` and has no body: what it does is
    the builder's. A fixed argument or one the variant does not take, passed anyway, is refused.
    """
    parameters = inspect.signature(inspect.unwrap(builder)).parameters
    defaults = dict(defaults or {})
    unknown = sorted(set(fixed) - set(parameters))
    if unknown:
        raise TypeError(f"variant of {builder.__name__}: it has no argument(s) {', '.join(unknown)}")
    hints = annotations_of(builder)
    taken = [
        p.replace(annotation=hints[name], default=defaults.get(name, p.default))
        for name, p in parameters.items()
        if name not in fixed and applies(hints[name], fixed)
    ]
    stray = sorted(set(defaults) - {p.name for p in taken})
    if stray:
        raise TypeError(f"variant of {builder.__name__}: defaults for argument(s) it does not take: {', '.join(stray)}")

    def declare(declaration: Callable[..., Task]) -> Callable[..., Task]:
        own = [p for p in inspect.signature(declaration).parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        if own:
            raise TypeError(f"{declaration.__name__}: a variant declares no arguments of its own (its arguments are {builder.__name__}'s)")
        names = [p.name for p in taken]

        def variant_task(**args: Any) -> Task:
            refused = sorted(set(args) - set(names))
            if refused:
                raise TaskInputError(
                    f"task {declaration.__name__} does not take {', '.join(map(repr, refused))}; its arguments: {', '.join(names)}"
                )
            return builder(**fixed, **(defaults | args))

        variant_task.__name__ = declaration.__name__
        variant_task.__qualname__ = declaration.__qualname__
        variant_task.__module__ = declaration.__module__
        variant_task.__doc__ = declaration.__doc__
        variant_task.__signature__ = inspect.Signature(taken, return_annotation=Task)  # type: ignore[attr-defined]
        variant_task.__annotations__ = {p.name: p.annotation for p in taken} | {"return": Task}
        variant_task.variant_of = builder  # type: ignore[attr-defined]  # the docs describe its arguments from the builder's Args
        variant_task.fixed = dict(fixed)  # type: ignore[attr-defined]
        return checked_paths(clean_task_errors(variant_task))  # `-T cases=` / `=null` refused, a path with commas rejoined

    return declare
