"""The package list and package data, which pyproject.toml cannot compute: every package under the folders its
`[tool.setuptools.package-dir]` maps, with every data file of the kinds they hold.

Every other setting is in pyproject.toml. A task folder `tasks/<name>/`, a suite's catalog package
`catalog/<suite>/` and a suite's module are packaged by being there: nothing here names one.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
DATA_FILES = ["*.yaml", "*.jsonl", "*.json", "*.lock", "templates/*.j2"]
"""The data a package ships beside its code: catalogs and generated records with their locks, the published record,
the report and review templates."""


def package_dirs(root: Path = ROOT) -> dict[str, str]:
    """`[tool.setuptools.package-dir]`: the top-level folders that are subpackages of `clinical_cf`."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]


def packages(root: Path = ROOT) -> list[str]:
    """Every package (a folder with `__init__.py`) under each mapped folder, by its dotted name."""
    found = set()
    for name, folder in package_dirs(root).items():
        found |= {name, *(f"{name}.{sub}" for sub in find_packages(root / folder))}
    return sorted(found)


def package_data(root: Path = ROOT) -> dict[str, list[str]]:
    """Every package's data files of the kinds in `DATA_FILES`."""
    return {name: list(DATA_FILES) for name in packages(root)}


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; tests import it for `packages()`
    setup(packages=packages(), package_data=package_data())
