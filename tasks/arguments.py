"""Task arguments: declared once, in a builder's signature, and checked from it; the clean error a bad one ends in.

`inspect eval tasks/... -T name=value` hands the builder whatever the command line parsed (YAML
scalars: `true`, `3`, `abc`, a list for `a,b`). Each argument is checked when the task is built,
so an unknown value names the argument, the value and the allowed values, and a run never
records a value it silently ignored (`-T mutation_mode=bogus` once ran regex mode and logged "bogus").

An argument's type, range and choices are its annotation, and nothing else declares them:

    def build_x_task(
        mode: Literal["regex", "structured"] = "regex",     # one of the choices
        samples: Annotated[int | None, Between(1, MAX_COUNT)] = 100,   # a whole number in range, or none
        scale: Annotated[float, Between(1, MAX_SCALE)] = 1.0,          # a number in range
        kinds: Annotated[str | list[str], CommaList(KINDS)] = "a,b",   # a comma list of choices
        cases: UserFile = None,                              # a user file (left out: the bundled one)
        reader: RoleName = "reader",                         # a model role, or "none"
        json_schema: bool = True,                            # true or false
    ) -> Task:

`argument_checks(builder)` derives each argument's check (and `accepted(annotation)` the words the
docs and the error message use) from the annotation; `clinical_cf.tasks.build.build_task` runs them.

Errors are raised as Inspect's own `PrerequisiteError`, the exception Inspect uses for
"this run cannot start" (a missing package, a missing API key): its CLI prints the message
alone and exits non-zero, instead of the 130-300 line traceback any other exception raised
while building a task produces. Inspect exports no public alias for it; `catalog.errors` is the one
module that imports it.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import rich
from inspect_ai.model import GenerateConfig
from rich.markup import escape

from clinical_cf.core.errors import CatalogError, PrerequisiteError
from clinical_cf.core.loading import check_regular_file, comma_list, resolve_user_path

F = TypeVar("F", bound=Callable[..., Any])

Check = Callable[[str, Any], Any]
"""An argument checker: `(name, value) -> checked value`, raising `TaskInputError` on a bad value."""


class TaskInputError(PrerequisiteError, ValueError):
    """A task argument or a data file the task reads is invalid: the run does not start.

    A `ValueError` too, so code that builds tasks itself (the exports, `clinical-cf`) handles it
    like the other input errors.
    """

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        # Inspect prints `message` with rich: escape it, or "['a', 'b']" is read as markup and vanishes.
        PrerequisiteError.__init__(self, f"[bold red]error[/bold red]: {escape(message)}")
        self.text = message

    def __str__(self) -> str:
        return self.text


def argument_error(name: str, value: Any, expected: str) -> TaskInputError:
    return TaskInputError(f"task argument '{name}': got {value!r}; expected {expected}")


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """One of `allowed` (exact, case-sensitive: the value is recorded in the log as given)."""
    options = tuple(allowed)
    if not isinstance(value, str) or value not in options:
        raise argument_error(name, value, f"one of {', '.join(options)}")
    return value


def selection(name: str, value: Any, allowed: Iterable[str], all_word: bool = True) -> set[str]:
    """A comma list (or Inspect's list for `-T name=a,b`) of values from `allowed`; empty or "all" selects all."""
    options = tuple(allowed)
    if value is not None and not isinstance(value, (str, list, tuple)):
        raise argument_error(name, value, f"a comma list of {', '.join(options)}")
    wanted = comma_list(value)
    if all_word and (not wanted or wanted == {"all"}):
        return set(options)
    if not wanted:
        raise argument_error(name, value, f"a comma list of {', '.join(options)}")
    unknown = sorted(wanted - set(options))
    if unknown:
        extra = " or 'all'" if all_word else ""
        raise TaskInputError(
            f"task argument '{name}': unknown value(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(options)}{extra}"
        )
    return wanted


ROLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
ROLE_EXPECTED = 'a model role name (letters, digits, "_" or "-"), or "none"'


def model_role(name: str, value: Any) -> str:
    """A model role's name (bound with `--model-role NAME=...`), or "none" where the role can be turned off."""
    if not isinstance(value, str) or not ROLE_NAME.fullmatch(value):
        raise argument_error(name, value, ROLE_EXPECTED)
    return value


def flag(name: str, value: Any) -> bool:
    """A boolean; Inspect parses `true`/`false`, and the strings are accepted for Python callers."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise argument_error(name, value, "true or false")


MAX_SCALE = 5.0
"""Largest `-T scale`: packets five times their recorded length (about 44,000 characters).

Measured (2026-12-01, one core): building `css` (all families, 690 samples) takes 8.7 s of CPU at
scale 1, 44 s at scale 5 and grows linearly beyond (about 9 s per unit of scale), so 10 would take
over 90 s and the 100 once documented never finished. 5 is the largest that builds in under 60 s.
"""

MAX_COUNT = 1_000_000
"""Largest sample or tuple limit (`-T tuples`, `-T samples`): above every bundled and plausible user set."""

MAX_SECTION_CAP_BYTES = 4_000_000
"""Largest agent tool-reply cap: a chart section is at most 1,000,000 characters (4 bytes each at most in UTF-8),
so a larger cap would never cut anything."""

MAX_MESSAGES = 1000
"""Largest agent message limit."""


def number(name: str, value: Any, minimum: float | None = None, positive: bool = False, maximum: float | None = None) -> float:
    """A finite real number within the bounds (`positive`: strictly above 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise argument_error(name, value, "a number")
    try:
        result = float(value)
    except (ValueError, OverflowError):
        raise argument_error(name, value, "a number") from None
    if not math.isfinite(result):
        raise argument_error(name, value, "a finite number" + _range(minimum, maximum))
    if positive and result <= 0:
        raise argument_error(name, value, "a number above 0" + _range(minimum, maximum))
    if (minimum is not None and result < minimum) or (maximum is not None and result > maximum):
        raise argument_error(name, value, "a number" + _range(minimum, maximum))
    return result


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" >= {minimum:g} and <= {maximum:g}"
    if minimum is not None:
        return f" >= {minimum:g}"
    return f" <= {maximum:g}" if maximum is not None else ""


def count_expected(minimum: int, maximum: int | None, optional: bool) -> str:
    return f"a whole number >= {minimum}" + (f" and <= {maximum:,}" if maximum is not None else "") + (" or none" if optional else "")


def count(name: str, value: Any, minimum: int = 1, optional: bool = False, maximum: int | None = None) -> int | None:
    """A whole number >= `minimum` and <= `maximum` (None allowed when `optional`: "no limit")."""
    expected = count_expected(minimum, maximum, optional)
    if value is None or (optional and isinstance(value, str) and value.strip().lower() in ("none", "null", "all")):
        if optional:
            return None
        raise argument_error(name, value, expected)
    if isinstance(value, bool):
        raise argument_error(name, value, expected)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,18}\s*", value):
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < minimum or (maximum is not None and value > maximum):
        raise argument_error(name, value, expected)
    return value


def _joined_path(value: Any) -> Any:
    """A path Inspect split on its commas (`-T cases=/data/a,b.jsonl` arrives as ['/data/a', 'b.jsonl']), rejoined."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(part, str) for part in value):
        return ",".join(value)
    return value


def _empty_path(name: str, value: Any) -> TaskInputError:
    shown = "null" if value is None else repr(value)
    return TaskInputError(
        f"task argument '{name}': got {shown}; expected a file path (to use the bundled file, leave it out)"
    )


def checked_paths(builder: F) -> F:
    """Check the path arguments a task was called with, before its defaults apply.

    Inspect reads both `-T cases=` and `-T cases=null` as None, which a task cannot tell from
    "not given": both silently ran the bundled file. Applied under `@task`, this sees only the
    arguments actually passed: a path argument (annotated `UserFile`) passed as None, empty or blank
    is refused, and a path Inspect split on its commas is joined back.
    """

    @functools.wraps(builder)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for name in file_arguments(builder) & kwargs.keys():
            value = _joined_path(kwargs[name])
            if value is None or (isinstance(value, str) and not value.strip()) or value == []:
                error = _empty_path(name, kwargs[name])
                shown_under_display_none(error)
                raise error
            kwargs[name] = value
        return builder(*args, **kwargs)

    wrapper.checks_paths = True  # type: ignore[attr-defined]  # tests/tasks/test_arguments.py finds it on every task
    return wrapper  # type: ignore[return-value]


def input_file(name: str, value: Any) -> Path | None:
    """A user file passed as a task argument: None when not given, else an existing regular file.

    A path with commas may arrive as Inspect's list of its parts: it is joined back.
    """
    if value is None:
        return None
    value = _joined_path(value)
    if not isinstance(value, str) or not value.strip():
        raise _empty_path(name, value) if isinstance(value, str) else argument_error(name, value, "a file path")
    path = resolve_user_path(value)
    try:
        check_regular_file(path)
    except CatalogError as ex:
        if path.is_dir():
            raise TaskInputError(f"task argument '{name}': {path} is a directory; pass a file") from None
        if not path.exists():
            raise TaskInputError(f"task argument '{name}': file not found: {path}") from None
        raise TaskInputError(f"task argument '{name}': {path} {ex.detail}") from None
    return path


def exclusive(**values: Any) -> None:
    """At most one of the named arguments may be given."""
    given = [f"'{name}' ({value!r})" for name, value in values.items() if value]
    if len(given) > 1:
        raise TaskInputError(f"task arguments {' and '.join(given)}: pass only one of them")


def clean_task_errors(builder: F) -> F:
    """Turn the input errors a task builder raises into `TaskInputError` (a one-screen message, non-zero exit).

    Catalog and data errors (`CatalogError`) are already prerequisite errors naming the file, the
    entry and the field; a mutation that fails on a case, an unreadable file or a data model's own
    check (`ValueError`) is turned into one here.
    """

    @functools.wraps(builder)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return builder(*args, **kwargs)
            except (TaskInputError, CatalogError):
                raise  # already Inspect's PrerequisiteError, naming file, entry and field
            except (OSError, UnicodeError) as ex:
                where = getattr(ex, "filename", None)
                raise TaskInputError(f"{where or 'input'}: cannot read ({ex})") from None
            except (ValueError, re.error) as ex:
                # MutationError and the data models' own checks: they name the case and the intervention.
                raise TaskInputError(str(ex)) from None
        except (TaskInputError, CatalogError) as error:
            shown_under_display_none(error)
            raise

    return wrapper  # type: ignore[return-value]


def shown_under_display_none(error: Exception) -> None:
    """Write the error to stderr when `--display none` silenced the console Inspect prints it with.

    Inspect's CLI prints a `PrerequisiteError` with rich's global console, which `--display none`
    makes quiet: the run ended with exit 1 and nothing said why. Otherwise Inspect prints it itself.
    """
    if rich.get_console().quiet:
        print(f"error: {error}", file=sys.stderr)


GENERATE_DEFAULTS = GenerateConfig(max_retries=2, timeout=600)
"""Bounded retries and a per-call timeout for every task, as task config rather than `.env`.

Inspect's `eval-retry` reads `INSPECT_EVAL_MAX_RETRIES` / `INSPECT_EVAL_TIMEOUT` from the
environment and lets them override the settings logged with the run, so defaults kept in `.env`
silently replaced a run's own `--max-retries` / `--timeout` on retry. As task config they apply
under anything given on the command line, are logged with the run, and a retry replays the log.
"""


# --- declaring an argument once: its annotation ----------------------------------------------------


@dataclass(frozen=True)
class Between:
    """`Annotated[int, Between(1, 100)]`: a whole number in the range; `Annotated[float, Between(1, 5)]`: a number."""

    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class CommaList:
    """`Annotated[str | list[str], CommaList(("a", "b"))]`: a comma list of the choices (empty or "all" selects all,
    unless `all_word` is false; `optional`: empty means no filter, None)."""

    choices: tuple[str, ...]
    all_word: bool = True
    optional: bool = False


@dataclass(frozen=True)
class File:
    """A user file (`UserFile`): left out, the task reads its bundled file; given, it must be an existing file."""


@dataclass(frozen=True)
class Role:
    """A model role's name (`RoleName`), bound with `--model-role NAME=...`."""


@dataclass(frozen=True)
class Only:
    """`Annotated[..., Only(setting="agent")]`: the argument means something only where that argument has that value.

    A variant (`clinical_cf.tasks.build.variant`) that fixes `setting="single_shot"` does not take an argument
    marked `Only(setting="agent")`; for a comma-list argument the fixed value must include the value
    (`Only(kinds="cf")` is kept by a variant fixing `kinds="gf,cf"`, dropped by one fixing `kinds="gf"`).
    """

    conditions: dict[str, str]

    def __init__(self, **conditions: str) -> None:
        object.__setattr__(self, "conditions", conditions)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.conditions.items())))

    def holds(self, fixed: dict[str, Any]) -> bool:
        """Whether the argument applies under the `fixed` arguments (a condition on an argument not fixed holds)."""
        return all(name not in fixed or value in comma_list(fixed[name]) for name, value in self.conditions.items())


