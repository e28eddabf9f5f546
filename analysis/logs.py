"""The one log reader: every report section, the side-by-side page, rewards, the annotation export and
the per-suite analyses take their rows from here.

    rows = read_logs(["logs/", "s3://bucket/run-7/"])
    rows.suite("css")     # one row per sample and epoch of the CSS logs
    rows.logs             # one row per log: path, suite, model, task, status and its eval metadata

Logs are listed through Inspect (`list_eval_logs`, so a local folder or anything Inspect can list,
e.g. S3) and routed by the `suite` their task records in `eval.metadata`, never by sniffing columns.
Each log is read once, through Inspect's public `read_eval_log` with `exclude_fields` for the parts
no consumer uses (the transcript: events, messages, attachments, the model output; they are most of
a log's bytes and all of its validation time), turned into flat rows, and released before the next
log is opened, so peak memory is one log's samples plus the rows, whatever the number of logs.

A row carries what every consumer needs and keeps its provenance, so any number traces back to a
log and sample: `log`, `suite`, `model`, `task`, `sample_id`, `epoch`, `uuid`, `input` (the text,
or a list of {role, text} for chat inputs), `metadata_<key>` for every sample metadata field,
`score_<scorer>` (value), `score_<scorer>_metadata`, `score_<scorer>_explanation` and
`score_<scorer>_answer` for every score, and `store_<key>` for every store entry. Identical strings
(a case's packet seen by six models, a rationale template) are kept once.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import sys
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from multiprocessing import Pool, active_children
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from inspect_ai.log import (
    EvalLog,
    EvalSample,
    EvalSampleSummary,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample_summaries,
)

from clinical_cf.analysis.cache_keys import _file_hash, _local, cache_dir
from clinical_cf.core import interrupts, phases
from clinical_cf.core.errors import CatalogError, shown
from clinical_cf.core.interrupts import INTERRUPTS

EXCLUDED_FIELDS: frozenset[str] = frozenset({"events", "messages", "attachments", "output", "timelines"})
"""EvalSample fields no consumer reads; `read_eval_log` skips them while parsing."""

LOG_COLUMNS = ("log", "suite", "model", "task", "task_id", "status", "samples", "judge", "run", "created", "reducer", "model_roles")




def list_logs(paths: str | Path | Sequence[str | Path], strict: bool = False) -> list[str]:
    """Log files as given; folders and other listable locations expanded to the Inspect logs inside them.

    Paths come back without Inspect's `file://` prefix, so a local log is named the way the user typed it.
    With `strict` (the report), a local path that does not exist, is not a regular file or folder, or is a
    folder holding no Inspect log is a `CatalogError` naming it, never an empty report.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if strict and not items:
        raise CatalogError("(logs)", "no log file or folder given")
    out: list[str] = []
    for item in items:
        text = str(item)
        local = _local(text)
        if strict and local is not None:
            if not local.exists():
                raise CatalogError(text, "does not exist (give Inspect log files or folders holding them)")
            if not (local.is_dir() or local.is_file()):
                raise CatalogError(text, "is not a regular file or folder")
            if local.is_file() and local.stat().st_size == 0:
                raise CatalogError(text, "is empty (0 bytes), not an Inspect log")
        if text.endswith((".eval", ".json")) and not (local is not None and local.is_dir()):
            out.append(text.removeprefix("file://"))  # a log file, local or remote (read_eval_log reads both)
        elif (local is not None and local.is_dir()) or "://" in text:
            found = [info.name.removeprefix("file://") for info in list_eval_logs(text)]
            # A log whose extension is in another case (RUN.EVAL): Inspect lists and reads only `.eval`/`.json`, so it
            # is listed here to be named and skipped with why (`misnamed`), never left out without a word.
            odd = sorted(str(f) for f in local.rglob("*") if misnamed(f) and f.is_file()) if local is not None else []
            if strict and not found and not odd:
                raise CatalogError(text, "holds no Inspect logs (*.eval or *.json written by inspect eval)")
            out += found + odd
        else:
            out.append(text)
    return list(dict.fromkeys(out))


def misnamed(path: str | Path) -> str | None:
    """Why a file with an Inspect log's extension in another case (`RUN.EVAL`, `x.Json`) is not read, else None."""
    suffix = Path(str(path)).suffix
    if suffix.lower() in (".eval", ".json") and suffix not in (".eval", ".json"):
        return (f"is not read: Inspect reads logs named *.eval or *.json (lower case); rename it to "
                f"{Path(str(path)).stem}{suffix.lower()} to include it")
    return None


