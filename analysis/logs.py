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

import math

import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log

EXCLUDED_FIELDS: frozenset[str] = frozenset({"events", "messages", "attachments", "output", "timelines"})
"""EvalSample fields no consumer reads; `read_eval_log` skips them while parsing."""

LOG_COLUMNS = ("log", "suite", "model", "task", "task_id", "status", "samples")


def list_logs(paths: str | Path | Sequence[str | Path]) -> list[str]:
    """Log files as given; folders and other listable locations expanded to the Inspect logs inside them.

    Paths come back without Inspect's `file://` prefix, so a local log is named the way the user typed it.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    out: list[str] = []
    for item in items:
        text = str(item)
        if text.endswith((".eval", ".json")):
            out.append(text.removeprefix("file://"))  # a log file, local or remote (read_eval_log reads both)
        elif Path(text.removeprefix("file://")).is_dir() or "://" in text:
            out += [info.name.removeprefix("file://") for info in list_eval_logs(text)]
        else:
            out.append(text)
    return list(dict.fromkeys(out))


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

    def row(self) -> dict[str, Any]:
        """The per-log row: provenance columns and every eval metadata field as `eval_<key>`."""
        base = {"log": self.path, "suite": self.suite, "model": self.model, "task": self.task,
                "task_id": self.task_id, "status": self.status, "samples": self.samples}
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


def sample_row(header: LogHeader, sample: EvalSample, intern: _Interner | None = None) -> dict[str, Any]:
    """One flat row for a sample: provenance, input, metadata_*, score_* and store_* columns."""
    keep = intern or _Interner()
    row: dict[str, Any] = {
        "log": header.path, "suite": header.suite, "model": header.model, "task": header.task,
        "sample_id": sample.id, "epoch": sample.epoch, "uuid": sample.uuid, "error": sample.error,
        "input": keep(_input(sample.input)),
    }
    for key, value in (sample.metadata or {}).items():
        row[f"metadata_{key}"] = keep(value)
    for name, score in (sample.scores or {}).items():
        row[f"score_{name}"] = score.value
        row[f"score_{name}_metadata"] = keep(score.metadata or {})
        row[f"score_{name}_explanation"] = keep(score.explanation)
        row[f"score_{name}_answer"] = keep(score.answer)
    for key, value in (sample.store or {}).items():
        row[f"store_{key}"] = keep(value)
    return row


def _header(path: str, log: EvalLog) -> LogHeader:
    metadata = dict(log.eval.metadata or {})
    suite = metadata.get("suite")
    return LogHeader(path=path, suite=str(suite) if suite is not None else None, model=log.eval.model,
                     task=log.eval.task, task_id=log.eval.task_id, status=log.status, metadata=metadata,
                     samples=len(log.samples or []))


def iter_logs(
    paths: str | Path | Sequence[str | Path],
    suites: Iterable[str] | None = None,
    exclude_fields: Iterable[str] = EXCLUDED_FIELDS,
    progress: bool = False,
) -> Iterator[tuple[LogHeader, list[dict[str, Any]]] | tuple[str, str]]:
    """Per log, in order: (header, sample rows), or (path, why it was skipped).

    With `suites`, logs of other suites are skipped after reading only their header.
    """
    files = list_logs(paths)
    wanted = set(suites) if suites is not None else None
    intern = _Interner()
    for i, path in enumerate(files, start=1):
        if progress and len(files) > 5:
            print(f"reading log {i}/{len(files)}", file=sys.stderr)
        try:
            if wanted is not None:
                suite = (read_eval_log(path, header_only=True).eval.metadata or {}).get("suite")
                if suite not in wanted:
                    yield path, f"is not a {' or '.join(sorted(wanted))} log (its suite is {suite!r})"
                    continue
            log = read_eval_log(path, exclude_fields=set(exclude_fields))
        except Exception as ex:  # noqa: BLE001 - a corrupt or unreadable log must not stop the report; it is named
            yield path, f"cannot be read: {type(ex).__name__}: {ex}"
            continue
        header = _header(path, log)
        if header.suite is None:
            yield path, ("is not a CSS log, nor a log of any clinical_cf suite "
                         "(its eval metadata records no `suite`)")
            continue
        if not log.samples:
            yield path, "has no samples"
            continue
        rows = [sample_row(header, sample, intern) for sample in log.samples]
        del log  # released before the next log is opened
        yield header, rows


@dataclass
class LogRows:
    """Every usable log's sample rows (one frame per suite) and header, and the logs skipped with why."""

    by_suite: dict[str, pd.DataFrame]
    logs: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def suite(self, name: str) -> pd.DataFrame:
        """The sample rows of one suite's logs (empty when none was read)."""
        return self.by_suite.get(name, pd.DataFrame())

    def suite_logs(self, name: str) -> pd.DataFrame:
        """The per-log rows (eval metadata as `eval_<key>`) of one suite's logs."""
        if self.logs.empty:
            return self.logs
        return self.logs[self.logs["suite"] == name].reset_index(drop=True)

    @property
    def samples(self) -> pd.DataFrame:
        """Every suite's rows in one frame (columns a suite does not record are empty there)."""
        frames = [f for f in self.by_suite.values() if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def suites(self) -> list[str]:
        return list(self.by_suite)


def read_logs(
    paths: str | Path | Sequence[str | Path] | LogRows,
    suites: Iterable[str] | None = None,
    progress: bool = False,
) -> LogRows:
    """All rows of the logs under `paths` (see the module docstring); an already read `LogRows` passes through."""
    if isinstance(paths, LogRows):
        return paths
    frames: dict[str, list[pd.DataFrame]] = {}
    headers: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    for first, second in iter_logs(paths, suites=suites, progress=progress):
        if isinstance(first, LogHeader):
            headers.append(first.row())
            # One frame per log, so a log's row dicts are freed before the next log is read.
            frames.setdefault(str(first.suite), []).append(pd.DataFrame(second))
        else:
            skipped.append((first, second))  # type: ignore[arg-type]
    by_suite = {suite: pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0] for suite, parts in frames.items()}
    logs = pd.DataFrame(headers) if headers else pd.DataFrame(columns=list(LOG_COLUMNS))
    return LogRows(by_suite, logs, skipped)


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
