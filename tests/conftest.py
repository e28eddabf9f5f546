import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
# One lock per checkout: the files it guards (bundled catalogs, build/) are this checkout's own.
CHECKOUT_ID = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
CHECKOUT_LOCK = Path(tempfile.gettempdir()) / f"clinical_cf-checkout-{CHECKOUT_ID}.lock"
# Passed through (briefly) before taking the lock; a writer holds it while it waits, so the tests already running
# finish and no new one starts: the writer is not starved by the other worker's stream of readers.
CHECKOUT_GATE = CHECKOUT_LOCK.with_suffix(".gate")


# Properties over generated inputs (hypothesis). Seeded (derandomize) so a run is repeatable and a failure is found
# again; bounded per tier: the fast tier's default profile, `make test` raises the count with
# HYPOTHESIS_PROFILE=thorough. No deadline: a busy machine must not turn a slow example into a failure.
settings.register_profile(
    "fast", max_examples=25, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "thorough", max_examples=100, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@contextmanager
def checkout_files(exclusive: bool):
    """Hold this checkout's lock: shared to read its bundled catalogs and data, exclusive to write into the checkout."""
    with CHECKOUT_GATE.open("a") as gate, CHECKOUT_LOCK.open("a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """Test modules read bundled files at import; none may do so while another worker's test is editing one."""
    with checkout_files(exclusive=False):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Tests run in parallel (pytest-xdist). A test marked `writes_checkout` writes into the checkout (a bundled file
    edited and restored, a wheel built into build/); it runs while no other test of this checkout runs, in any worker
    or pytest process. The lock spans setup and teardown, so module fixtures built for a test (and the file restored
    after it) are covered too."""
    with checkout_files(exclusive=item.get_closest_marker("writes_checkout") is not None):
        yield


@pytest.fixture(autouse=True)
def isolated_inspect(tmp_path, monkeypatch):
    """Keep Inspect's generate cache and logs in the test's temp dir, and ignore a model set in .env."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("INSPECT_EVAL_MODEL", raising=False)


# ---------------------------------------------------------------- the load check (`make test-load`, issue 36)

# A busy loop that ends by itself when the pytest process that started it is gone (killed, crashed,
# interrupted): it checks its parent about twenty times a second, so no hog outlives its run.
_BUSY_LOOP = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


def pytest_addoption(parser):
    parser.addoption(
        "--cpu-hog", type=int, default=0, metavar="N",
        help="run the tests while N busy-loop processes compete for the CPU (the load check: `make test-load` "
        "starts twice the cores); the hogs stop when the run ends, however it ends",
    )


def pytest_configure(config):
    hogs = config.getoption("cpu_hog")
    if hogs < 0:
        raise pytest.UsageError(f"--cpu-hog: {hogs} is not a number of processes (0 or more)")
    # Started once, by the controlling process (never by pytest-xdist's workers, which would multiply them).
    if hogs and not hasattr(config, "workerinput"):
        config._cpu_hogs = [
            subprocess.Popen([sys.executable, "-c", _BUSY_LOOP, str(os.getpid())], stdin=subprocess.DEVNULL)
            for _ in range(hogs)
        ]


def pytest_unconfigure(config):
    for hog in getattr(config, "_cpu_hogs", []):
        hog.kill()
        hog.wait()


def pytest_report_header(config):
    hogs = getattr(config, "_cpu_hogs", [])
    return [f"load check: {len(hogs)} busy-loop processes on {os.cpu_count()} cores"] if hogs else []
