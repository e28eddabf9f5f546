"""inspect_evals Register entries: one `register/<task>/eval.yaml` per task, validated by the Register's own model.

The Register lists evals that live in their own repositories. Each entry is validated by
inspect_evals' `ExternalEvalMetadata` (imported, not copied, so a change upstream fails our test
rather than the submission): `full_title`, `common_title`, `description`, `contributors`, one task
with its `task_path`, and `source` (repository and pinned commit); under `metadata` only the
runtime keys upstream knows, with anything of ours in `metadata.extras`. The Register wants one
task per entry, so every task gets its own entry, named (`id`) after its folder.

Each entry carries its suite's version `N-X` in `metadata.extras.version`:

- **N** (comparability) goes up when results stop being comparable with earlier ones: a catalog is
  re-registered or the generated data changes (generator change). It is fed by the suite's
  fingerprint, a SHA-256 over its locked catalogs and generated data.
- **X** (interface, A, B, ...) goes up when only the interface changes (task arguments, output
  fields) and scores stay comparable; it is reset to A whenever N goes up.

The published fingerprint cannot live in the entry (upstream forbids our keys under `metadata`,
and the entry is not shipped in the wheel), so the versions, fingerprints and per-file hashes are
published in the package-data file `catalog/published.json`. Tasks read their `version=` from it
(`published_version`), so every log names the version it ran. `clinical-cf export register`
rewrites the entries and that file and applies the rule; a test fails when either is stale, so a
catalog cannot change without its version moving.

The rule counts from the *released* record: the checkout's `catalog/published.json` as committed at HEAD
(`released_published`). Exporting again before committing does not move a version again, so a new suite
stays 1-A through every edit until its first record is committed, and an edited one moves once per commit.
Outside a git checkout (an installed wheel, a record written with `--out`) the record file itself is the
released one.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_yaml
from clinical_cf.registration import PUBLISHED_PATH, VERSION_PATTERN, published, published_version, write_published  # noqa: F401 (published_version: re-exported)
from clinical_cf.suites import SUITES, Suite, create_task

if TYPE_CHECKING:
    from inspect_evals.metadata import ExternalEvalMetadata

REPO_ROOT = Path(__file__).resolve().parents[2]
REGISTER_DIR = REPO_ROOT / "register"
DEFAULT_CONTRIBUTORS = ("clinical-cf-maintainers",)
HEADER = (
    "# inspect_evals Register entry, written by `clinical-cf export register` (do not edit counts or metadata by hand).\n"
    "# metadata.extras.version is the suite's version N-X: N moves when the catalogs or generated data change,\n"
    "# X when only the interface changes (catalog/published.json holds the fingerprints).\n"
)


class PublishedSuite(BaseModel):
    """A suite's published version, its comparability fingerprint and the per-file and per-scoring-part hashes it is made of."""

    model_config = ConfigDict(extra="forbid")

    version: str = Field(pattern=VERSION_PATTERN)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: dict[str, str]
    scoring: dict[str, str] = Field(default_factory=dict)
    """One hash per part of the suite's scoring contract (`clinical_cf.scoring_contract`): prompts, schemas, score sets."""


def _upstream_model() -> type[ExternalEvalMetadata]:
    """inspect_evals' model for Register entries (a dev dependency: only exporting and its test need it)."""
    try:
        from inspect_evals.metadata import ExternalEvalMetadata  # optional dependency (dev): only exporting needs it
    except ImportError:
        raise CatalogError(
            "register/", "validating Register entries needs inspect_evals: pip install -e '.[dev]'"
        ) from None
    return ExternalEvalMetadata


# --- the published record (catalog/published.json) ---------------------------------------------


def _read_published(path: Path = PUBLISHED_PATH) -> dict[str, PublishedSuite]:
    """The published versions and fingerprints by suite (`clinical_cf.registration` owns the file); empty before the first export."""
    records = {}
    for suite, record in published(path).items():
        try:
            records[suite] = PublishedSuite.model_validate(record)
        except ValidationError as ex:
            raise validation_errors(path, suite, ex) from None
    return records


