"""What a suite is: the `Suite` spec every tool derives its per-suite behaviour from, and where tasks live.

A `Suite` declares, with real references (never `"module:function"` strings), everything the tools
around a suite need: its input kinds (with their loaders and the fields that identify a file of each
kind), its records and schema, its scorers (with their metrics), its scoring contract (the prompts,
schemas and reading rules hashed into its fingerprint), the pre-registered files beyond its
comparability files, and whether a Flow sweep needs a judge. Its tasks are its folders under tasks/
(`task_folders`). The exports (`clinical-cf export register|dataset|lm-eval`), the validator
(`clinical-cf validate`), the task builder (`clinical_cf.tasks.build`), the Flow sweep, packaging and the
report read the spec, so a suite registered in `clinical_cf.suites` is exported, validated, packaged and
reported everywhere at once (docs/adding-a-suite.md).

This module imports nothing of a suite: the suites' own modules (`clinical_cf.suites.<name>`) import it.

A suite's *comparability files* are the pre-registered catalogs and the generated data its scores
are computed over: when any of their bytes change, results from before and after are no longer
comparable (see `clinical_cf.exports.register`).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.scorer import Scorer
from inspect_ai.util import registry_info
from pydantic import BaseModel

import clinical_cf.catalog
import clinical_cf.tasks
from clinical_cf.scoring_contract import (
    READING_RULES_PART,
    imported_modules,
    module_of,
    scoring_fingerprint,
    scoring_hashes,
    shared_parts,
)

if TYPE_CHECKING:
    import pandas as pd

# The catalog package, wherever it is installed (the checkout's catalog/ in an editable install).
CATALOG_DIR = Path(clinical_cf.catalog.__file__).resolve().parent
# The tasks package: one folder per public task, `tasks/<name>/<name>.py` (the checkout's tasks/ in an editable install).
TASKS_DIR = Path(clinical_cf.tasks.__file__).resolve().parent


def task_folders(tasks_dir: Path | None = None) -> tuple[str, ...]:
    """Every public task, by its folder `tasks/<name>/` holding `<name>.py`: the one list of tasks.

    A task belongs to the suite its name starts with (`css_family_d` to `css`); its package's `__init__.py`
    and its line in `clinical_cf/_registry.py` are generated from this list (`python -m clinical_cf.exports.docs`),
    setup.py packages each folder. Every folder of the tasks package's path is read (a test may extend it).
    """
    folders = [tasks_dir] if tasks_dir is not None else [TASKS_DIR, *(Path(p) for p in clinical_cf.tasks.__path__)]
    return tuple(sorted({p.parent.name for folder in folders for p in folder.glob("*/*.py") if p.stem == p.parent.name}))


def task_function(name: str) -> Callable[..., Any]:
    """The `@task` function of `tasks/<name>/<name>.py`, imported by name (a plug-in lookup: the task modules import the suites)."""
    if name not in task_folders():
        raise ValueError(f"no task named {name!r} in clinical_cf; known: {', '.join(task_folders())}")
    return getattr(importlib.import_module(f"clinical_cf.tasks.{name}.{name}"), name)


ReportTable = Callable[["pd.DataFrame"], "pd.DataFrame"]
"""A per-sample table of a report section: `(samples) -> table`; its docstring's first line is the title."""
ReportBanner = Callable[["pd.DataFrame", "pd.DataFrame"], list[str]]
"""A section banner: `(logs, samples) -> lines`."""


