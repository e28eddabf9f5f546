import fcntl
import hashlib
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# One lock per checkout: the files it guards (bundled catalogs, build/) are this checkout's own.
CHECKOUT_ID = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
CHECKOUT_LOCK = Path(tempfile.gettempdir()) / f"clinical_cf-checkout-{CHECKOUT_ID}.lock"
# Passed through (briefly) before taking the lock; a writer holds it while it waits, so the tests already running
# finish and no new one starts: the writer is not starved by the other worker's stream of readers.
CHECKOUT_GATE = CHECKOUT_LOCK.with_suffix(".gate")


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
