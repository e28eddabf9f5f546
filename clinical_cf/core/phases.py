"""The points a long command announces (reading logs, a worker pool starting, writing, ...), for the signal tests.

A test cannot make a signal land in a given phase by polling the process table: on a busy machine the phase it
saw may be over before the signal arrives. Instead the report says where it is. With `CLINICAL_CF_TEST_PHASES`
set to `ANNOUNCE_FD,RESUME_FD,PHASE` (two pipe ends the test passed to the process, and one phase name), every
phase reached writes one line `NAME [DETAIL]` to ANNOUNCE_FD, and the first time PHASE is reached the process
holds there, reading RESUME_FD, until the test closes its end. The test sends its signal while the process is
held, in that phase's state (its handlers, its blocked signals, its open pool), then lets it go: a signal the
phase swallows shows as a report that ran on, one the phase defers past its end as one that ended late, never
as a race. Unset (every user run), `reached` is one dictionary lookup.
"""

from __future__ import annotations

import os

ENV = "CLINICAL_CF_TEST_PHASES"
_held: set[str] = set()


def reached(phase: str, detail: str = "") -> None:
    """Announce `phase` (and hold there once, when the test named it); nothing when no test asked."""
    setting = os.environ.get(ENV)
    if not setting:
        return
    announce, resume, hold = setting.split(",", 2)
    os.write(int(announce), f"{phase} {detail}".rstrip().encode() + b"\n")
    if phase == hold and phase not in _held:
        _held.add(phase)
        while os.read(int(resume), 1):  # returns b"" once the test has closed its end (after its signal)
            pass
