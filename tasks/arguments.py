"""Task-argument checks shared by every task builder, and the clean error a bad argument or data file ends in.

`inspect eval tasks/... -T name=value` hands the builder whatever the command line parsed (YAML
scalars: `true`, `3`, `abc`, a list for `a,b`). Each argument is checked here when the task is
built, so an unknown value names the argument, the value and the allowed values, and a run
never records a value it silently ignored (`-T mutation_mode=bogus` once ran regex mode and
logged "bogus").

Errors are raised as Inspect's own `PrerequisiteError`, the exception Inspect uses for
"this run cannot start" (a missing package, a missing API key): its CLI prints the message
alone and exits non-zero, instead of the 130-300 line traceback any other exception raised
while building a task produces. Inspect exports no public alias for it; `catalog.errors` is the one
module that imports it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai.model import GenerateConfig
from rich.markup import escape

from clinical_cf.core.errors import CatalogError, PrerequisiteError
from clinical_cf.core.loading import check_regular_file, comma_list, resolve_user_path

F = TypeVar("F", bound=Callable[..., Any])


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


def model_role(name: str, value: Any) -> str:
    """A model role's name (bound with `--model-role NAME=...`), or "none" where the role can be turned off."""
    if not isinstance(value, str) or not ROLE_NAME.fullmatch(value):
        raise argument_error(name, value, 'a model role name (letters, digits, "_" or "-"), or "none"')
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


def count(name: str, value: Any, minimum: int = 1, optional: bool = False, maximum: int | None = None) -> int | None:
    """A whole number >= `minimum` and <= `maximum` (None allowed when `optional`: "no limit")."""
    expected = f"a whole number >= {minimum}" + (f" and <= {maximum:,}" if maximum is not None else "")
    expected += " or none" if optional else ""
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


PATH_ARGUMENTS = frozenset({
    "cases", "catalog", "counterfactuals", "observations", "probes", "vignettes", "perturbations", "rules",
    "questions", "episodes", "seeds", "corpus",
})
"""Task arguments that name a user file. Left out, a task reads its bundled file; given, it must name a file."""


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
    arguments actually passed: a path argument passed as None, empty or blank is refused, and a
    path Inspect split on its commas is joined back.
    """

    @functools.wraps(builder)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for name in PATH_ARGUMENTS & kwargs.keys():
            value = _joined_path(kwargs[name])
            if value is None or (isinstance(value, str) and not value.strip()) or value == []:
                raise _empty_path(name, kwargs[name])
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
            return builder(*args, **kwargs)
        except (TaskInputError, CatalogError):
            raise  # already Inspect's PrerequisiteError, naming file, entry and field
        except (OSError, UnicodeError) as ex:
            where = getattr(ex, "filename", None)
            raise TaskInputError(f"{where or 'input'}: cannot read ({ex})") from None
        except (ValueError, re.error) as ex:
            # MutationError and the data models' own checks: they name the case and the intervention.
            raise TaskInputError(str(ex)) from None

    return wrapper  # type: ignore[return-value]


GENERATE_DEFAULTS = GenerateConfig(max_retries=2, timeout=600)
"""Bounded retries and a per-call timeout for every task, as task config rather than `.env`.

Inspect's `eval-retry` reads `INSPECT_EVAL_MAX_RETRIES` / `INSPECT_EVAL_TIMEOUT` from the
environment and lets them override the settings logged with the run, so defaults kept in `.env`
silently replaced a run's own `--max-retries` / `--timeout` on retry. As task config they apply
under anything given on the command line, are logged with the run, and a retry replays the log.
"""
