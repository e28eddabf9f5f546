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
import fnmatch
import importlib.util
import subprocess
import tomllib
from pathlib import Path

import pytest

from clinical_cf.registration import PUBLISHED_PATH
from clinical_cf.suites import SUITES

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


def setup_module_of(root: Path = ROOT):
    """setup.py as a module (it runs `setup()` only as __main__, which the build backend does)."""
    spec = importlib.util.spec_from_file_location("clinical_cf_setup", root / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def setup_packages() -> list[str]:
    return setup_module_of().packages()


def shipped(path: Path) -> bool:
    """Whether setup.py's package data ships `path`: the deepest package folder holding it lists a pattern it matches."""
    data = setup_module_of().package_data()
    folders = {name: ROOT / folder for name, folder in PACKAGE_DIRS.items()}
    owners = []
    for package in data:
        top = max((n for n in folders if package == n or package.startswith(n + ".")), key=len)
        folder = folders[top].joinpath(*package[len(top):].lstrip(".").split(".")) if package != top else folders[top]
        if path.resolve().is_relative_to(folder.resolve()):
            owners.append((len(folder.resolve().parts), package, folder))
    if not owners:
        return False
    _, package, folder = max(owners)
    relative = path.resolve().relative_to(folder.resolve()).as_posix()
    return any(fnmatch.fnmatch(relative, pattern) and relative.count("/") == pattern.count("/") for pattern in data[package])


def test_every_file_a_suite_reads_is_shipped_in_the_wheel():
    """Not setup.py against its own glob: every file the suite specs name, checked against the package data patterns."""

    files = {PUBLISHED_PATH}
    for suite in SUITES.values():
        files |= {*suite.comparability_files, *suite.extra_published, *(i.bundled for i in suite.inputs if i.bundled)}
        files |= {Path(f"{p}.lock") for p in suite.catalogs}
    assert [str(p) for p in sorted(files) if not shipped(p)] == []


def test_a_file_of_a_kind_no_pattern_lists_is_not_shipped(tmp_path):
    assert shipped(ROOT / "catalog" / "css" / "cases.jsonl")
    assert not shipped(ROOT / "catalog" / "css" / "cases.csv")  # a new kind of data file needs its pattern in setup.py
    assert not shipped(ROOT / "catalog" / "css" / "templates" / "deeper" / "x.j2")
    assert not shipped(tmp_path / "x.yaml")


def test_setuptools_packages_are_the_package_tree():
    assert "packages" not in PYPROJECT["tool"]["setuptools"], "the package list is setup.py's (every package under the mapped folders)"
    assert "package-data" not in PYPROJECT["tool"]["setuptools"], "the package data is setup.py's (DATA_FILES for every package)"
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


# ---------------------------------------------------------------- no import cycle, function-level imports counted


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its `__init__.py`), over the mapped folders."""
    dirs = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    modules = {}
    for name, folder in dirs.items():
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                continue
            modules[".".join([name, *(parts[:-1] if parts[-1] == "__init__" else parts)])] = path
    return modules


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """module -> {module it imports: line}, reading every import statement (inside functions too) with `ast`.

    `from a.b import c` is an edge to `a.b.c` when that is a module, else to `a.b`; a submodule's import of its own
    package is not an edge (Python runs the package first whatever the submodule says). `if TYPE_CHECKING:` imports
    count too: a type needed both ways is a layer problem all the same.
    """
    modules = module_files(root)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = resolve(name) if name.startswith("clinical_cf") else None
                if target and target != module and not module.startswith(target + "."):
                    graph[module].setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a path that closes on itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    """One cycle inside the component, each step with the line of its import: `a (line 3) -> b (line 9) -> a`."""
    members = set(component)
    path, seen = [component[0]], {component[0]: 0}
    while True:
        step = next(w for w in sorted(graph[path[-1]]) if w in members)
        if step in seen:
            loop = path[seen[step]:] + [step]
            return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(loop, loop[1:], strict=False)) + f" -> {step}"
        seen[step] = len(path)
        path.append(step)


def test_no_import_cycle_counting_function_level_imports():
    graph = import_graph()
    assert len(graph) > 100  # the whole package was read
    found = cycles(graph)
    assert found == [], "import cycles (function-level imports counted):\n" + "\n".join(
        f"{len(c)} modules: {describe(c, graph)}" for c in found
    )


def test_a_cycle_through_a_function_level_import_is_found_and_named(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nclinical_cf = "pkg"\n', encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "low.py").write_text("def f():\n    from clinical_cf.high import g\n", encoding="utf-8")
    (tmp_path / "pkg" / "high.py").write_text("from clinical_cf.low import f\n", encoding="utf-8")
    (tmp_path / "pkg" / "leaf.py").write_text("from clinical_cf import low\n", encoding="utf-8")
    graph = import_graph(tmp_path)
    assert cycles(graph) == [["clinical_cf.high", "clinical_cf.low"]]
    assert describe(["clinical_cf.high", "clinical_cf.low"], graph) == (
        "clinical_cf.high (line 1) -> clinical_cf.low (line 2) -> clinical_cf.high"
    )


# ---------------------------------------------------------------- imports at module level unless a comment says why

WHY = ("deferred:", "optional dependency", "cycle:")
"""The reasons a function may import: `# deferred: <what it costs, measured>`, `# optional dependency ...` (an extra
that a plain install lacks), `# cycle: <the modules>`. The comment stands on the import's line or in the comment
block right above its group of imports."""


def python_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the checkout git knows of (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    return [root / name for name in sorted(set(listed)) if (root / name).is_file()]


def function_level_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, whether a comment gives a reason) for every import inside a function of the file."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: dict[int, bool] = {}
    for function in ast.walk(ast.parse(source, str(path))):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno not in found:
                above = node.lineno - 2
                while above >= 0 and lines[above].strip().startswith(("import ", "from ")):
                    above -= 1
                comments = [lines[node.lineno - 1].partition("#")[2]]
                while above >= 0 and lines[above].strip().startswith("#"):  # the comment block above the group
                    comments.append(lines[above])
                    above -= 1
                found[node.lineno] = any(reason in comment for comment in comments for reason in WHY)
    return sorted(found.items())


def test_every_function_level_import_says_why():
    files = python_files()
    assert len(files) > 300  # the package, tests, bench and flows were read
    unexplained = [f"{path.relative_to(ROOT)}:{line}" for path in files for line, why in function_level_imports(path) if not why]
    assert unexplained == [], (
        f"{len(unexplained)} imports inside functions without a reason: move them to the top of the module, or say why "
        f"on the line or the line above ({', '.join(WHY)}):\n" + "\n".join(unexplained)
    )


def test_the_import_reader_accepts_only_a_stated_reason(tmp_path):
    (tmp_path / "m.py").write_text(
        "def plain():\n    import json\n\n"
        "def unrelated_comment():\n    # the scores below\n    import json\n\n"
        "def measured():\n    # deferred: pandas (0.8 s of CPU, measured) only here\n    import pandas\n    import numpy\n\n"
        "def extra():\n    from llama_cpp import Llama  # optional dependency: the `local` extra\n\n"
        "def two_lines():\n    # deferred: medspaCy (1.9 s of CPU, measured)\n    # is quieted first.\n    import medspacy\n",
        encoding="utf-8",
    )
    assert function_level_imports(tmp_path / "m.py") == [(2, False), (6, False), (10, True), (11, True), (14, True), (19, True)]