def explicit_files(paths: str | Path | Sequence[str | Path]) -> set[str]:
    """The paths named as log files (not found by listing a folder): a problem with one of them is an error."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    out = set()
    for item in items:
        text = str(item).removeprefix("file://")
        local = _local(text)
        if (local is not None and local.is_file()) or (local is None and text.endswith((".eval", ".json"))):
            out.add(text)
    return out


@dataclass(frozen=True)
class LogHeader:
    """What a report needs to know about one log before and after its samples are read."""

    path: str
    suite: str | None
    model: str
    task: str
    task_id: str
    status: str
    metadata: dict[str, Any]
    samples: int = 0
    judge: str | None = None
    """The model the log's `judge` role ran on (`eval.model_roles`), None when it has no judge role."""
    run: str = ""
    """The run label: `--label` for this log, else its tags (`inspect eval --tags`), else empty."""
    created: str = ""
    tags: str = ""
    """The log's tags (`inspect eval --tags`), sorted and comma-joined: the default run label."""
    reducer: str = "mean"
    """How the log reduces a sample's epochs (`eval.config.epochs_reducer`, Inspect's default `mean`)."""
    model_roles: str = ""
    """Every model role of the log as `role=model` pairs, comma-joined (`eval.model_roles`): who ran each role."""

    def row(self) -> dict[str, Any]:
        """The per-log row: provenance columns and every eval metadata field as `eval_<key>`."""
        base = {"log": self.path, "suite": self.suite, "model": self.model, "task": self.task,
                "task_id": self.task_id, "status": self.status, "samples": self.samples, "judge": self.judge,
                "run": self.run, "created": self.created, "reducer": self.reducer, "model_roles": self.model_roles}
        return base | {f"eval_{k}": v for k, v in self.metadata.items()}


class _Interner:
    """Keeps one copy of each distinct string across every row read (packets repeat across models)."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._seen.setdefault(value, value) if len(value) > 64 else value
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        return value


def _input(value: Any) -> str | list[dict[str, str]]:
    if isinstance(value, str):
        return value
    return [{"role": m.role, "text": m.text} for m in value]


def input_text(value: Any, roles: Iterable[str] | None = None, sep: str = "\n") -> str:
    """The text of a row's `input`: a string as is, chat messages joined (optionally only some roles)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    wanted = set(roles) if roles is not None else None
    return sep.join(m["text"] for m in value if wanted is None or m["role"] in wanted)


def sample_row(header: LogHeader, sample: EvalSample | EvalSampleSummary, intern: _Interner | None = None) -> dict[str, Any]:
    """One flat row for a sample (or a sample summary, which has no store): provenance, input,
    metadata_*, score_*, store_* and per-role token columns."""
    keep = intern or _Interner()
    row: dict[str, Any] = {
        "log": header.path, "suite": header.suite, "model": header.model, "task": header.task,
        "judge": header.judge, "run": header.run, "created": header.created, "reducer": header.reducer,
        # The setting the task logged (CSS: single_shot / agent), never guessed from the task's name.
        "eval_setting": header.metadata.get("setting"),
        "sample_id": sample.id, "epoch": sample.epoch, "uuid": sample.uuid, "error": _error_text(sample.error),
        # The limit Inspect recorded when one stopped the sample (message, token, time, ...): not a reply to read.
        "limit": _limit_text(getattr(sample, "limit", None)),
        # The log's status (success, error, cancelled, started) travels with each of its samples.
        "status": header.status,
        "completed_at": getattr(sample, "completed_at", None),
        # A summary's input is the prompt (a CSS packet is ~10 kB): no table needs it and 30,000 of them
        # would dominate the report's memory, so summary rows carry none (full rows keep it).
        "input": keep(_input(sample.input)) if isinstance(sample, EvalSample) else None,
    }
    # Tokens per role ("model" for the model under test): the report's usage table sums them.
    usage = dict(getattr(sample, "role_usage", None) or {})
    model_usage = getattr(sample, "model_usage", None) or {}
    if header.model in model_usage:
        usage.setdefault("model", model_usage[header.model])
    for role, use in usage.items():
        row[f"tokens_{role}"] = use.total_tokens
        row[f"cost_{role}"] = use.total_cost
    for key, value in (sample.metadata or {}).items():
        row[f"metadata_{key}"] = keep(value)
    for name, score in (sample.scores or {}).items():
        row[f"score_{name}"] = score.value
        row[f"score_{name}_metadata"] = keep(score.metadata or {})
        row[f"score_{name}_explanation"] = keep(score.explanation)
        row[f"score_{name}_answer"] = keep(score.answer)
    for key, value in (getattr(sample, "store", None) or {}).items():
        row[f"store_{key}"] = keep(value)
    return row


