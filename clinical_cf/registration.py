"""What a run read and whether it was pre-registered and published: recorded in every log and every sample.

Three states per file, because a lock alone cannot catch "tamper, then re-lock":

- **sha256**: the bytes the run read;
- **registered**: the file matches its own `<file>.lock` (written by `clinical-cf catalog lock`);
- **published**: the file matches the hash released with this version's Register entry, kept in
  the package-data file `catalog/published.json` (the Register's `eval.yaml` forbids extra keys,
  so the published hashes cannot live only there). `clinical-cf export register` rewrites it
  with the versions it writes. A re-locked file is registered but not published.

Bundled files (every catalog, and the cases, vignettes, questions and episodes the tasks read) must
match their locks; a user's own catalog needs its lock too (unless `allow_unregistered`), while a
user's own data file is hashed into the log and marked unregistered unless it has a lock, and is
never refused for that alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_json
from clinical_cf.core.locking import check_lock, read_lock
from clinical_cf.suites import CATALOG_DIR, SUITES, Suite, display_path

PUBLISHED_PATH = CATALOG_DIR / "published.json"

Role = Literal["catalog", "data"]

SAMPLE_FINGERPRINT = "registration_fingerprint"
"""Sample metadata key: the fingerprint of every file that produced the sample (see `Registration`)."""

SAMPLE_KEYS = (SAMPLE_FINGERPRINT, "registration_registered", "registration_published")
"""Every per-sample registration key: provenance, which differs when the same records come from another file."""

def is_bundled(path: str | Path) -> bool:
    return Path(path).resolve().is_relative_to(CATALOG_DIR)


def published(path: str | Path = PUBLISHED_PATH) -> dict[str, dict[str, Any]]:
    """The published fingerprints per suite: `{suite: {version, fingerprint, files: {catalog/<path>: sha256}, scoring: {part: sha256}}}`."""
    path = Path(path)
    if not path.exists():
        return {}
    raw = load_json(path)  # bounded read; errors name the file and the line
    if not isinstance(raw, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("files"), dict) for v in raw.values()
    ):
        raise CatalogError(path, "must map each suite to {version, fingerprint, files}")
    return raw


VERSION_PATTERN = r"^(\d+)-([A-Z])$"
"""A suite's version `N-X`: N moves when results stop being comparable, X when only the interface changes."""


def published_version(suite: str, path: str | Path = PUBLISHED_PATH) -> str:
    """The suite's published version `N-X`, for `Task(version=...)`: a log names the version it ran.

    Tasks read it here (not from the Register exporter, which writes it): a task never imports an exporter.
    """
    path = Path(path)
    record = published(path).get(suite)
    if record is None:
        raise CatalogError(path, f"suite {suite!r} has no published version: run `clinical-cf export register`")
    version = record.get("version")
    if not isinstance(version, str) or not re.fullmatch(VERSION_PATTERN, version):
        raise CatalogError(path, f"version {version!r} is not N-X (e.g. 3-A)", entry=suite, field="version")
    return version


def published_hashes(path: str | Path = PUBLISHED_PATH) -> dict[str, str]:
    """Every published file's hash, over all suites (a file two suites read is published once)."""
    return {name: sha for entry in published(path).values() for name, sha in entry["files"].items()}


def published_files(suite: Suite) -> tuple[Path, ...]:
    return (*suite.comparability_files, *suite.extra_published)


