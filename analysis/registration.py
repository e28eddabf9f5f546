"""Registration banners for the report, and the checks confirmatory mode runs before it tests anything.

A log records per file it read: its hash, `registered` (matches its lock) and `published` (matches
the hash released with this version, `catalog/published.json`), and every sample records the
fingerprint of all of them (`clinical_cf.registration`). From those the report can say, per log
and per model row, what a reviewer needs to know before reading a number:

- **unregistered**: a file did not match its lock (`-T allow_unregistered=true`), or a user's data
  file had no lock;
- **re-locked**: every file matches its lock but one does not match the published hash: the
  catalog was changed and locked again after release, which a lock alone cannot show;
- **mixed**: the log's samples come from more than one set of inputs (an `eval-set` or
  `eval-retry` extended after a re-lock: the header names only the last), or the model's logs
  were run on different inputs;
- **no record**: the log predates registration records (or is not a clinical_cf log).

`report.py` calls `banners_for_logs` for its logs and prints the lines at the top of the report
and next to each model row; confirmatory mode calls `confirmatory_predictions` first (refusing
predictions that are not the published ones) and `annotate_verdicts` on its verdict table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

from clinical_cf.catalog.css.predictions import load_predictions
from clinical_cf.core.errors import CatalogError
from clinical_cf.registration import SAMPLE_FINGERPRINT, FileRegistration, published, register_file


@dataclass(frozen=True)
class LogRegistration:
    """What one log says about its inputs: the header's registration record and the samples' fingerprints."""

    log: str
    model: str
    task: str
    record: Mapping[str, Any] | None
    sample_fingerprints: tuple[str | None, ...] = field(default=())

    @property
    def fingerprint(self) -> str | None:
        return (self.record or {}).get("fingerprint")


def log_banners(entry: LogRegistration) -> list[str]:
    """Banner lines for one log (empty when it was registered, published and consistent)."""
    name = Path(entry.log).name
    if entry.record is None:
        return [f"NO REGISTRATION RECORD: {name} does not say which catalog and data files produced it"]
    lines = []
    files = entry.record.get("files") or []
    unregistered = [f for f in files if not f.get("registered")]
    for f in unregistered:
        why = "has no lock" if f.get("locked_sha256") is None else "does not match its lock"
        lines.append(
            f"UNREGISTERED: {name}: {f['role']} {f['path']} (sha256 {str(f['sha256'])[:12]}) {why}"
            + (" (run with allow_unregistered=true)" if f.get("role") == "catalog" or f.get("locked_sha256") else "")
        )
    relocked = [f for f in files if f.get("registered") and not f.get("published")]
    for f in relocked:
        lines.append(
            f"RE-LOCKED, NOT PUBLISHED: {name}: {f['path']} (sha256 {str(f['sha256'])[:12]}) matches its lock but "
            "not the hash published for this version: it was changed and locked again after release"
        )
    prints = set(entry.sample_fingerprints)
    if len(prints - {None}) > 1 or (prints and prints != {entry.fingerprint}):
        shown = ", ".join(sorted(str(p)[:12] for p in prints))
        lines.append(
            f"MIXED INPUTS: {name}: its samples come from {len(prints)} input fingerprints ({shown}); "
            f"the header names only {str(entry.fingerprint)[:12]}: the log was extended after its inputs changed"
        )
    return lines


def model_banners(entries: Iterable[LogRegistration]) -> dict[str, list[str]]:
    """Banner lines per model row: its logs' banners, and a warning when its logs of one task used different inputs."""
    by_model: dict[str, list[LogRegistration]] = defaultdict(list)
    for entry in entries:
        by_model[entry.model].append(entry)
    out: dict[str, list[str]] = {}
    for model, logs in by_model.items():
        lines = [line for entry in logs for line in log_banners(entry)]
        by_task: dict[str, set[str | None]] = defaultdict(set)
        for entry in logs:
            by_task[entry.task].add(entry.fingerprint)
        for task, prints in sorted(by_task.items()):
            if len(prints) > 1:
                lines.append(
                    f"MIXED INPUTS: {model}: its {task} logs were run on {len(prints)} different input fingerprints "
                    f"({', '.join(sorted(str(p)[:12] for p in prints))}); their numbers are not comparable"
                )
        out[model] = lines
    return out