def _limit_text(limit: Any) -> str | None:
    """The limit's type (message, token, time, ...): a full sample holds an `EvalSampleLimit`, a summary its type."""
    if limit is None:
        return None
    return str(getattr(limit, "type", limit))


def _error_text(error: Any) -> str | None:
    """A sample's error as text (a summary holds the message, a full sample an `EvalError`)."""
    if error is None:
        return None
    return str(getattr(error, "message", error))


def _header(path: str, log: EvalLog, labels: dict[str, str] | None = None, samples: int | None = None) -> LogHeader:
    metadata = dict(log.eval.metadata or {})
    suite = metadata.get("suite")
    roles = log.eval.model_roles or {}
    judge = roles["judge"].model if "judge" in roles else None
    reducer = log.eval.config.epochs_reducer or ["mean"]
    tags = ",".join(sorted(log.eval.tags or []))
    run = (labels or {}).get(path)
    if run is None:
        run = tags
    return LogHeader(path=path, suite=str(suite) if suite is not None else None, model=log.eval.model,
                     task=log.eval.task, task_id=log.eval.task_id, status=log.status, metadata=metadata,
                     samples=len(log.samples or []) if samples is None else samples, judge=judge, run=run,
                     created=str(log.eval.created), tags=tags, reducer=str(reducer[0]),
                     model_roles=",".join(f"{role}={spec.model}" for role, spec in sorted(roles.items())))


def label_map(labels: Sequence[str] | None, read: Sequence[str] | None = None) -> dict[str, str]:
    """`--label NAME=LOG_OR_DIR` entries as {log path: NAME}; a malformed entry or unknown path is an error.

    Two labels for one log (the same path, or a log inside two labelled folders) are an error naming both,
    never the last one silently winning; with `read` (the logs the report reads), a label naming no log
    among them is an error too (it would label nothing)."""
    out: dict[str, str] = {}
    given: dict[str, str] = {}
    # A label's path as the report lists it (`logs/` vs `./logs/x.eval`): matched on the resolved local path.
    as_read = {_resolved(p): p for p in read or []}
    for entry in labels or []:
        name, sep, where = _split_label(entry)
        if not sep or not name.strip() or not where.strip():
            raise CatalogError("--label", f"{shown(entry)} is not NAME=LOG_OR_DIR")
        name = name.strip()
        found = [as_read.get(_resolved(p), p) for p in list_logs(where.strip(), strict=True)]
        for path in found:
            if path in out and out[path] != name:
                raise CatalogError("--label", f"{path} has two labels: {out[path]!r} ({given[path]}) and {name!r} ({entry}); "
                                              "give each log one label")
            out[path], given[path] = name, entry
        if read is not None and not set(found) & set(read):
            raise CatalogError("--label", f"label {name!r} ({entry}) names no log the report reads "
                                          f"(it lists {len(found)} log(s), none among the report's LOGS)")
    return out