def published_entry(suite: Suite, version: str) -> dict[str, Any]:
    """What `write_published` records for a suite at a Register version."""
    return {
        "version": version,
        "fingerprint": suite.fingerprint(),
        "files": {display_path(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in published_files(suite)},
        "scoring": suite.scoring_hashes(),
    }


def scoring_changes(suite: str, path: str | Path = PUBLISHED_PATH) -> list[str]:
    """The scoring parts (`clinical_cf.scoring_contract`) that changed, appeared or went since the suite was published.

    Each says what happened to which part, e.g. `clinical_cf.scorers.css_judge.JUDGE_PROMPT changed`.
    """
    released = published(path).get(suite, {}).get("scoring") or {}
    if not released:
        return ["no scoring hashes are published"]
    current = SUITES[suite].scoring_hashes()
    changes = [f"{name} changed" for name in current if name in released and released[name] != current[name]]
    changes += [f"{name} is new" for name in current if name not in released]
    changes += [f"{name} was removed" for name in released if name not in current]
    return changes


def unpublished_scoring(path: str | Path = PUBLISHED_PATH) -> list[str]:
    """One line per suite whose scoring changed while its published version did not (empty when all are current)."""
    lines = []
    for name in SUITES:
        changes = scoring_changes(name, path)
        if changes:
            version = published(path).get(name, {}).get("version", "unpublished")
            lines.append(
                f"suite {name!r} (version {version}): {'; '.join(changes)}: run `clinical-cf export register` to move its version"
            )
    return lines


def write_published(versions: dict[str, str], path: str | Path = PUBLISHED_PATH) -> Path:
    """Record the current hashes of the given suites at their Register versions; other suites are kept."""
    path = Path(path)
    current = published(path)
    for name, version in versions.items():
        current[name] = published_entry(SUITES[name], version)
    path.write_text(json.dumps(dict(sorted(current.items())), indent=2) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class FileRegistration:
    """One file a run read, as recorded in the log."""

    path: str
    role: Role
    sha256: str
    registered: bool
    published: bool
    locked_sha256: str | None


def register_file(
    path: str | Path, role: Role, allow_unregistered: bool = False, published_path: str | Path = PUBLISHED_PATH
) -> FileRegistration:
    """Hash a file and check it against its lock and the published hash.

    Refused (UnregisteredCatalogError) when it does not match its lock, unless `allow_unregistered`:
    always for a catalog, and for a bundled data file (a one-character edit of the bundled cases
    must not reach the samples). A user's data file is only marked.
    """
    path = Path(path)
    must_match = role == "catalog" or is_bundled(path)
    status = check_lock(path, allow_unregistered) if must_match else read_lock(path)
    shown = display_path(path)
    released = published_hashes(published_path).get(shown) if is_bundled(path) else None
    return FileRegistration(
        path=shown,
        role=role,
        sha256=status.catalog_sha256,
        registered=status.registered,
        published=released == status.catalog_sha256,
        locked_sha256=status.locked_sha256,
    )


@dataclass(frozen=True)
class Registration:
    """Every catalog and data file a task read."""

    files: tuple[FileRegistration, ...]

    @property
    def fingerprint(self) -> str:
        """SHA-256 over the files' paths and hashes: two samples with the same fingerprint came from the same inputs."""
        digest = hashlib.sha256()
        for item in sorted(self.files, key=lambda f: (f.role, f.path)):
            digest.update(f"{item.role}\0{item.path}\0{item.sha256}\n".encode())
        return digest.hexdigest()

    @property
    def registered(self) -> bool:
        return all(f.registered for f in self.files)

    @property
    def published(self) -> bool:
        return all(f.published for f in self.files)

    def task_metadata(self) -> dict[str, Any]:
        """The `registration` entry of the task metadata (the log header)."""
        return {
            "registration": {
                "fingerprint": self.fingerprint,
                "registered": self.registered,
                "published": self.published,
                "files": [asdict(f) for f in self.files],
            }
        }

    def sample_metadata(self) -> dict[str, Any]:
        """Per-sample fields: a log extended with samples of other inputs shows it sample by sample.

        `clinical_cf.tasks.build.stamp` adds them to every sample of every task.
        """
        return {
            SAMPLE_FINGERPRINT: self.fingerprint,
            "registration_registered": self.registered,
            "registration_published": self.published,
        }


def register_inputs(
    catalogs: list[str | Path], data: list[str | Path], allow_unregistered: bool = False
) -> Registration:
    """Register a task's catalogs (pre-registered, lock required) and data files (bundled ones locked)."""
    files = [register_file(p, "catalog", allow_unregistered) for p in catalogs]
    files += [register_file(p, "data", allow_unregistered) for p in data]
    return Registration(tuple(files))


class MixedInputsError(CatalogError):
    """A log would hold samples produced from different catalog or data files."""


@metric
def inputs_consistent() -> Metric:
    """1.0 when every sample of the log came from the same inputs; refuses (raises) otherwise.

    `eval-retry` and `eval-set` extend a log with new samples from a task rebuilt from the current
    files, keeping the old samples; Inspect compares only sample ids and counts. After a re-lock the
    log would mix two catalogs under one header. Metrics see every sample, the reused ones included,
    so this is where the mix is visible to the run itself: the eval ends in an error naming the
    fingerprints instead of reporting numbers over mixed inputs.
    """

    def compute(scores: list[SampleScore]) -> float:
        prints = Counter((s.sample_metadata or {}).get(SAMPLE_FINGERPRINT) for s in scores)
        if len(prints) > 1:
            shown = "; ".join(f"{str(fp)[:12]}: {n} sample(s)" for fp, n in prints.most_common())
            raise MixedInputsError(
                "log",
                f"refusing to extend this log: its samples come from {len(prints)} different sets of catalog and "
                f"data files ({shown}). The inputs changed after the log was started (a re-lock or an edit); "
                "start a new log instead of eval-retry / eval-set on the old one.",
            )
        return 1.0

    return compute


@scorer(metrics=[inputs_consistent()])
def registration_check() -> Scorer:
    """Records each sample's input fingerprint in the score's metadata; the metric refuses a log of mixed inputs.

    The fingerprint is metadata, not the score's answer, so Inspect's viewer shows no column of hashes.
    """

    async def score(state: TaskState, target: Target) -> Score:
        fingerprint = (state.metadata or {}).get(SAMPLE_FINGERPRINT)
        if fingerprint is None:
            return Score(value=0, answer=None, explanation="sample carries no input fingerprint")
        return Score(
            value=1,
            explanation="input fingerprint of the files that produced this sample",
            metadata={"input_fingerprint": fingerprint},
        )

    return score
