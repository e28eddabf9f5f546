"""The package list, which pyproject.toml cannot compute: the fixed subpackages plus one per task folder.

Every other setting is in pyproject.toml. A task is its folder `tasks/<name>/` (with `__init__.py` and
`<name>.py`) plus its import line in clinical_cf/_registry.py; this file packages every such folder.
"""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
PACKAGES = [
    "clinical_cf",
    "clinical_cf.providers",
    "clinical_cf.exports",
    "clinical_cf.core",
    "clinical_cf.replies",
    "clinical_cf.catalog",
    "clinical_cf.catalog.css",
    "clinical_cf.catalog.sensitivity",
    "clinical_cf.catalog.workflow",
    "clinical_cf.catalog.medpic",
    "clinical_cf.solvers",
    "clinical_cf.scorers",
    "clinical_cf.analysis",
    "clinical_cf.tasks",
]


def packages(tasks_dir: Path = ROOT / "tasks") -> list[str]:
    """The fixed packages and `clinical_cf.tasks.<name>` for every task folder (tests/test_specs.py reads this list)."""
    return [*PACKAGES, *(f"clinical_cf.tasks.{p.parent.name}" for p in sorted(tasks_dir.glob("*/__init__.py")))]


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; a test imports it for `packages()`
    setup(packages=packages())