def released_published(path: Path = PUBLISHED_PATH, root: Path = REPO_ROOT) -> dict[str, PublishedSuite]:
    """The published record as committed at HEAD (see the module docstring); the file itself where git has none."""
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
        shown = subprocess.run(["git", "show", f"HEAD:{relative}"], cwd=root, capture_output=True, text=True, timeout=30)
    except (ValueError, OSError, subprocess.SubprocessError):  # not in the checkout, no git: the file is the release
        return _read_published(path)
    if shown.returncode != 0:  # not committed yet (or not a git checkout): nothing was released from here
        return _read_published(path) if "not a git repository" in shown.stderr else {}
    committed = path.with_name(f"{path.name}@HEAD")
    records = {}
    for suite, record in json.loads(shown.stdout).items():
        try:
            records[suite] = PublishedSuite.model_validate(record)
        except ValidationError as ex:
            raise validation_errors(committed, suite, ex) from None
    return records


def only_parts_removed(previous: PublishedSuite, files: dict[str, str], scoring: dict[str, str]) -> bool:
    """Every comparability file and every scoring part the suite has now published before with the same hash: only
    parts left its contract (a shared part its code never used, e.g. the judge roles of a suite without a judge), so
    none of its published scores was decided differently. (The record also lists files published beside them.)"""
    same_files = all(previous.files.get(name) == sha for name, sha in files.items())
    return same_files and all(previous.scoring.get(name) == sha for name, sha in scoring.items())


def next_version(
    previous: PublishedSuite | None, fingerprint: str, interface_change: bool = False,
    files: dict[str, str] | None = None, scoring: dict[str, str] | None = None,
) -> str:
    """Apply the N-X rule against the previously published record (given the current `files` and `scoring` hashes, a
    fingerprint that moved only because parts left the contract keeps N)."""
    if previous is None:
        return "1-A"
    match = re.match(VERSION_PATTERN, previous.version)
    assert match  # validated by PublishedSuite
    n, x = int(match.group(1)), match.group(2)
    removed_only = files is not None and scoring is not None and only_parts_removed(previous, files, scoring)
    if previous.fingerprint != fingerprint and not removed_only:
        return f"{n + 1}-A"
    if interface_change:
        if x == "Z":
            raise ValueError(f"interface version of {previous.version} cannot go past Z; bump N deliberately")
        return f"{n}-{chr(ord(x) + 1)}"
    return previous.version


# --- entries ------------------------------------------------------------------------------------


def entry_path(task: str, register_dir: Path = REGISTER_DIR) -> Path:
    return register_dir / task / "eval.yaml"


def load_entry(path: str | Path) -> ExternalEvalMetadata:
    """Validate an `eval.yaml` with the Register's model; errors name the file and the field.

    The entry's `id` is its folder's name, as the Register reads it. Beyond upstream, an entry
    holds exactly one task (upstream only warns) and says its suite and version in `metadata.extras`.
    """
    path = Path(path)
    raw = load_yaml(path)  # encoding, size and syntax errors name the file and line
    if not isinstance(raw, dict):
        raise CatalogError(path, "an eval.yaml must be a mapping")
    raw["id"] = path.parent.name
    try:
        entry = _upstream_model().model_validate(raw)
    except ValidationError as ex:
        raise validation_errors(path, None, ex) from None
    if len(entry.tasks) != 1:
        raise CatalogError(path, f"one task per Register entry, found {len(entry.tasks)}", field="tasks")
    extras = entry.runtime_metadata.extras if entry.runtime_metadata else {}
    if extras.get("suite") not in SUITES:
        raise CatalogError(path, f"must name one of the suites {sorted(SUITES)}", field="metadata.extras.suite")
    if not re.match(VERSION_PATTERN, str(extras.get("version", ""))):
        raise CatalogError(path, "must be a version N-X such as 1-A", field="metadata.extras.version")
    return entry


def repository_url(root: Path = REPO_ROOT) -> str:
    """The repository the Register points at: `[project.urls] Repository` in pyproject.toml."""
    pyproject = root / "pyproject.toml"
    try:
        urls = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
    except (OSError, tomllib.TOMLDecodeError) as ex:
        raise CatalogError(pyproject, f"cannot read: {ex}") from None
    if "Repository" not in urls:
        raise CatalogError(pyproject, "the Register needs the repository's URL", field="project.urls.Repository")
    return urls["Repository"]