def _split_label(entry: str) -> tuple[str, str, str]:
    """NAME=PATH split at the first '=' whose right side names an existing path or a URL (a name may hold '=');
    at the first '=' when none does (the path is then reported as missing)."""

    at = [i for i, ch in enumerate(entry) if ch == "=" and entry[:i].strip()]
    for named in (lambda w: Path(w).exists(), lambda w: re.match(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://", w) is not None):
        for i in at:
            where = entry[i + 1:].strip()
            if where and named(where):
                return entry[:i], "=", entry[i + 1:]
    return entry.partition("=")


def _resolved(path: str) -> str:
    local = _local(path)
    return str(local.resolve()) if local is not None else path


def _read(path: str, mode: str, exclude_fields: Iterable[str], labels: dict[str, str] | None):
    """(header, samples) of one log: full samples without the transcript, or Inspect's sample summaries."""
    if mode == "summaries":
        # Summaries carry ids, epochs, input, metadata and score metadata under 1k each, and usage:
        # everything the tables need, at a fraction of the parse cost of full samples.
        head = read_eval_log(path, header_only=True)
        if (head.eval.metadata or {}).get("suite") is None:
            return _header(path, head, labels, 0), []
        samples = read_eval_log_sample_summaries(path)
        return _header(path, head, labels, len(samples)), samples
    log = read_eval_log(path, exclude_fields=set(exclude_fields))
    return _header(path, log, labels), list(log.samples or [])


CACHE_VERSION = "rows-6"
"""Part of every cache key: bump it when `sample_row` changes what a row holds."""


def _summary_job(path: str, label: str | None, wanted: tuple[str, ...] | None, use_cache: bool):
    """One log in summaries mode (run in a worker process): ("ok", header, rows frame, warnings) or ("skip", why).

    With the cache, the rows of a log whose bytes were read before come back from `<cache>/<sha256>.<version>.parquet`
    (`RowCache`) without parsing the log at all; a damaged entry is named in a warning and rebuilt from the log.
    """
    warnings: list[str] = []
    if misnamed(path):
        return "skip", misnamed(path)
    cache = RowCache.for_log(path) if use_cache else None
    try:
        if cache is not None:
            try:
                hit = cache.load()
            except Exception as ex:  # noqa: BLE001 - any damage (truncated, foreign, edited) costs a re-read, never the report
                warnings.append(f"{path}: report cache entry {cache.file.name} is damaged ({type(ex).__name__}: {ex}); "
                                "rebuilt from the log")
                hit = None
            if hit is not None:
                header, frame = hit
                header = LogHeader(**{**header.__dict__, "path": path, "run": label if label is not None else header.tags})
                frame["log"] = path
                frame["run"] = header.run
                return "ok", header, frame, warnings
        labels = {path: label} if label is not None else None
        if wanted is not None:
            suite = (read_eval_log(path, header_only=True).eval.metadata or {}).get("suite")
            if suite not in wanted:
                return "skip", f"is not a {' or '.join(sorted(wanted))} log (its suite is {suite!r})"
        header, samples = _read(path, "summaries", EXCLUDED_FIELDS, labels)
    except Exception as ex:  # noqa: BLE001 - a corrupt or unreadable log must not stop the report; it is named
        return "skip", f"cannot be read (truncated or not an Inspect log): {type(ex).__name__}: {ex}"
    if header.suite is None:
        return "skip", "is not a CSS log, nor a log of any clinical_cf suite (its eval metadata records no `suite`)"
    if not samples:
        return "skip", "has no samples"
    frame = pd.DataFrame([sample_row(header, sample) for sample in samples])
    if cache is not None:
        cache.store(header, frame)
    return "ok", header, frame, warnings


class RowCache:
    """One log's rows as a columnar file (Parquet), keyed by the SHA-256 of the log's bytes and `CACHE_VERSION`.

    Nothing in it is executable: numbers and text are Parquet columns, every other value (score metadata
    dicts, list metadata, mixed-type columns) is JSON text in a column the file's schema metadata names,
    and the log header is JSON there too. A file that does not read back as exactly that (truncated,
    foreign, another version) raises on `load`; the caller rebuilds it. Writes are atomic (temp + rename),
    so a concurrent report never reads half an entry; a read-only or full cache folder costs speed only.
    """

    META_KEY = b"clinical_cf_rows"

    def __init__(self, file: Path) -> None:
        self.file = file

    @classmethod
    def for_log(cls, path: str) -> RowCache | None:
        folder = cache_dir()
        key = _file_hash(path) if folder is not None else None
        return cls(folder / f"{key}.{CACHE_VERSION}.parquet") if key else None

    def load(self) -> tuple[LogHeader, pd.DataFrame] | None:
        if not self.file.is_file():
            return None
        table = pq.read_table(self.file)
        meta = json.loads((table.schema.metadata or {})[self.META_KEY])
        if meta.get("version") != CACHE_VERSION:
            raise ValueError(f"written by cache version {meta.get('version')!r}, not {CACHE_VERSION}")
        frame = table.to_pandas()
        if len(frame) != meta["rows"]:
            raise ValueError(f"holds {len(frame)} rows, its header says {meta['rows']}")
        for col in meta["json_columns"]:
            frame[col] = [json.loads(v) if isinstance(v, str) else None for v in frame[col].tolist()]
        for col in meta["text_columns"]:
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
        return LogHeader(**meta["header"]), frame[meta["columns"]]

    def store(self, header: LogHeader, frame: pd.DataFrame) -> None:
        try:
            out = frame.copy()
            json_columns, text_columns = [], []
            for col in out.columns:
                if out[col].dtype != object:
                    continue
                values = out[col].tolist()
                if all(v is None or isinstance(v, str) for v in values):
                    text_columns.append(col)
                else:
                    json_columns.append(col)
                    out[col] = [None if v is None else json.dumps(v, default=str) for v in values]
            meta = {"version": CACHE_VERSION, "rows": len(out), "columns": list(frame.columns), "json_columns": json_columns,
                    "text_columns": text_columns, "header": header.__dict__}
            table = pa.Table.from_pandas(out, preserve_index=False)
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), self.META_KEY: json.dumps(meta, default=str).encode()})
            self.file.parent.mkdir(parents=True, exist_ok=True)
            partial = self.file.with_name(f".{self.file.name}.{uuid4_hex()}.tmp")
            try:
                pq.write_table(table, partial)
                os.replace(partial, self.file)
            finally:
                partial.unlink(missing_ok=True)
        except (OSError, pa.ArrowException, TypeError, ValueError):
            pass  # an entry that cannot be written costs speed on the next report, never this one