@dataclass(frozen=True)
class InputKind:
    """One kind of input file a suite reads, as `clinical-cf validate --kind` knows it."""

    kind: str
    load: Callable[[Path], Any]
    """Validates a file of this kind (errors name file, entry, field) and returns its entries."""
    fields: frozenset[str]
    """The keys that identify a file of this kind: a JSONL file's first record's, a YAML file's top-level keys (or its first
    item's, for a list). A file is of the kind whose fields it has, the most specific first (`clinical_cf.inputs.detect_kind`)."""
    count: Callable[[Any], int] = len
    """How many entries `load` returned (for the validator's summary line)."""
    bundled: Path | None = None
    """The bundled file of this kind, when the suite ships one."""


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    short_name: str
    """The name users call the suite by (the Register's `common_title`, the README's task table)."""
    description: str
    source: str
    """The paper (or write-up) the suite follows."""
    arxiv: str | None
    tags: tuple[str, ...]
    records: str
    """File name of the suite's source records in a dataset export (cases, vignettes, ...)."""
    data: Path
    """The bundled generated records."""
    schema: type[BaseModel]
    """The records' pydantic schema."""
    record_id: str
    loader: Callable[[Path], list[Any]]
    """Validates a records file against the schema (errors name file, entry, field)."""
    data_arg: str
    """The main task's argument that takes a user records file."""
    catalogs: tuple[Path, ...]
    generator: str
    """Dotted name of the module that regenerates `data` deterministically (`python -m <generator>`)."""
    breakdown: str
    """Sample metadata field the dataset card counts samples by."""
    scoring: Callable[[], dict[str, Any]]
    """Its own constants that decide its scores (prompts, schemas, score sets, reading rules), by part name
    (`clinical_cf.scoring_contract.constants`, `patterns`); `scoring_parts` adds what every suite's reading shares and its
    rendered prompts."""
    prompts: Callable[[], dict[str, str]]
    """Its prompts as a model receives them, rendered from fixed inputs (parts of its scoring contract too)."""
    inputs: tuple[InputKind, ...] = ()
    """Every input kind the suite's tasks read (the validator's kinds)."""
    scorers: tuple[Callable[..., Scorer], ...] = ()
    """The scorer factories its tasks use; each declares its metrics (`@scorer(metrics=...)`). Every task also
    gets `clinical_cf.registration.registration_check` from `build_task`."""
    reading_rules_version: int = 1
    """The version of its deterministic reading code that is not a constant (the branches of a reader function): move it
    when such a change alters what a reply reads as."""
    extra_published: tuple[Path, ...] = ()
    """Pre-registered files it reads beyond its comparability files (judged against the published hashes too)."""
    judged: bool = False
    """Its main task needs a judge role (`--model-role judge=...`): the Flow sweep binds one."""
    records_need_lock: bool = False
    """The task refuses a user records file without a `<file>.lock` (it is itself the pre-registered catalog)."""
    report_tables: tuple[ReportTable, ...] = ()
    """Extra section tables over the suite's sample rows (beyond those every section has, `clinical_cf.analysis.sections`)."""
    report_banners: tuple[ReportBanner, ...] = ()
    """Extra section banners over the suite's logs and sample rows."""

    @property
    def tasks(self) -> tuple[str, ...]:
        """Its registered tasks (`clinical_cf/<name>`): the task folders named after it, its main task first."""
        mine = [t for t in task_folders() if t == self.name or t.startswith(f"{self.name}_")]
        return tuple(sorted(mine, key=lambda t: t != self.main_task))

    @property
    def main_task(self) -> str:
        """The task whose samples a dataset export writes (every sample of the suite's default run): the suite's name."""
        return self.name

    def metrics(self) -> dict[str, list[str]]:
        """The metrics each of the suite's scorers reports, by scorer name (read from Inspect's registry)."""
        out: dict[str, list[str]] = {}
        for factory in self.scorers:
            info = registry_info(factory)
            metrics = info.metadata.get("metrics") or []
            out[info.name] = [registry_info(m).name if callable(m) else str(m) for m in _flatten(metrics)]
        return out

    def scoring_parts(self) -> dict[str, Any]:
        """Its scoring contract: the parts of the shared reading its code uses, its own parts, its rendered prompts and
        its reading-rules version. A shared part counts when its module is imported by the suite's scorers or by a
        module its own parts name (its solvers' readers), directly or through others: an edit to a reader the suite
        never uses leaves its fingerprint alone."""
        own = self.scoring()
        roots = frozenset({factory.__module__ for factory in self.scorers} | {m for m in map(module_of, own) if m})
        return {
            **shared_parts(imported_modules(roots)), **own, **self.prompts(),
            READING_RULES_PART.format(suite=self.name): self.reading_rules_version,
        }

    def scoring_hashes(self) -> dict[str, str]:
        """One SHA-256 per scoring part (what `catalog/published.json` records under `scoring`)."""
        return scoring_hashes(self.scoring_parts())

    @property
    def comparability_files(self) -> tuple[Path, ...]:
        return (*self.catalogs, self.data)

    def fingerprint(self) -> str:
        """SHA-256 over the comparability files' names and bytes and the suite's scoring contract
        (`clinical_cf.scoring_contract`: prompts, schemas, score sets, reading rules, scoring constants):
        changes exactly when results stop being comparable."""
        digest = hashlib.sha256()
        for path in self.comparability_files:
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
        digest.update(b"scoring\0" + scoring_fingerprint(self.scoring_hashes()).encode() + b"\n")
        return digest.hexdigest()

    def file_hashes(self) -> dict[str, str]:
        return {display_path(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in self.comparability_files}


def _flatten(metrics: Any) -> list[Any]:
    if isinstance(metrics, dict):
        return [m for value in metrics.values() for m in _flatten(value)]
    if isinstance(metrics, (list, tuple)):
        return [m for value in metrics for m in _flatten(value)]
    return [metrics]


def display_path(path: str | Path) -> str:
    """`catalog/<path>` for a bundled file (the same in a checkout and an installed wheel), the path otherwise."""
    resolved = Path(path).resolve()
    if resolved.is_relative_to(CATALOG_DIR):
        return f"catalog/{resolved.relative_to(CATALOG_DIR).as_posix()}"
    return str(path)
