"""The package from the outside: what a lab gets from `pip install clinical-cf` into an environment of its own.

    python tests/packaging/check_install.py [--keep DIR]

Builds a wheel of the checkout (the build must print no setuptools warning), installs it with no extras into a fresh
virtual environment from the package registries, and there, with the working directory outside the checkout:
imports every module of the package and spaCy (the metadata must resolve a numpy its compiled dependencies run on);
runs `clinical-cf --help` and every subcommand's `--help`; runs `cases import` on the bundled packets; checks that
`pip check` is clean and that no distribution but the known one (see KNOWN_TESTS_PACKAGES) puts a top-level `tests`
package into site-packages. `make test-install` runs it, and `make test` runs that. Exit 0 when every check passes,
1 with one line per failed check otherwise; each step is bounded by its own timeout.

Run by its path, never as a module of a `tests` package: a dependency's `tests` package in site-packages would shadow the checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKETS = sorted((ROOT / "tests" / "fixtures" / "packets" / "text").glob("*.txt"))
"""The bundled packets that `cases import` reads in the fresh environment."""
KNOWN_TESTS_PACKAGES = {"medspacy_quickumls": "every medspaCy release requires it; its sdist installs its own tests/"}
"""Distributions known to install a top-level `tests` package, with why we still depend on them."""
BUILD_WARNINGS = ("Warning:", "DEPRECATED", "deprecated")
"""What in a wheel build's output counts as a warning (setuptools' BuildBackendWarning, SetuptoolsDeprecationWarning)."""
STEP_TIMEOUT_S = {"build": 300, "venv": 120, "install": 1200, "probe": 600, "help": 60, "import": 600, "check": 120}

PROBE = r'''
"""Runs inside the fresh environment: every module imports, every subcommand answers --help, `tests` has an owner."""
import contextlib, importlib, io, json, pkgutil, sys
from importlib.metadata import distributions
import clinical_cf

failed_imports = {}
for info in pkgutil.walk_packages(clinical_cf.__path__, "clinical_cf."):
    try:
        importlib.import_module(info.name)
    except Exception as ex:  # report every module that fails, not only the first
        failed_imports[info.name] = f"{type(ex).__name__}: {ex}"[:300]
try:
    import spacy
except Exception as ex:
    failed_imports["spacy"] = f"{type(ex).__name__}: {ex}"[:300]

from clinical_cf.cli import build_parser, main

def commands(parser, prefix=()):
    sub = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    if not sub:
        yield prefix
    for action in sub:
        for name, child in action.choices.items():
            yield from commands(child, (*prefix, name))

failed_help = {}
listed = [list(c) for c in commands(build_parser())]
for argv in listed:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main([*argv, "--help"])
        code = 0
    except SystemExit as ex:
        code = ex.code
    if code not in (0, None) or "usage:" not in out.getvalue():
        failed_help[" ".join(argv)] = f"exit {code}: {out.getvalue()[-300:]}"

owners = sorted({d.metadata["Name"] for d in distributions() for f in (d.files or [])
                 if f.parts and f.parts[0] == "tests" and len(f.parts) == 2 and f.name == "__init__.py"})
print(json.dumps({"modules": sum(1 for _ in pkgutil.walk_packages(clinical_cf.__path__, "clinical_cf.")),
                  "package_file": clinical_cf.__file__, "failed_imports": failed_imports, "commands": listed,
                  "failed_help": failed_help, "tests_owners": owners}))
'''


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        (self.notes if ok else self.failures).append(("ok: " if ok else "FAILED: ") + what)


def run(argv: list[str], step: str, **options) -> subprocess.CompletedProcess:
    """One bounded step; a step that overruns is a failed step with its name, not a hang."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=STEP_TIMEOUT_S[step], **options)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"{step}: no answer within {STEP_TIMEOUT_S[step]} s")


def build_warnings(output: str) -> list[str]:
    """The lines of a wheel build's output that are warnings (pip's own notes about local indexes are not the build's)."""
    return [line.strip() for line in output.splitlines() if any(w in line for w in BUILD_WARNINGS) and "Location '" not in line]


