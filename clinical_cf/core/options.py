"""Command-line option types with their ranges: a number outside its range is refused while the command line is read.

Each is an argparse `type=`: it raises `ArgumentTypeError`, which argparse prints as one line naming the option
(`argument --limit: must be a whole number from 1 to 1,000,000 (got '-1')`) and exits 2, before anything runs or
is written. A value that is not accepted is never echoed whole (`shown`): a secret pasted into the wrong option
stays on the user's screen only as its first characters.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from clinical_cf.core.errors import shown
from clinical_cf.core.outputs import OutputPathError, refuse_bundled

MAX_COUNT = 1_000_000
"""Largest count an option takes (rows, pairs, resamples): above every bundled and plausible user set."""

MAX_SEED = 2**32 - 1
"""Seeds are what numpy's and Python's generators take on every platform: 0 to 2**32 - 1."""


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high` (`1.5`, `1e9`, `nan` refused)."""

    def parse(text: str) -> int:
        try:
            number = int(text.strip())
        except (ValueError, AttributeError):
            raise argparse.ArgumentTypeError(
                f"must be a whole number from {_number_text(low)} to {_number_text(high)} (got {shown(text)})"
            ) from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(
                f"must be a whole number from {_number_text(low)} to {_number_text(high)} (got {shown(text)})"
            )
        return number

    parse.__name__ = "whole number"
    return parse


def real_number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from `low` to `high` (`nan`, `inf` refused)."""

    def parse(text: str) -> float:
        expected = f"must be a finite number from {_number_text(low)} to {_number_text(high)} (got {shown(text)})"
        try:
            number = float(text)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(expected) from None
        if not math.isfinite(number) or not low <= number <= high:
            raise argparse.ArgumentTypeError(expected)
        return number

    parse.__name__ = "number"
    return parse


def output_path(text: str) -> str:
    """An argparse type for `--out` and other files a command writes: refused when it resolves into the bundled data."""
    try:
        refuse_bundled(text, "")
    except OutputPathError as ex:
        raise argparse.ArgumentTypeError(str(ex).strip()) from None
    return text
