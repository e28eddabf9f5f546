"""Speed claims tests can make on a busy machine: growth in CPU time, and CPU-time bounds on a forked child (issue 36).

No test asserts wall-clock time: on a shared machine (CI runners, two cores kept busy by other work) wall-clock time
is mostly the scheduler's. Two measures the load does not move:

- **CPU time** (`time.process_time`: this process's user and system time only), the minimum over repeats, the
  garbage collector paused. A growth claim compares the same kind of input at n and SCALE * n characters; the small
  size is run often enough that one measurement takes at least MIN_MEASURED_SECONDS, so a timer tick or a cache
  refill is noise of a few percent, not a ratio. Linear work grows by SCALE (4), quadratic by 16: GROWTH (10)
  leaves room on both sides.
- **The CPU a forked child has used**, read from the kernel while it runs (psutil), for "a long input finishes":
  a regex stuck in C code holds the interpreter, so neither a thread nor SIGALRM could stop it in-process; the
  child is killed once it has used CHILD_CPU_SECONDS of CPU, however long the scheduler made that take.

Absolute speed (seconds per call, calls per second) lives in bench/, as ratios to a baseline in the same run.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

import psutil
import pytest

SCALE = 4
"""The larger input is this many times the smaller."""

GROWTH = 10.0
"""Largest accepted CPU-time ratio for SCALE times the input (linear: about 4; quadratic: 16)."""

MIN_MEASURED_SECONDS = 0.15
"""Each measurement of the small input runs it often enough to take at least this much CPU."""

REPEATS = 2
"""Measurements per size; the minimum is kept (load and interrupts only ever add time)."""

CHILD_CPU_SECONDS = 20.0
"""A forked child is killed once it has used this much CPU (the long inputs take well under a second of it)."""


def cpu_seconds(call: Callable[[], Any], times: int = 1) -> float:
    """CPU seconds `times` calls of `call` take in this process, the garbage collector paused.

    The collector's full collections come when the heap has grown by a quarter, so on inputs that build many
    containers they land in one size's measurement and not the other's. (No `gc.collect()` first: with the
    test suite's imports one takes over 0.1 s, and a paused collector does not run during the measurement.)"""
    gc.disable()
    try:
        started = time.process_time()
        for _ in range(times):
            call()
        return time.process_time() - started
    finally:
        gc.enable()


def growth(make: Callable[[int], Any], run: Callable[[Any], Any], n: int) -> tuple[float, float, int]:
    """CPU time of `run` on `make(n)` and on `make(SCALE * n)` (each the minimum of REPEATS, taken alternately), and
    the number of calls per measurement (the same for both sizes, chosen so the small one takes MIN_MEASURED_SECONDS)."""
    small, large = make(n), make(SCALE * n)
    once = max(cpu_seconds(lambda: run(small)), 1e-4)
    calls = max(1, math.ceil(MIN_MEASURED_SECONDS / once))
    t_small = t_large = math.inf
    for _ in range(REPEATS):  # alternately, so a stretch of cache pressure does not fall on one size only
        t_small = min(t_small, cpu_seconds(lambda: run(small), calls))
        t_large = min(t_large, cpu_seconds(lambda: run(large), calls))
    return t_small, t_large, calls


def assert_grows_linearly(make: Callable[[int], Any], run: Callable[[Any], Any], n: int, label: str) -> None:
    """`run` on SCALE times the input takes under GROWTH times the CPU: linear, not quadratic or worse."""
    t_small, t_large, calls = growth(make, run, n)
    assert t_large < GROWTH * t_small, (
        f"{label}: {t_small * 1000:.0f} ms of CPU for {calls} call(s) at {n:,}, {t_large * 1000:.0f} ms at {SCALE * n:,} "
        f"({t_large / t_small:.1f}x for {SCALE}x the input; linear is about {SCALE}x, the bound {GROWTH:.0f}x)"
    )


def _child(call: Callable[[], Any], sender: Any) -> None:
    started = time.process_time()
    try:
        outcome: tuple[str, Any] = ("value", call())
    except BaseException as ex:  # noqa: BLE001 - reported to the parent, which decides
        outcome = ("error", f"{type(ex).__name__}: {ex}")
    took = time.process_time() - started
    try:
        sender.send((took, *outcome))
    except Exception:  # noqa: BLE001 - a value that does not pickle: its text is enough for the message
        sender.send((took, outcome[0], repr(outcome[1])[:300]))


def finishes(call: Callable[[], Any], label: str, cpu_limit: float = CHILD_CPU_SECONDS) -> tuple[float, str, Any]:
    """Run `call` in a forked child; fail once the child has used `cpu_limit` seconds of CPU without finishing.

    Returns (CPU seconds the call took, "value" or "error", the value or the error's "Type: message"). The test's
    own timeout (pytest-timeout) stays the guard against a child that never gets the CPU at all."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(call, sender), daemon=True)
    child.start()
    try:
        watched = psutil.Process(child.pid)
        while not receiver.poll(0.05):
            try:
                times = watched.cpu_times()
            except psutil.NoSuchProcess:
                times = None
            if times is None or not child.is_alive():
                if receiver.poll(0):
                    break
                pytest.fail(f"{label}: the child ended without a result (exit code {child.exitcode})")
            elif times.user + times.system > cpu_limit:
                pytest.fail(f"{label}: still running after {cpu_limit:.0f} s of CPU (super-linear work on a long input)")
        return receiver.recv()
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