@dataclass(frozen=True)
class Checked:
    """An argument with its own check (`check(name, value) -> value`) and the words that say what it accepts."""

    check: Check
    accepts: str


UserFile = Annotated[str | None, File()]
RoleName = Annotated[str, Role()]
SelfJudging = Literal["refuse", "allow"]
"""A judged task's opt-in to the model under test judging its own replies when no judge role is bound
(`clinical_cf.judging.missing_judge`); the default refuses to start."""


def _split(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """(the type, its Annotated markers that declare its check: `Only` says where it applies, not what it accepts)."""
    if get_origin(annotation) is Annotated:
        base, *markers = get_args(annotation)
        return base, tuple(m for m in markers if not isinstance(m, Only))
    return annotation, ()


def applies(annotation: Any, fixed: dict[str, Any]) -> bool:
    """Whether an argument with this annotation is taken by a task that fixes `fixed` (its `Only` markers hold)."""
    if get_origin(annotation) is not Annotated:
        return True
    return all(m.holds(fixed) for m in get_args(annotation)[1:] if isinstance(m, Only))


def _optional(base: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    if get_origin(base) in (Union, types.UnionType):
        members = [a for a in get_args(base) if a is not type(None)]
        if len(members) < len(get_args(base)):
            return (members[0] if len(members) == 1 else base), True
    return base, False


def _literal(base: Any) -> tuple[str, ...] | None:
    return tuple(get_args(base)) if get_origin(base) is Literal else None


def declared(annotation: Any) -> tuple[Check, str]:
    """(the check, what it accepts in the words of its error) that an argument's annotation declares.

    A TypeError for an annotation that declares none (a bare `str`): every argument says what it accepts.
    """
    base, markers = _split(annotation)
    inner, optional = _optional(base)
    marker = markers[0] if markers else None
    if isinstance(marker, Checked):
        return marker.check, marker.accepts
    if isinstance(marker, File):
        return input_file, "a file path"
    if isinstance(marker, Role):
        return model_role, ROLE_EXPECTED
    if isinstance(marker, CommaList):
        words = f"a comma list of {', '.join(marker.choices)}" + (" or all" if marker.all_word else "")
        if marker.optional:
            return (lambda name, value: selection(name, value, marker.choices) if comma_list(value) else None), words
        return functools.partial(selection, allowed=marker.choices, all_word=marker.all_word), words
    if isinstance(marker, Between) and inner is int:
        low = 1 if marker.minimum is None else int(marker.minimum)
        high = None if marker.maximum is None else int(marker.maximum)
        return functools.partial(count, minimum=low, optional=optional, maximum=high), count_expected(low, high, optional)
    if isinstance(marker, Between) and inner is float:
        low_high = marker.minimum, marker.maximum
        return functools.partial(number, minimum=low_high[0], maximum=low_high[1]), "a number" + _range(*low_high)
    if inner is bool:
        return flag, "true or false"
    if (choices := _literal(inner)) is not None:
        return functools.partial(choice, allowed=choices), f"one of {', '.join(choices)}"
    raise TypeError(f"the annotation {annotation!r} declares no check: use bool, Literal, Annotated[..., Between/CommaList/...]")


def check_for(annotation: Any) -> Check:
    return declared(annotation)[0]


def accepted(annotation: Any) -> str:
    """What an argument accepts, in the words of its error message (for the docs' argument tables)."""
    return declared(annotation)[1]


def annotations_of(builder: Callable[..., Any]) -> dict[str, Any]:
    """Every parameter's annotation, resolved (the builder's module may use `from __future__ import annotations`)."""
    function = inspect.unwrap(builder)
    hints = get_type_hints(function, include_extras=True)
    return {name: hints[name] for name in inspect.signature(function).parameters}


def file_arguments(builder: Callable[..., Any]) -> frozenset[str]:
    """The arguments that name a user file (annotated `UserFile`): left out, the task reads its bundled file."""
    return frozenset(name for name, annotation in annotations_of(builder).items() if isinstance(_marker(annotation), File))


def _marker(annotation: Any) -> Any:
    markers = _split(annotation)[1]
    return markers[0] if markers else None


@functools.cache
def argument_checks(builder: Callable[..., Any]) -> dict[str, Check]:
    """Every argument's check, derived from the builder's signature, in signature order (the first bad one is reported)."""
    return {name: check_for(annotation) for name, annotation in annotations_of(builder).items()}
