"""Atomic writes: whole or not at all, with the mode any other file the user writes would get."""

from __future__ import annotations

import os
import stat

import pytest

from clinical_cf.core.atomic import write_text_atomic


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077, 0o027])
def test_a_new_file_gets_the_umasks_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        reference = tmp_path / "plain.txt"
        reference.write_text("x")  # what open() gives under this umask
        path = write_text_atomic(tmp_path / "atomic.txt", "x")
    finally:
        os.umask(old)
    assert _mode(path) == _mode(reference) == 0o666 & ~umask


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o664, 0o600])
def test_a_replaced_file_keeps_its_own_mode(tmp_path, mode):
    path = tmp_path / "set.jsonl"
    path.write_text("old\n")
    path.chmod(mode)
    write_text_atomic(path, "new\n")
    assert path.read_text() == "new\n" and _mode(path) == mode


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "bad \udc80", encoding="utf-8")
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl"]