def uuid4_hex() -> str:
    return uuid.uuid4().hex


def worker_count(jobs: int) -> int:
    """Processes for `jobs` logs: `CLINICAL_CF_WORKERS` when set (1 = read in this process), else one per CPU."""

    setting = os.environ.get("CLINICAL_CF_WORKERS", "").strip()
    if setting:
        if not setting.isdigit() or int(setting) < 1:
            raise CatalogError("CLINICAL_CF_WORKERS", f"must be a whole number >= 1 (got {shown(setting)})")
        return min(jobs, int(setting))
    return min(jobs, os.cpu_count() or 1)


def _summaries_in_parallel(files: list[str], labels: dict[str, str] | None, wanted: set[str] | None,
                           use_cache: bool, workers: int | None):
    """`_summary_job` over every log, in order: in worker processes when there are several logs to parse."""

    wanted_t = tuple(sorted(wanted)) if wanted is not None else None
    jobs = [(path, (labels or {}).get(path), wanted_t, use_cache) for path in files]
    workers = workers if workers is not None else worker_count(len(files))
    if workers <= 1 or len(files) <= 1:
        yield from (_summary_job(*job) for job in jobs)
        return
    yield from in_workers(_summary_job, jobs, workers)


def ignore_interrupts() -> None:
    """Worker processes leave Ctrl-C to the report's own process, which ends with one line (no worker tracebacks),
    and end quietly on SIGTERM (the report's pool terminating them; not the handler the CLI process installed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS)  # blocked by `in_workers` while it forked this worker


def _call(job: tuple) -> Any:
    function, args = job
    return function(*args)


def in_workers(function, jobs: list[tuple], workers: int) -> Iterator:
    """`function(*job)` for every job, in order, in `workers` processes.

    On Ctrl-C, SIGTERM (`core.errors.Terminated`), any error, or a caller that stops reading, the pool is
    terminated: its workers are ended at once, mid-job included (`multiprocessing.Pool.terminate`; a
    `concurrent.futures` pool has no public way to end a running worker, and one left reading a log after its
    report ended is an orphan)."""

    # A signal that lands while the pool forks its workers would be raised inside Pool() (no pool to terminate yet)
    # or inside an at-fork callback, where Python ignores exceptions (the report then ran on, its signal lost); one
    # that lands while the pool is ended would cut `terminate` short and leave workers running. Both windows hold
    # it back (`interrupts.deferred`) and raise it as they close, where the pool is (or has been) terminated.
    pool = None
    try:
        with interrupts.deferred():
            pool = Pool(processes=workers, initializer=ignore_interrupts)
            phases.reached("pool-start", " ".join(str(child.pid) for child in active_children()))
        yield from pool.imap(_call, [(function, job) for job in jobs])
    finally:
        if pool is not None:
            with interrupts.deferred():
                phases.reached("pool-teardown")
                pool.terminate()  # ends every worker now, mid-job included, and joins them


def _summary_results(files: list[str], results: Iterator, named: set[str], known: list[str] | None, progress: bool,
                     intern: _Interner) -> Iterator:
    """`iter_logs`'s answers in summaries mode, from the workers' results in the order of `files`."""
    for i, (path, result) in enumerate(zip(files, results, strict=False), 1):
        if progress and len(files) > 5:
            print(f"read log {i}/{len(files)}", file=sys.stderr)
        phases.reached("reading", str(i))
        if result[0] == "ok" and known is not None and result[1].suite not in known:
            result = ("skip", unknown_suite(result[1].suite, known))
        elif result[0] == "ok" and not _scored(result[2]) and result[1].status == "success":
            # A log that did not complete is listed with its status, count and spend even when nothing in it was
            # scored (every sample errored): `read_logs` holds it out of the tables as incomplete.
            result = ("skip", no_scores(result[2]["error"].notna().all() if "error" in result[2].columns else False))
        if result[0] == "skip":
            if path in named:
                raise CatalogError(path, result[1])
            yield path, result[1]
        else:
            for line in result[3]:
                print(f"report: warning: {line}", file=sys.stderr)
            # Strings repeated across logs (a case's metadata seen by six models) kept once.
            frame = result[2]
            for col in frame.columns:
                if frame[col].dtype == object:
                    frame[col] = frame[col].map(intern)
            yield result[1], frame


def iter_logs(
    paths: str | Path | Sequence[str | Path],
    suites: Iterable[str] | None = None,
    exclude_fields: Iterable[str] = EXCLUDED_FIELDS,
    progress: bool = False,
    mode: str = "full",
    labels: dict[str, str] | None = None,
    strict: bool = False,
    use_cache: bool = True,
    workers: int | None = None,
    known_suites: Iterable[str] | None = None,
) -> Iterator[tuple[LogHeader, list[dict[str, Any]] | pd.DataFrame] | tuple[str, str]]:
    """Per log, in order: (header, sample rows), or (path, why it was skipped).

    With `suites`, logs of other suites are skipped after reading only their header. `mode="summaries"`
    reads Inspect's sample summaries instead of full samples (no store, metadata fields under 1k), one
    log per worker process, and keeps each log's rows in a cache keyed by the log's SHA-256 (`cache_dir`).
    With `strict`, a log named explicitly (not found by listing a folder) that cannot be used is a
    `CatalogError`; logs found in a folder are skipped with the reason (a log folder holds other runs).
    """
    files = list_logs(paths, strict=strict)
    named = explicit_files(paths) if strict else set()
    wanted = set(suites) if suites is not None else None
    known = list(known_suites) if known_suites is not None else None
    if mode == "summaries":
        intern = _Interner()
        # Closed here, not when garbage collected: `zip` stops at the last file without asking the pool's generator
        # for more, and a Ctrl-C raised while a collected generator ends its pool is printed and dropped by Python.
        with closing(_summaries_in_parallel(files, labels, wanted, use_cache, workers)) as results:
            yield from _summary_results(files, results, named, known, progress, intern)
        return
    intern = _Interner()
    for i, path in enumerate(files, start=1):
        if progress and len(files) > 5:
            print(f"reading log {i}/{len(files)}", file=sys.stderr)
        why = misnamed(path)
        try:
            if why is None and wanted is not None:
                suite = (read_eval_log(path, header_only=True).eval.metadata or {}).get("suite")
                if suite not in wanted:
                    why = f"is not a {' or '.join(sorted(wanted))} log (its suite is {suite!r})"
            if why is None:
                header, samples = _read(path, mode, exclude_fields, labels)
        except Exception as ex:  # noqa: BLE001 - a corrupt or unreadable log must not stop the report; it is named
            why = f"cannot be read (truncated or not an Inspect log): {type(ex).__name__}: {ex}"
        if why is None and header.suite is None:
            why = "is not a CSS log, nor a log of any clinical_cf suite (its eval metadata records no `suite`)"
        elif why is None and not samples:
            why = "has no samples"
        elif why is None and known is not None and header.suite not in known:
            why = unknown_suite(header.suite, known)
        elif why is None and not any(sample.scores for sample in samples) and header.status == "success":
            why = no_scores(all(sample.error is not None for sample in samples))
        if why is not None:
            if path in named:
                raise CatalogError(path, why)
            yield path, why
            continue
        rows = [sample_row(header, sample, intern) for sample in samples]
        del samples  # released before the next log is opened
        yield header, rows


def unknown_suite(suite: str | None, known: list[str]) -> str:
    return f"records suite {suite!r} in its eval metadata, which clinical_cf does not have (its suites: {', '.join(known)})"


NO_SCORES = "has no scores (written with --no-score): score it with `inspect score LOG` first"
ALL_ERRORED = ("has no scores: every sample errored before it could be scored (provider errors, timeouts); "
               "rerun the failed samples with `inspect eval-retry LOG`")


def no_scores(all_errored: bool) -> str:
    """Why a complete log without any score is skipped, with the advice that fits: score it, or rerun it."""
    return ALL_ERRORED if all_errored else NO_SCORES


def _scored(frame: pd.DataFrame) -> bool:
    """Whether any sample of a log's rows carries a score (a scorer ran on it)."""
    return any(col.startswith("score_") and col.endswith("_metadata") and frame[col].map(lambda v: isinstance(v, dict)).any()
               for col in frame.columns)