def tests_leaks(owners: list[str]) -> list[str]:
    """Distributions that install a top-level `tests` package and are not known to (a new dependency that does)."""
    known = {name.lower().replace("-", "_") for name in KNOWN_TESTS_PACKAGES}
    return [o for o in owners if o.lower().replace("-", "_") not in known]


def check(work: Path) -> Report:
    report = Report()
    started = time.monotonic()
    wheels = work / "wheel"
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(ROOT)], "build", cwd=work)
    report.check(built.returncode == 0, f"wheel built ({built.stderr.strip()[-300:]})" if built.returncode else "wheel built")
    if built.returncode:
        return report
    noise = build_warnings(built.stdout + built.stderr)
    report.check(not noise, "the wheel build prints no warning" + (f": {noise[:3]}" if noise else ""))
    wheel = next(wheels.glob("clinical_cf-*.whl"))

    venv = work / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)], "venv")
    report.check(made.returncode == 0, "fresh virtual environment" + (f": {made.stderr[-300:]}" if made.returncode else ""))
    python, pip = venv / "bin" / "python", [str(venv / "bin" / "python"), "-m", "pip"]
    installed = run([*pip, "install", "-q", str(wheel)], "install", cwd=work)
    tail = " ".join((installed.stderr or installed.stdout).split())[-400:]
    report.check(installed.returncode == 0, "pip install of the wheel, no extras" + (f": {tail}" if installed.returncode else ""))
    if installed.returncode:
        return report

    probe = run([str(python), "-c", PROBE], "probe", cwd=work)
    if probe.returncode:
        report.check(False, f"the probe ran in the fresh environment: {probe.stderr.strip()[-400:]}")
        return report
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    site = str(venv)
    report.check(found["package_file"].startswith(site), f"clinical_cf imported from the fresh environment ({found['package_file']})")
    report.check(not found["failed_imports"], f"every module imports ({found['modules']} modules and spacy): {found['failed_imports'] or ''}")
    report.check(not found["failed_help"], f"every subcommand answers --help ({len(found['commands'])}): {found['failed_help'] or ''}")
    leaks = tests_leaks(found["tests_owners"])
    report.check(not leaks, f"no top-level `tests` package but the known one's {sorted(KNOWN_TESTS_PACKAGES)}: {leaks or ''}")

    script = run([str(venv / "bin" / "clinical-cf"), "--help"], "help", cwd=work)
    report.check(script.returncode == 0 and "usage:" in script.stdout, "the clinical-cf script answers --help")
    out = work / "cases.jsonl"
    imported = run([str(venv / "bin" / "clinical-cf"), "cases", "import", *map(str, PACKETS), "--out", str(out)], "import", cwd=work)
    questions = out.with_name("cases.questions.jsonl")
    records = questions.read_text(encoding="utf-8").splitlines() if questions.exists() else []
    # Exit 1 is the command's own "questions written, nothing confirmed yet"; 2 is an error (spaCy not importing was one).
    report.check(
        imported.returncode in (0, 1) and "Traceback" not in imported.stderr and len(records) == len(PACKETS),
        f"cases import of {len(PACKETS)} bundled packets: exit {imported.returncode}, {len(records)} question records"
        + (f": {imported.stderr.strip()[-400:]}" if imported.returncode not in (0, 1) else ""),
    )
    checked = run([*pip, "check"], "check", cwd=work)
    report.check(checked.returncode == 0, "pip check: " + " ".join(checked.stdout.split())[:400])
    report.notes.append(f"took {time.monotonic() - started:.0f} s")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in DIR and leave the wheel and environment there")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = check(args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="clinical-cf-install-") as work:
            report = check(Path(work))
    for line in report.notes + report.failures:
        print(line, file=sys.stderr if line.startswith("FAILED") else sys.stdout)
    return 1 if report.failures else 0


if __name__ == "__main__":
    # The environment a user has: no PYTHONPATH into the checkout, no editable install's path hooks.
    os.environ.pop("PYTHONPATH", None)
    sys.exit(main())
