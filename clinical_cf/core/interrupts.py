"""Ctrl-C and SIGTERM end a command wherever they land: raised where the process is, or, inside a short window
that must not be cut (a worker pool forking or being ended, a report's files moved into place), held back until
the window closes and raised then. Never swallowed, never deferred past the window.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from clinical_cf.core.errors import Terminated

INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def deferred() -> Iterator[None]:
    """SIGINT and SIGTERM held back (blocked) for the block, delivered (and raised) the moment it ends."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal mask; the block runs as any other code
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def _terminated(signum, frame):
    raise Terminated()


@contextmanager
def raised() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM `Terminated` wherever the main thread is, for the block.

    SIGINT gets a handler of its own rather than Python's default one: an event loop started inside the block
    (Inspect reads logs through `anyio.run`) replaces the default handler with one that only cancels its task,
    and a task that ends normally after that cancellation loses the Ctrl-C; asyncio leaves a handler of ours alone.
    Outside the main thread (no handler can be set there) the block runs unchanged."""
    try:
        previous = {signal.SIGINT: signal.signal(signal.SIGINT, _interrupted),
                    signal.SIGTERM: signal.signal(signal.SIGTERM, _terminated)}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
