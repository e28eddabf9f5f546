import fcntl
import hashlib
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# One lock per checkout: the bundled files it guards are this checkout's own.
CHECKOUT_ID = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
BUNDLED_FILES_LOCK = Path(tempfile.gettempdir()) / f"clinical_cf-bundled-{CHECKOUT_ID}.lock"


@contextmanager
def bundled_files(exclusive: bool):
    """Hold this checkout's bundled-files lock: shared to read the bundled catalogs and data, exclusive to edit them."""
    with BUNDLED_FILES_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """Test modules read bundled files at import; none may do so while another worker's test is editing one."""
    with bundled_files(exclusive=False):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Tests run in parallel (pytest-xdist). A test marked `edits_bundled_files` changes a bundled file in place and
    restores it; it runs while no other test of this checkout runs, in any worker or pytest process. The lock spans
    setup and teardown, so module fixtures built for a test (and the file restored after it) are covered too."""
    with bundled_files(exclusive=item.get_closest_marker("edits_bundled_files") is not None):
        yield


@pytest.fixture(autouse=True)
def isolated_inspect(tmp_path, monkeypatch):
    """Keep Inspect's generate cache and logs in the test's temp dir, and ignore a model set in .env."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("INSPECT_EVAL_MODEL", raising=False)