INCOMPLETE = ("has status {status}: the eval did not complete ({samples} samples logged); not scored "
              "(finish it with `inspect eval-retry LOG`, or pass --include-incomplete to score its completed samples; "
              "a complete run of the same entry still wins)")


def incomplete_reason(status: str, samples: int) -> str | None:
    """Why a log of this status is not scored by default (None for a complete log)."""
    return None if status == "success" else INCOMPLETE.format(status=status, samples=samples)


@dataclass
class LogRows:
    """Every usable log's sample rows (one frame per suite) and header, and the logs skipped with why."""

    by_suite: dict[str, pd.DataFrame]
    logs: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)
    mode: str = "full"
    """"full" (samples without the transcript) or "summaries" (no store; see `full_samples`)."""
    excluded: dict[str, str] = field(default_factory=dict)
    """Logs read but not scored, with why (a log that did not complete: status error, cancelled or started)."""
    named: frozenset[str] = frozenset()
    """The logs named explicitly (not found by listing a folder): a problem with one of them is an error."""

    def suite(self, name: str) -> pd.DataFrame:
        """The sample rows of one suite's scored logs (empty when none was read); excluded logs' rows left out."""
        frame = self.by_suite.get(name, pd.DataFrame())
        if self.excluded and not frame.empty:
            frame = frame[~frame["log"].isin(list(self.excluded))].reset_index(drop=True)
        return frame

    def suite_logs(self, name: str) -> pd.DataFrame:
        """The per-log rows (eval metadata as `eval_<key>`) of one suite's logs."""
        if self.logs.empty:
            return self.logs
        return self.logs[self.logs["suite"] == name].reset_index(drop=True)

    @property
    def samples(self) -> pd.DataFrame:
        """Every suite's rows in one frame, excluded logs' rows included (columns a suite does not record are empty there)."""
        frames = [f for f in self.by_suite.values() if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def suites(self) -> list[str]:
        return list(self.by_suite)


def read_logs(
    paths: str | Path | Sequence[str | Path] | LogRows,
    suites: Iterable[str] | None = None,
    progress: bool = False,
    mode: str = "full",
    labels: dict[str, str] | None = None,
    strict: bool = False,
    use_cache: bool = True,
    include_incomplete: bool = False,
    known_suites: Iterable[str] | None = None,
) -> LogRows:
    """All rows of the logs under `paths` (see the module docstring); an already read `LogRows` passes through.

    `mode="summaries"` (the report) reads Inspect's sample summaries; `strict` turns a missing path, an
    empty folder and an unusable log named explicitly into a `CatalogError`, and so is a read with no usable log.
    A log that did not complete (status error, cancelled, started) is read and listed but its rows are held out
    of `suite()` (`excluded`, with why) unless `include_incomplete`; named explicitly, it is a `CatalogError`.
    With `known_suites`, a log recording another suite is skipped (named explicitly: an error), as is one with no scores.
    """
    if isinstance(paths, LogRows):
        return paths
    frames: dict[str, list[pd.DataFrame]] = {}
    headers: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    for first, second in iter_logs(paths, suites=suites, progress=progress, mode=mode, labels=labels, strict=strict,
                                   use_cache=use_cache, known_suites=known_suites):
        if isinstance(first, LogHeader):
            headers.append(first.row())
            # One frame per log, so a log's row dicts are freed before the next log is read.
            frames.setdefault(str(first.suite), []).append(second if isinstance(second, pd.DataFrame) else pd.DataFrame(second))
        else:
            skipped.append((first, second))  # type: ignore[arg-type]
    by_suite = {suite: pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0] for suite, parts in frames.items()}
    logs = pd.DataFrame(headers) if headers else pd.DataFrame(columns=list(LOG_COLUMNS))
    named = frozenset(explicit_files(paths)) if strict else frozenset()
    excluded: dict[str, str] = {}
    for header in headers:
        why = None if include_incomplete else incomplete_reason(str(header["status"]), int(header["samples"]))
        if why is not None:
            if header["log"] in named:
                raise CatalogError(header["log"], why)
            excluded[header["log"]] = why
    if strict and not headers:
        given = ", ".join(map(str, [paths] if isinstance(paths, (str, Path)) else paths))
        reasons = "; ".join(f"{p} {why}" for p, why in skipped[:5])
        raise CatalogError(given, f"no usable clinical_cf log ({reasons})")
    return LogRows(by_suite, logs, skipped, mode=mode, excluded=excluded, named=named)