def read_log_registration(path: str | Path) -> LogRegistration:
    """The registration record of a log file: header metadata and the sample summaries' fingerprints."""

    header = read_eval_log(str(path), header_only=True)
    summaries = read_eval_log_sample_summaries(str(path))
    return LogRegistration(
        log=str(path),
        model=header.eval.model,
        task=header.eval.task,
        record=(header.eval.metadata or {}).get("registration"),
        sample_fingerprints=tuple((s.metadata or {}).get(SAMPLE_FINGERPRINT) for s in summaries),
    )


def banners_for_logs(paths: Iterable[str | Path]) -> dict[str, list[str]]:
    """`{model: banner lines}` for log files (the report prints them at the top and next to each model row)."""
    return model_banners(read_log_registration(p) for p in paths)


@dataclass(frozen=True)
class ConfirmatoryPredictions:
    predictions: list[Any]
    registration: FileRegistration
    version: str | None


def confirmatory_predictions(path: str | Path) -> ConfirmatoryPredictions:
    """The predictions confirmatory mode may test: they must match their lock *and* the published hash.

    A threshold changed and re-locked after release matches its lock, so the lock alone would let
    it turn "not supported" into "supported" on the same log; the published hash does not move.
    """

    registration = register_file(path, "catalog")
    if not registration.published:
        versions = [v.get("version") for v in published().values() if registration.path in v.get("files", {})]
        raise CatalogError(
            path,
            "confirmatory mode tests only the published predictions; this file (sha256 "
            f"{registration.sha256[:12]}) is not the one released with version {versions[0] if versions else '(none)'}. "
            "Publishing new predictions is a new version (`clinical-cf export register`); "
            "for an exploratory report drop --confirmatory.",
        )
    versions = [v.get("version") for v in published().values() if registration.path in v.get("files", {})]
    return ConfirmatoryPredictions(load_predictions(path), registration, versions[0] if versions else None)


def annotate_verdicts(table: pd.DataFrame, checked: ConfirmatoryPredictions) -> pd.DataFrame:
    """Add each prediction's direction, threshold and file hash next to its verdict, and a printable line."""
    if table.empty:
        return table
    by_id = {p.id: p for p in checked.predictions}
    out = table.copy()
    out["direction"] = [by_id[i].direction for i in out["prediction"]]
    out["threshold"] = [by_id[i].threshold for i in out["prediction"]]
    out["predictions_sha256"] = checked.registration.sha256
    out["verdict_line"] = [
        f"{row.model} {row.prediction}: {row.verdict} (CSS {row.css:.3f} {row.direction} {row.threshold:g}? "
        f"p_BH = {row.p_bh:.3g}; predictions sha256 {checked.registration.sha256[:12]}, version {checked.version})"
        for row in out.itertuples()
    ]
    return out


def report_banners(logs: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    """Banner lines for a suite's section of the report, from the rows the one log reader gives it.

    `logs` has one row per log with its eval metadata as `eval_<key>` (the registration record is
    `eval_registration`); `samples` has `metadata_registration_fingerprint` per sample.
    """
    column = f"metadata_{SAMPLE_FINGERPRINT}"
    prints: dict[str, tuple[str | None, ...]] = {}
    if not samples.empty and column in samples.columns:
        prints = {
            str(log): tuple(None if pd.isna(v) else str(v) for v in group[column])
            for log, group in samples.groupby("log", sort=False)
        }
    entries = []
    for row in logs.to_dict("records"):
        record = row.get("eval_registration")
        entries.append(
            LogRegistration(
                log=str(row["log"]),
                model=str(row.get("model")),
                task=str(row.get("task")),
                record=record if isinstance(record, Mapping) else None,
                sample_fingerprints=prints.get(str(row["log"]), ()),
            )
        )
    banners = model_banners(entries)
    return [line for model in sorted(banners) for line in banners[model]]
