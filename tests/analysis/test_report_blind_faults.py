"""Blind round (issue 48 with issue 46's report-writing defects): `clinical-cf report` from outside.

Runs `bench/report_fault_probe.py` in its quick form: the installed CLI in a fresh process in its own
session, real signals at seeded delays over a measured cold run (no CLINICAL_CF_TEST_PHASES), two reports
into one --out, --out read-only / under RLIMIT_FSIZE / symlinked / missing / inside the logs / removed,
logs changed while read, and `touch -d` into the future and past around a content change. Each class
passes when no case is silent, a traceback, a hang or leftover (a live process of the report's session
or a hidden entry in --out). Classes that fail today are xfail(strict=False) with what was seen.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ROOT = Path(__file__).resolve().parents[2]
BAD = ("unclear", "silent", "traceback", "hang", "leftover")


def _module():
    spec = importlib.util.spec_from_file_location("report_fault_probe", ROOT / "bench" / "report_fault_probe.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["report_fault_probe"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    module = _module()
    work = tmp_path_factory.mktemp("blind")
    os.environ.pop("CLINICAL_CF_TEST_PHASES", None)
    logs, alt = module.build_logs(work / "data", tuples=30, models=2)
    probe = module.Probe(work, logs, alt)
    probe.fracs, probe.stamps, probe.targets, probe.limits = (0.4,), ("2099-01-01", "1990-01-01"), ("log", "all"), (20_000, 400_000)
    probe.reference()
    d = probe.fresh("cold")
    _, _, probe.cold_wall = module.Run([str(logs), "--out", str(d / "out")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")}).wait()
    return probe


def _bad(probe, cls: str) -> list:
    return [r for r in probe.results if r[0] == cls and r[2] in BAD]


@pytest.mark.xfail(
    strict=False,
    reason="signal: SIGINT while the CLI imports (pandas, before any handler) prints a KeyboardInterrupt traceback; "
    "SIGHUP (terminal closed) while writing leaves a hidden .staged-*.tmp folder in --out",
)
def test_signals_at_random_delays(probe):
    probe.signals(9, seed=48)
    assert not _bad(probe, "signal")


def test_two_reports_into_one_out(probe):
    probe.concurrent()
    assert not _bad(probe, "concurrent")


@pytest.mark.xfail(
    strict=False,
    reason="out: a read-only --out is named as its hidden .staged-*.tmp folder; under RLIMIT_FSIZE the warm path names "
    "the cache entry (CACHE/<hash>.report-2/report.html) and the cold path names --out, not OUT/<file>",
)
def test_out_faults(probe):
    probe.out_faults()
    assert not _bad(probe, "out")


@pytest.mark.xfail(
    strict=False,
    reason="logchange: 4 KB of garbage written into a log after its summaries were read ends the report in an "
    "ijson IncompleteJSONError traceback from the side-by-side page's full-sample read (side_by_side._collect_log)",
)
def test_logs_changed_while_read(probe):
    probe.logs_changed(random.Random(48))
    assert not _bad(probe, "logchange")


def test_dates_and_upper_case_names(probe):
    probe.dates()
    probe.upper_case()
    assert not _bad(probe, "dates")
