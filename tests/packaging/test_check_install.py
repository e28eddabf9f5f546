"""The outside install check (check_install.py, `make test-install`) reads its evidence right, and no documented command
depends on importing the checkout's `tests` as a package (a dependency's `tests` in site-packages shadows it)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("check_install", Path(__file__).with_name("check_install.py"))
check_install = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = check_install  # its dataclass looks its module up there
SPEC.loader.exec_module(check_install)

RUNS_TESTS_AS_PACKAGE = re.compile(r"-m\s+tests\.")
"""`python -m tests.x`: in an installed environment it finds medspacy_quickumls' `tests` in site-packages first."""


def documented_files() -> list[Path]:
    """Every tracked file a user or developer reads or runs: docs, README, Makefile, CI scripts, code and test messages."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    keep = (".md", ".py", ".j2", ".yaml", ".toml", ".sh")
    return [ROOT / f for f in tracked if (f.endswith(keep) or f in ("Makefile", ".ci/run")) and ROOT / f != Path(__file__)]


def test_no_documented_command_runs_tests_as_a_package():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in documented_files()
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if RUNS_TESTS_AS_PACKAGE.search(line)
    ]
    assert found == [], "run a test file by its path (python tests/x/test_y.py), not as a package:\n" + "\n".join(found)


def test_the_pattern_catches_the_old_command():
    assert RUNS_TESTS_AS_PACKAGE.search(".venv/bin/python -m tests.tasks.test_bundled_samples labunits")
    assert not RUNS_TESTS_AS_PACKAGE.search(".venv/bin/python tests/tasks/test_bundled_samples.py labunits")


def test_build_warnings_are_setuptools_warnings_not_pip_index_notes():
    output = "\n".join(
        [
            "WARNING: Location 'file:///opt/pypi/simple/x/' is ignored: it is neither a file nor a directory.",
            "  /tmp/x/setuptools/command/build_py.py:215: BuildBackendWarning: Package 'a.templates' is absent",
            "  SetuptoolsDeprecationWarning: License classifiers are deprecated.",
            "Successfully built clinical-cf",
        ]
    )
    found = check_install.build_warnings(output)
    assert [("BuildBackendWarning" in w, "SetuptoolsDeprecationWarning" in w) for w in found] == [(True, False), (False, True)]


def test_a_new_tests_package_is_named_and_the_known_one_is_not():
    assert check_install.tests_leaks(["medspacy_quickumls"]) == []
    assert check_install.tests_leaks(["medspacy-quickumls", "somelib"]) == ["somelib"]


def test_the_packets_it_imports_are_there():
    assert len(check_install.PACKETS) >= 2
    assert all(p.read_text(encoding="utf-8").strip() for p in check_install.PACKETS)


def test_the_make_target_runs_the_check_and_make_test_runs_the_target():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^test-install:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert target and "tests/packaging/check_install.py" in target.group(1)
    test = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert test and "test-install" in test.group(1)
