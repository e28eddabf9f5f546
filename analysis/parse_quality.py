"""Per-model parse-quality table: how each model's replies were read, per suite.

Every scorer records the provenance of what it read in its score metadata under `parse`: one
value per reply (MedPIC, workflow) or one per arm (`{"baseline": ..., "counterfactual": ...}` for
CSS, `{"baseline": ..., "perturbed": ...}` for sensitivity); invalid replies are unscored with
reason `invalid_output` and still carry `parse: "invalid"`. A score that rests mostly on repaired,
markdown or prose readings is a weaker number than one read from the requested JSON, and a model
with many invalid replies has fewer scored samples than it seems: the table makes both visible.

`parse_table(frame)` takes a per-sample DataFrame as `inspect_ai.analysis.samples_df` builds it
with `SampleSummary + SampleScores + EvalModel + EvalTask` columns (`model`, `task_name`,
`score_<scorer>_metadata`; a `suite` column is used when present) and returns one row per
(model, suite).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

import pandas as pd

from clinical_cf.analysis.runs import latest_run
from clinical_cf.registration import registration_check
from clinical_cf.replies import PROVENANCES
from clinical_cf.suites import SUITES

KEYS = ["model", "judge", "run", "suite"]
OUTCOMES = ["samples", "scored", "error", "limit"]
COLUMNS = [*KEYS, *OUTCOMES, "replies", *PROVENANCES, "unreadable_reasons", "invalid_reasons", "read_by"]


def _metadata(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            data = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _suite_of(task: str) -> str:
    name = task.split("/")[-1]
    return next((s.name for s in SUITES.values() if name in s.tasks), name)


def verdict_record(row: Any, metadata_columns: list[str]) -> tuple[str | None, dict[str, Any]]:
    """The score that records how every reply of a sample was read: the one whose `parse` names the most replies
    (both arms of a CSS verdict before the one-arm CMS), ties by scorer name; `inspect score --action append`
    copies (`name1`, ...) are never it. The same score whatever other score columns a folder's logs hold."""
    best: tuple[int, str] | None = None
    found: tuple[str | None, dict[str, Any]] = (None, {})
    for column in metadata_columns:
        name = column.removeprefix("score_").removesuffix("_metadata")
        if name[-1:].isdigit() and f"score_{name.rstrip('0123456789')}_metadata" in metadata_columns:
            continue  # an appended re-scoring: its original is the record
        meta = _metadata(row.get(column))
        parse = meta.get("parse")
        width = len(parse) if isinstance(parse, dict) else 1 if isinstance(parse, str) else 0
        if width and (best is None or (-width, name) < best):
            best, found = (-width, name), (column, meta)
    return found


BOOKKEEPING_SCORES = frozenset({f"score_{registration_check.__name__}_metadata"})
"""Scores every sample gets whatever its reply (the registration check's `inputs_consistent`): never a reading."""


def _original_scores(metadata_columns: list[str]) -> list[str]:
    """The score metadata columns less the copies `inspect score --action append` adds (`name1`, ...) and the
    bookkeeping scores (a sample whose reply was unreadable still has a registration check of 1)."""
    return [
        c for c in metadata_columns
        if c not in BOOKKEEPING_SCORES
        and not ((name := c.removeprefix("score_").removesuffix("_metadata"))[-1:].isdigit()
                 and f"score_{name.rstrip('0123456789')}_metadata" in metadata_columns)
    ]


def row_provenances(row: Any, metadata_columns: list[str]) -> list[str]:
    """The provenance of every reply a sample's verdict read (see `verdict_record`)."""
    parse = verdict_record(row, metadata_columns)[1].get("parse")
    if isinstance(parse, str):
        return [parse]
    if isinstance(parse, dict):
        return [str(v) for v in parse.values()]
    return []


def _reasons(value: Any) -> list[str]:
    """Reason codes recorded for unreadable or invalid replies: a str for one reply, a dict per arm."""
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, dict):
        return [str(v) for v in value.values() if v]
    return []


def _joined(counts: Counter) -> str:
    return "; ".join(f"{k}: {n}" for k, n in sorted(counts.items()))


