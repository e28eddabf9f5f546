"""`eval.yaml` entries for the inspect_evals Register, one per suite, with a versioning rule fed by the catalogs.

The Register lists evals that live in their own repositories; each entry is an `eval.yaml` with
title, description, arxiv, group, contributors, version `N-X`, the tasks with their sample counts,
tags and metadata. Version rule:

- **N** (comparability) goes up when results stop being comparable with earlier ones: a catalog is
  re-registered or the generated data changes (generator change). It is fed by the suite's
  fingerprint, a SHA-256 over its locked catalogs and generated data, recorded in the entry's metadata.
- **X** (interface, A, B, ...) goes up when only the interface changes (task arguments, output
  fields) and scores stay comparable; it is reset to A whenever N goes up.

`clinical-cf export register` rewrites the checked-in entries and applies the rule; a test fails
when an entry is stale, so a catalog cannot change without its version moving.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_cf.catalog.errors import CatalogError, validation_errors
from clinical_cf.suites import SUITES, Suite, create_task

REGISTER_DIR = Path(__file__).resolve().parents[2] / "register"
DEFAULT_CONTRIBUTORS = ("clinical-cf-maintainers",)

# The groups inspect_evals files its evals under.
Group = Literal[
    "Coding", "Assistants", "Cybersecurity", "Safeguards", "Mathematics", "Reasoning", "Knowledge",
    "Multimodal", "Bias", "Personality", "Writing", "Scheming",
]
VERSION_PATTERN = r"^(\d+)-([A-Z])$"


class RegisterTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    dataset_samples: int = Field(gt=0)


class RegisterEntry(BaseModel):
    """The fields an inspect_evals Register `eval.yaml` carries."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    arxiv: str | None = Field(default=None, pattern=r"^https://arxiv\.org/abs/\d{4}\.\d{4,5}(v\d+)?$")
    group: Group
    contributors: list[str] = Field(min_length=1)
    version: str = Field(pattern=VERSION_PATTERN)
    tasks: list[RegisterTask] = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


def entry_path(suite: str, register_dir: Path = REGISTER_DIR) -> Path:
    return register_dir / suite / "eval.yaml"


def load_entry(path: str | Path) -> RegisterEntry:
    """Validate an `eval.yaml`; errors name the file and the field."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as ex:
        raise CatalogError(path, f"cannot read: {ex}") from None
    if not isinstance(raw, dict):
        raise CatalogError(path, "an eval.yaml must be a mapping")
    try:
        entry = RegisterEntry.model_validate(raw)
    except ValidationError as ex:
        raise validation_errors(path, None, ex) from None
    names = [t.name for t in entry.tasks]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise CatalogError(path, f"duplicate task names {duplicates}", field="tasks")
    return entry


def next_version(previous: RegisterEntry | None, fingerprint: str, interface_change: bool = False) -> str:
    """Apply the N-X rule against the previously registered entry."""
    if previous is None:
        return "1-A"
    match = re.match(VERSION_PATTERN, previous.version)
    assert match  # validated by RegisterEntry
    n, x = int(match.group(1)), match.group(2)
    if previous.metadata.get("comparability_fingerprint") != fingerprint:
        return f"{n + 1}-A"
    if interface_change:
        if x == "Z":
            raise ValueError(f"interface version of {previous.version} cannot go past Z; bump N deliberately")
        return f"{n}-{chr(ord(x) + 1)}"
    return previous.version


def build_entry(suite: Suite, previous: RegisterEntry | None = None, interface_change: bool = False) -> dict[str, Any]:
    """The suite's entry: sample counts from building each task with its defaults, version from the rule."""
    fingerprint = suite.fingerprint()
    entry = RegisterEntry(
        title=suite.title,
        description=suite.description,
        arxiv=suite.arxiv,
        group="Knowledge",
        contributors=list(previous.contributors) if previous else list(DEFAULT_CONTRIBUTORS),
        version=next_version(previous, fingerprint, interface_change),
        tasks=[RegisterTask(name=name, dataset_samples=len(create_task(name).dataset)) for name in suite.tasks],
        tags=list(suite.tags),
        metadata={
            "fast": False,
            "requires_internet": False,
            "source": suite.source,
            "task_files": {name: f"tasks/{name}/{name}.py" for name in suite.tasks},
            "comparability_fingerprint": fingerprint,
            "comparability_files": suite.file_hashes(),
        },
    )
    out = entry.model_dump(mode="json")
    if out["arxiv"] is None:
        # The Register's field is for the paper; a suite without one leaves it out.
        del out["arxiv"]
    return out


def render_entry(entry: dict[str, Any]) -> str:
    header = (
        "# inspect_evals Register entry, written by `clinical-cf export register` (do not edit counts or metadata by hand).\n"
        "# version N-X: N moves when the catalogs or generated data change, X when only the interface changes.\n"
    )
    return header + yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)


def export_register(
    register_dir: Path = REGISTER_DIR, suites: list[str] | None = None, interface_change: bool = False
) -> list[Path]:
    """Rewrite `register/<suite>/eval.yaml` for the given suites (all by default)."""
    from clinical_cf.registration import PUBLISHED_PATH, write_published

    written, versions = [], {}
    for name in suites or list(SUITES):
        path = entry_path(name, register_dir)
        previous = load_entry(path) if path.exists() else None
        entry = build_entry(SUITES[name], previous, interface_change)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_entry(entry), encoding="utf-8")
        written.append(path)
        versions[name] = entry["version"]
    # The released hashes, shipped in the wheel (catalog/published.json; next to a register written elsewhere):
    # a log's files are "published" when they match them.
    default = Path(register_dir).resolve() == REGISTER_DIR.resolve()
    write_published(versions, PUBLISHED_PATH if default else Path(register_dir) / "published.json")
    return written
