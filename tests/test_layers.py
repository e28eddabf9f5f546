"""The layers show in the imports, and the package list (setup.py) is the package tree.

- `clinical_cf.core` (loading, locking, errors) is the lowest layer: it imports nothing of the
  catalog, tasks, analysis, exports, solvers or scorers;
- the catalog (data and the code that loads, validates, expands and locks it) imports nothing of
  tasks, analysis or exports;
- no task imports an exporter (`clinical_cf.exports`): tasks read their published version from
  `clinical_cf.registration`.

Every `import`/`from ... import` is read from the source with `ast`, including imports inside
functions, so an import deferred to call time still counts.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS = {name: ROOT / folder for name, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items()}


def package_tree() -> set[str]:
    """Every package (a folder with `__init__.py`) under the mapped folders, by its dotted name."""
    found: set[str] = set()
    for name, folder in PACKAGE_DIRS.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            parts = [] if relative == Path(".") else list(relative.parts)
            if any(p.startswith((".", "__")) for p in parts):
                continue
            found.add(".".join([name, *parts]))
    return found


def imports_of(folder: Path, root: Path = ROOT) -> dict[str, set[str]]:
    """Every clinical_cf module each .py file under `folder` imports (file -> dotted names)."""
    out: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
        out[str(path.relative_to(root))] = {n for n in names if n.startswith("clinical_cf")}
    return out


def violations(folder: Path, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    return sorted(
        f"{file} imports {name}"
        for file, names in imports_of(folder, root).items()
        for name in names
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def setup_packages() -> list[str]:
    """setup.py's package list (it runs `setup()` only as __main__, which the build backend does)."""
    spec = importlib.util.spec_from_file_location("clinical_cf_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.packages()


def test_setuptools_packages_are_the_package_tree():
    assert "packages" not in PYPROJECT["tool"]["setuptools"], "the package list is setup.py's (one package per task folder)"
    listed = setup_packages()
    assert len(listed) == len(set(listed)), "a package is listed twice"
    tree = package_tree()
    assert set(listed) == tree, (
        f"missing from setup.py's packages: {sorted(tree - set(listed))}; listed but not a package: {sorted(set(listed) - tree)}"
    )


def test_the_tree_reader_finds_nested_task_packages():
    tree = package_tree()
    assert {"clinical_cf", "clinical_cf.core", "clinical_cf.catalog.css", "clinical_cf.tasks.css_family_d"} <= tree


UPPER = (
    "clinical_cf.catalog",
    "clinical_cf.tasks",
    "clinical_cf.analysis",
    "clinical_cf.exports",
    "clinical_cf.solvers",
    "clinical_cf.scorers",
)


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("clinical_cf/core", UPPER),
        ("catalog", ("clinical_cf.tasks", "clinical_cf.analysis", "clinical_cf.exports")),
        ("tasks", ("clinical_cf.exports",)),
    ],
)
def test_lower_layers_import_no_upper_layer(folder, forbidden):
    assert violations(ROOT / folder, forbidden) == []


def test_the_import_reader_sees_deferred_imports(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from clinical_cf.exports.register import published_version\n")
    assert violations(tmp_path, ("clinical_cf.exports",), root=tmp_path) == [
        "m.py imports clinical_cf.exports.register",
        "m.py imports clinical_cf.exports.register.published_version",
    ]