def _absent(value: Any) -> bool:
    """No value: None, NaN, pandas' NA, or the empty string `samples_df` writes for a sample without an error."""
    return value is None or value is pd.NA or value == "" or (isinstance(value, float) and value != value)


def parse_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Parse quality: samples scored, errored or stopped by a limit, and replies read each way, per model, judge, run and suite.

    Keyed like every other table: two judges' logs of one model, or two labelled runs, are separate rows. A rerun of
    the same sample and epoch under the same key counts once (the sample the tables keep). `samples` counts sample
    epochs: `scored` ones, those that ended in an `error` (provider error, timeout) and those a `limit` stopped (message,
    token, time: Inspect's record), which are neither replies nor invalid replies. `replies` counts the replies read in
    the rest (a CSS verdict records both arms), each share (json, repaired, field, reader, ..., invalid, unreadable) is
    of `replies`, with the unreadable and invalid replies' reasons and how the scores were read (`read_by`).
    """
    metadata_columns = sorted(c for c in frame.columns if c.startswith("score_") and c.endswith("_metadata"))
    if frame.empty or not metadata_columns:
        return pd.DataFrame(columns=COLUMNS)
    frame, _ = latest_run(frame, "parse")
    counts: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    outcomes: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    unreadable: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    invalid: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    read_by: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    # Only the columns read, row by row (a to_dict of every column costs seconds at 30,000 samples).
    needed = [c for c in ("suite", "task_name", "model", "judge", "run", "error", "limit") if c in frame.columns]
    needed += metadata_columns + [c.removesuffix("_metadata") for c in metadata_columns if c.removesuffix("_metadata") in frame.columns]
    names = list(dict.fromkeys(needed))
    for values in zip(*(frame[c].tolist() for c in names), strict=True):
        row = dict(zip(names, values, strict=True))
        suite = row.get("suite") if isinstance(row.get("suite"), str) else _suite_of(str(row.get("task_name", "")))
        key = (str(row.get("model")), _text(row.get("judge")), _text(row.get("run")), suite)
        outcomes[key]["samples"] += 1
        if not _absent(row.get("error")):
            outcomes[key]["error"] += 1
            continue
        if not _absent(row.get("limit")):
            outcomes[key]["limit"] += 1
            continue
        column, meta = verdict_record(row, metadata_columns)
        provenances = row_provenances(row, metadata_columns)
        if column is not None:
            # Scored means read: a reply the record calls unreadable or invalid is not scored, even where the scorer
            # counts it as a wrong answer (workflow's `accuracy`), so share_scored follows the parse record.
            scored = not _absent(row.get(column.removesuffix("_metadata"))) and not {"unreadable", "invalid"} & set(provenances)
        else:  # no score records how it read the reply (`parse`): scored when a score of the sample has a value
            scored = any(not _absent(row.get(c.removesuffix("_metadata"))) for c in _original_scores(metadata_columns))
        if scored:
            outcomes[key]["scored"] += 1
        for provenance in provenances:
            counts[key][provenance] += 1
        reasons = _reasons(meta.get("unreadable"))
        if not reasons and meta.get("parse") == "unreadable":
            reasons = _reasons(meta.get("unreadable_reason")) or ["unreadable"]
        unreadable[key].update(reasons)
        invalid[key].update(_reasons(meta.get("invalid")))
        if meta.get("read_by"):
            read_by[key][str(meta["read_by"])] += 1
    rows = []
    for key in sorted(outcomes):
        seen = counts[key]
        total = sum(seen.values())
        rows.append({**dict(zip(KEYS, key, strict=True)), **{k: outcomes[key].get(k, 0) for k in OUTCOMES}, "replies": total,
                     **{p: seen.get(p, 0) / total if total else float("nan") for p in PROVENANCES},
                     "unreadable_reasons": _joined(unreadable[key]), "invalid_reasons": _joined(invalid[key]),
                     "read_by": _joined(read_by[key])})
    return pd.DataFrame(rows, columns=COLUMNS)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)
