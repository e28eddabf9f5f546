"""The whole-report cache: a second `clinical-cf report` over unchanged logs copies the first one's outputs.

A report is a function of its logs' content, their run labels, the predictions file and the code that
computes it, so its outputs are kept under a key made of exactly those: each log's content key
(`logs._file_hash`: the SHA-256 of a `.eval` zip's member directory, CRCs included, or of a file's bytes),
the labels, the predictions file's SHA-256, the SHA-256 of this package's source and templates and of
the suite specs (`clinical_cf/suites/`), and the installed inspect_ai version. Any change to any of them is a new key.
The entry is a folder of the report's own files (Markdown, HTML, CSV, PNG, Parquet: nothing executable)
plus `manifest.json` listing them with their SHA-256 and the terminal lines the report printed, which a
hit prints again. A damaged entry (a file missing or altered, a manifest that does not parse) is named
in a warning and the report is rebuilt. Only local logs are keyed; a remote log (s3://...) always reports
afresh. This module imports nothing heavy (no Inspect, no pandas), so a hit costs a listing and hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import uuid
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from clinical_cf.analysis.cache_keys import _file_hash, cache_dir

REPORT_CACHE_VERSION = "report-1"
SOURCES = Path(__file__).resolve().parent


def _code_fingerprint() -> str:
    digest = hashlib.sha256()
    files = sorted(SOURCES.rglob("*.py")) + sorted((SOURCES / "templates").glob("*.j2"))
    # The suite specs (clinical_cf/suites/): beside analysis/ in a wheel, under clinical_cf/ in a checkout.
    files += [f for folder in (SOURCES.parent / "suites", SOURCES.parent / "clinical_cf" / "suites") for f in sorted(folder.glob("*.py"))]
    for file in files:
        if file.is_file():
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    try:
        digest.update(version("inspect_ai").encode())
    except PackageNotFoundError:
        pass
    return digest.hexdigest()


def local_logs(paths: Sequence[str]) -> list[str] | None:
    """Every `.eval`/`.json` file under the given local paths (a superset of what Inspect lists), or None when a
    path is remote or missing (no whole-report cache then: the report itself says what is wrong)."""
    out: list[str] = []
    for item in paths:
        text = str(item).removeprefix("file://")
        if "://" in text:
            return None
        path = Path(text)
        if path.is_file():
            out.append(str(path.resolve()))
        elif path.is_dir():
            out += sorted(str(p.resolve()) for p in path.rglob("*") if p.suffix in (".eval", ".json") and p.is_file())
        else:
            return None
    return sorted(set(out))


def report_key(paths: Sequence[str], labels: Sequence[str] | None, predictions: Path | None) -> str | None:
    files = local_logs(paths)
    if not files:
        return None
    logs = []
    for file in files:
        key = _file_hash(file)
        if key is None:
            return None
        logs.append((file, key))
    payload = {"version": REPORT_CACHE_VERSION, "code": _code_fingerprint(), "logs": logs, "labels": sorted(labels or []),
               "paths": [str(Path(p).resolve()) for p in paths],
               "predictions": hashlib.sha256(predictions.read_bytes()).hexdigest() if predictions else None}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _entry(key: str) -> Path | None:
    folder = cache_dir()
    return folder / f"{key}.{REPORT_CACHE_VERSION}" if folder is not None else None


def _sha(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def restore(key: str | None, out: Path) -> list[str] | None:
    """The cached report copied into `out` and the terminal lines it printed, or None (no entry, or a damaged one)."""
    entry = _entry(key) if key else None
    if entry is None or not entry.is_dir():
        return None
    try:
        manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
        for name, digest in manifest["files"].items():
            if Path(name).name != name or _sha(entry / name) != digest:
                raise ValueError(f"{name} does not match its manifest")
        out.mkdir(parents=True, exist_ok=True)
        for name in manifest["files"]:
            partial = out / f".{name}.{uuid.uuid4().hex}.tmp"
            shutil.copyfile(entry / name, partial)
            os.replace(partial, out / name)
        return [str(line) for line in manifest["lines"]]
    except (OSError, ValueError, KeyError, TypeError) as ex:
        print(f"report: warning: report cache entry {entry.name} is damaged ({type(ex).__name__}: {ex}); rebuilt from the logs",
              file=sys.stderr)
        shutil.rmtree(entry, ignore_errors=True)
        return None


def save(key: str | None, out: Path, lines: list[str], since: float = 0.0) -> None:
    """Keep the files the report just wrote in `out` (modified at `since` or later) under `key`; a cache folder that
    cannot be written costs speed only."""
    entry = _entry(key) if key else None
    if entry is None:
        return
    partial = entry.with_name(f".{entry.name}.{uuid.uuid4().hex}.tmp")
    try:
        partial.mkdir(parents=True)
        files = {}
        for file in sorted(out.iterdir()):
            if file.is_file() and not file.name.startswith(".") and file.stat().st_mtime >= since:
                shutil.copyfile(file, partial / file.name)
                files[file.name] = _sha(partial / file.name)
        (partial / "manifest.json").write_text(json.dumps({"files": files, "lines": lines}), encoding="utf-8")
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(partial, entry)
    except OSError:
        pass
    finally:
        shutil.rmtree(partial, ignore_errors=True)


class Tee:
    """Copies what the report prints on stderr (skipped logs, replaced reruns, warnings) so a cache hit can say it again."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.lines: list[str] = []
        self._partial = ""

    def write(self, text: str) -> int:
        self._partial += text
        *done, self._partial = self._partial.split("\n")
        self.lines += [line for line in done if line.startswith("report: ") and "warning: " not in line]
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)
