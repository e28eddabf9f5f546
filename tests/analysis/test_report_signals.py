"""SIGTERM and SIGINT to `clinical-cf report` end it and its worker processes: no orphan keeps reading logs.

A real `clinical-cf report` subprocess over many copies of one CSS log, with two worker processes; the signal
is sent once its workers exist; then the report must exit with the signal's status and one line, and every
worker it had must be gone.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hostile_logs import one_css_log  # noqa: E402


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (read from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def many_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    log = Path(one_css_log(folder / "one"))
    for i in range(80):
        shutil.copy(log, folder / f"copy{i:03d}.eval")
    return folder


@pytest.mark.slow  # a CLI subprocess
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_report_and_its_workers(many_logs, tmp_path, sig, status):
    # PYTHONFAULTHANDLER: a report that hangs is made to print where (SIGABRT) before the test fails.
    env = {**os.environ, "CLINICAL_CF_WORKERS": "2", "CLINICAL_CF_CACHE_DIR": str(tmp_path / "cache"), "PYTHONFAULTHANDLER": "1"}
    cli = Path(sys.executable).parent / "clinical-cf"
    # Output to files, not pipes: a worker left running would hold a pipe open and hide whether the report ended.
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "w", encoding="utf-8") as err_file:
        proc = subprocess.Popen([str(cli), "report", str(many_logs), "--out", str(tmp_path / "r"), "--no-cache"],
                                env=env, stdout=subprocess.DEVNULL, stderr=err_file)
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        workers = {c for c in _children(proc.pid) if _alive(c)}
        if len(workers) >= 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None and workers, "the report ended before its workers could be seen: give it more logs"
    proc.send_signal(sig)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=30)
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)
        said = stderr.read_text(encoding="utf-8")[-6000:]
        raise AssertionError(f"the report did not end after {sig.name}:\n{said}") from None
    err = stderr.read_text(encoding="utf-8")
    assert proc.returncode in (status, -sig), (proc.returncode, err)
    assert "Traceback" not in err, err
    gone_by = time.monotonic() + 20
    while time.monotonic() < gone_by and any(_alive(w) for w in workers):
        time.sleep(0.05)
    left = [w for w in workers if _alive(w)]
    for w in left:  # do not leave them behind for the next test
        os.kill(w, signal.SIGKILL)
    assert not left, f"workers still running after {sig.name}: {left}"