def head_commit(root: Path = REPO_ROOT) -> str:
    """The checkout's current commit, pinned by a first export."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as ex:
        raise CatalogError(root, f"cannot read the commit to pin (pass --commit SHA): {ex}") from None
    return out.stdout.strip()


def _task_summary(task: str) -> str:
    """First line of the task file's docstring: what this task is, in the words its `--help` shows."""
    doc = importlib.import_module(f"clinical_cf.tasks.{task}.{task}").__doc__ or ""
    return doc.strip().splitlines()[0].rstrip(".") if doc.strip() else task


def _paper_title(suite: Suite) -> str | None:
    """The paper's title from the suite's source, without its trailing (author year); none without a paper."""
    return re.sub(r"\s*\([^()]*\)$", "", suite.source) if suite.arxiv else None


def build_entry(
    suite: Suite,
    task: str,
    version: str,
    commit: str,
    contributors: list[str] | None = None,
    url: str | None = None,
    dataset_samples: int | None = None,
) -> dict[str, Any]:
    """One task's entry (a dict as written to eval.yaml), validated by the Register's model.

    `dataset_samples` defaults to the size of the task built with its defaults.
    """
    main = task == suite.main_task
    summary = _task_summary(task)
    entry: dict[str, Any] = {
        "full_title": suite.title if main else f"{suite.title} — {summary}",
        "common_title": suite.short_name if main else f"{suite.short_name} ({task})",
        "paper_title": _paper_title(suite),
        "description": suite.description if main else f"{summary}{'' if summary[-1:] in '?!' else '.'} {suite.description}",
        "arxiv": suite.arxiv,
        "contributors": list(contributors or DEFAULT_CONTRIBUTORS),
        "tasks": [
            {
                "name": task,
                "task_path": f"tasks/{task}/{task}.py",
                "dataset_samples": len(create_task(task).dataset) if dataset_samples is None else dataset_samples,
            }
        ],
        "tags": list(suite.tags),
        "source": {"repository_url": url or repository_url(), "repository_commit": commit},
        "metadata": {
            "fast": False,
            "requires": {"internet": False},
            "extras": {"suite": suite.name, "version": version},
        },
    }
    # The Register's fields for a paper; a suite without one leaves them out.
    entry = {key: value for key, value in entry.items() if value is not None}
    try:
        _upstream_model().model_validate({**entry, "id": task})
    except ValidationError as ex:
        raise validation_errors(f"register/{task}/eval.yaml", task, ex) from None
    return entry


def render_entry(entry: dict[str, Any]) -> str:
    # No line wrapping: the Register renders `description` into its README as one line.
    return HEADER + yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=float("inf"))


def export_register(
    register_dir: Path = REGISTER_DIR,
    suites: list[str] | None = None,
    interface_change: bool = False,
    commit: str | None = None,
    published_path: Path = PUBLISHED_PATH,
) -> list[Path]:
    """Rewrite `register/<task>/eval.yaml` for every task of the given suites (all by default), and the published record.

    `commit` pins `source.repository_commit`; by default an entry keeps the commit it pinned
    before, and a first export pins the checkout's HEAD. Versions count from the released record
    (`released_published`); a published record written elsewhere (`--out`) continues from the
    checkout's released versions until it has its own.
    """
    previous_published = released_published(published_path) or released_published(PUBLISHED_PATH)
    names = suites or list(SUITES)
    records = {}
    for name in names:
        suite = SUITES[name]
        fingerprint, files, scoring = suite.fingerprint(), suite.file_hashes(), suite.scoring_hashes()
        version = next_version(previous_published.get(name), fingerprint, interface_change, files, scoring)
        records[name] = PublishedSuite(version=version, fingerprint=fingerprint, files=files, scoring=scoring)
    # Published first: building a task to count its samples reads its version from this record.
    write_published({name: record.version for name, record in records.items()}, published_path)
    written = []
    for name in names:
        for task in SUITES[name].tasks:
            path = entry_path(task, register_dir)
            previous = load_entry(path) if path.exists() else None
            pinned = commit or (previous.source.repository_commit if previous else None) or head_commit()
            contributors = list(previous.contributors) if previous else None
            entry = build_entry(SUITES[name], task, records[name].version, pinned, contributors)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_entry(entry), encoding="utf-8")
            written.append(path)
    return written