def score_columns(frame: pd.DataFrame, names: Iterable[str]) -> list[str]:
    """Value columns of the given scorers, originals first, then `inspect score --action append` copies (name1, name2…)."""
    wanted = set(names)
    found = []
    for col in frame.columns:
        if not col.startswith("score_") or col.endswith(("_metadata", "_explanation", "_answer")):
            continue
        base = col.removeprefix("score_")
        stem = base.rstrip("0123456789")
        if stem in wanted:
            found.append((int(base[len(stem):] or 0), col))
    return [col for _, col in sorted(found)]


def column(frame: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    """A column, or a column of `default` when no row has it (a field only some logs record)."""
    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


@dataclass(frozen=True)
class ScoreView:
    value: Any
    metadata: dict[str, Any]
    explanation: str | None
    answer: str | None

    @property
    def unscored(self) -> bool:
        """`Score.unscored(...)` (value NaN: an invalid or unreadable reply): excluded from metrics, as Inspect does."""
        return isinstance(self.value, float) and math.isnan(self.value)


@dataclass(frozen=True)
class SampleView:
    """A row read back as the sample it came from, for consumers that walk samples (rewards, pages, sheets)."""

    log: str
    model: str
    task: str
    id: str | int
    epoch: int
    input: str | list[dict[str, str]]
    metadata: dict[str, Any]
    scores: dict[str, ScoreView]
    store: dict[str, Any]


_SCORE_PARTS = ("_metadata", "_explanation", "_answer")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def sample_views(frame: pd.DataFrame) -> Iterator[SampleView]:
    """The rows of `frame` (from `read_logs`) as samples: absent fields are absent, not NaN."""
    if frame.empty:
        return
    cols = list(frame.columns)
    meta = [(i, c.removeprefix("metadata_")) for i, c in enumerate(cols) if c.startswith("metadata_")]
    store = [(i, c.removeprefix("store_")) for i, c in enumerate(cols) if c.startswith("store_")]
    scores = [
        (cols.index(c), cols.index(f"{c}_metadata"), cols.index(f"{c}_explanation"), cols.index(f"{c}_answer"), c.removeprefix("score_"))
        for c in cols
        if c.startswith("score_") and not c.endswith(_SCORE_PARTS) and f"{c}_metadata" in cols
    ]
    at = {name: cols.index(name) for name in ("log", "model", "task", "sample_id", "epoch", "input")}
    for values in frame.itertuples(index=False, name=None):
        yield SampleView(
            log=values[at["log"]], model=values[at["model"]], task=values[at["task"]], id=values[at["sample_id"]],
            epoch=int(values[at["epoch"]]), input=values[at["input"]],
            metadata={k: values[i] for i, k in meta if not _missing(values[i])},
            # A scorer ran on the sample exactly when its metadata column holds a dict (possibly empty).
            scores={name: ScoreView(values[v], values[m], None if _missing(values[e]) else values[e],
                                    None if _missing(values[a]) else values[a])
                    for v, m, e, a, name in scores if isinstance(values[m], dict)},
            store={k: values[i] for i, k in store if not _missing(values[i])},
        )


def suite_samples(source: str | Path | Sequence[str | Path] | LogRows | pd.DataFrame, suite: str) -> pd.DataFrame:
    """One suite's sample rows from log paths, an already read `LogRows`, or a frame of rows (as is)."""
    if isinstance(source, pd.DataFrame):
        return source
    return read_logs(source, suites=None if isinstance(source, LogRows) else [suite]).suite(suite)
