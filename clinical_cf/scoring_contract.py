"""What decides a score, per suite: the parts hashed into the suite's fingerprint with its catalogs and data.

A suite's published version `N-X` promises that two logs of the same N were scored the same way.
The catalogs and generated data are only half of that: the prompts a model and its judges are
shown, the response schemas they answer in, the valid score sets, the deterministic reading rules
(cue words, placeholders, caps) and the scoring constants decide a score as much. Each suite's spec
lists them (`Suite.scoring`, written in the suite's module `clinical_cf.suites.<name>` with the helpers
here); `clinical_cf.suites.Suite.fingerprint` hashes them in, `catalog/published.json` records one hash
per part (`clinical-cf export register`), and `clinical_cf.registration.scoring_changes` names the parts
that changed since the version was published. tests/test_scoring_contract.py fails until the version moves.

Each part is named `<module>.<CONSTANT>` after the module constant it is (read when the function
is called, so a test can monkeypatch one), or `rendered/<prompt>` for a prompt as a model receives
it, rendered from fixed inputs by the function the solver or scorer calls (this catches a change in
how a template is filled, not only in the template). tests/solvers/test_prompts.py checks the
rendered prompts for doubled braces and unfilled slots: the same list.

To add a prompt, a schema or a scoring constant: add its name to its module's `constants(module, ...)`
in its suite's `scoring` function (`clinical_cf.suites.<name>`; `shared_parts` here for the shared reading and judge
wiring, of which `Suite.scoring_parts` adds to each suite the parts of the modules its code imports), then run
`clinical-cf export register`. tests/test_scoring_contract.py
fails on a prompt, schema or reader task in solvers/, scorers/ or clinical_cf/replies/ that no
suite lists.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from clinical_cf import judging, replies

READING_RULES_PART = "clinical_cf.scoring_contract.READING_RULES_VERSION[{suite}]"
"""The part that carries a suite's `Suite.reading_rules_version` (its name kept from when the versions were a dict here)."""


def constants(module: ModuleType, *names: str) -> dict[str, Any]:
    """`{"<module>.<NAME>": module.NAME}` for each name: the part is the module's constant, read when called."""
    return {f"{module.__name__}.{name}": getattr(module, name) for name in names}


def patterns(*modules: ModuleType) -> dict[str, Any]:
    """Every module-level regular expression of the modules: the reading rules that are constants, listed by discovery
    (a new pattern in a reader is covered without a line here)."""
    return {
        f"{module.__name__}.{name}": value
        for module in modules
        for name, value in sorted(vars(module).items())
        if isinstance(value, re.Pattern)
    }


def shared_parts(used: frozenset[str] | None = None) -> dict[str, Any]:
    """The shared reading (the modules of clinical_cf/replies/) and the judge-role wiring: of these, the parts of the
    modules in `used` (a suite's, `imported_modules`), or all of them when `used` is None."""
    parts = {
        **constants(replies.reader, "READER_PROMPT", "READER_ROLE"),
        **constants(replies.judge_input, "DATA_NOTICE"),
        **constants(replies.final, "PROVENANCES", "READ", "MAX_REPLY_CHARS", "MAX_JSON_DEPTH", "MAX_REPAIR_CHARS"),
        **constants(replies.verification, "NEGATIVE_CUES", "EXCLUDING_CUES"),
        **constants(judging, "JUDGE_ROLE", "FALLBACK_ROLE"),
        **patterns(*replies.MODULES),
    }
    return parts if used is None else {name: value for name, value in parts.items() if module_of(name) in used}


def module_of(part: str) -> str | None:
    """The module a part `<module>.<NAME>` is a constant of (the longest prefix that is a module), None for another part."""
    name = part
    while "." in name:
        name = name.rpartition(".")[0]
        if _is_module(name):
            return name
    return None


@functools.cache
def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent that is not a package
        return False


def imported_modules(roots: frozenset[str]) -> frozenset[str]:
    """The roots and every clinical_cf module they import, directly or through others, read from their source (`ast`:
    imports inside functions too), so what a suite's scorers and readers use is known without running them."""
    seen: set[str] = set()
    stack = [m for m in roots if _is_module(m)]
    while stack:
        module = stack.pop()
        if module not in seen:
            seen.add(module)
            stack.extend(m for m in _imports_of(module) if m not in seen)
    return frozenset(seen)


@functools.cache
def _imports_of(module: str) -> tuple[str, ...]:
    """The clinical_cf modules one module's source imports (a package's `__init__` for `from package import name`)."""
    origin = importlib.util.find_spec(module).origin
    if not origin or not origin.endswith(".py"):
        return ()
    found = set()
    for node in ast.walk(ast.parse(Path(origin).read_text(encoding="utf-8"), origin)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name for name in names if name.startswith("clinical_cf") and _is_module(name)}
        # `import clinical_cf.a.b` runs clinical_cf.a's __init__ too.
        found |= {name.rpartition(".")[0] for name in names if name.startswith("clinical_cf.") and _is_module(name.rpartition(".")[0])}
    return tuple(sorted(found))

def canonical(value: Any) -> Any:
    """A JSON-ready form of a part that changes exactly when the part does (order of sets ignored)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, re.Pattern):
        return {"pattern": value.pattern, "flags": value.flags}
    if isinstance(value, BaseModel):  # ResponseSchema, JSONSchema
        return value.model_dump(mode="json", exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # ReaderTask
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    raise TypeError(f"scoring part of type {type(value).__name__} cannot be hashed: list its constants, not code")


def part_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(canonical(value), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def scoring_hashes(parts: dict[str, Any]) -> dict[str, str]:
    """One SHA-256 per scoring part (what `catalog/published.json` records under `scoring`)."""
    return {name: part_hash(value) for name, value in sorted(parts.items())}


def scoring_fingerprint(hashes: dict[str, str]) -> str:
    """SHA-256 over every part's name and hash."""
    digest = hashlib.sha256()
    for name, sha in hashes.items():
        digest.update(f"{name}\0{sha}\n".encode())
    return digest.hexdigest()
