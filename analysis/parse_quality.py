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
from clinical_cf.replies import PROVENANCES

KEYS = ["model", "judge", "run", "suite"]
COLUMNS = [*KEYS, "samples", "replies", *PROVENANCES]


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
    from clinical_cf.suites import SUITES

    name = task.split("/")[-1]
    return next((s.name for s in SUITES.values() if name in s.tasks), name)


def row_provenances(row: Any, metadata_columns: list[str]) -> list[str]:
    """The provenance of every reply a sample's scorers read (the first scorer that recorded one)."""
    for column in metadata_columns:
        parse = _metadata(row.get(column)).get("parse")
        if isinstance(parse, str):
            return [parse]
        if isinstance(parse, dict):
            return [str(v) for v in parse.values()]
    return []


def parse_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Share of replies read each way (json, repaired, field, markdown, prose, invalid, unreadable) per model, judge, run and suite.

    Keyed like every other table: two judges' logs of one model, or two labelled runs, are separate rows. A rerun of
    the same sample and epoch under the same key counts once (the latest complete sample, as the tables keep);
    `samples` counts sample epochs, `replies` the replies read (a CSS sample has two arms).
    """
    metadata_columns = [c for c in frame.columns if c.startswith("score_") and c.endswith("_metadata")]
    if frame.empty or not metadata_columns:
        return pd.DataFrame(columns=COLUMNS)
    frame, _ = latest_run(frame, "parse")
    counts: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    samples: Counter[tuple[str, str, str, str]] = Counter()
    for row in frame.to_dict("records"):
        suite = row.get("suite") if isinstance(row.get("suite"), str) else _suite_of(str(row.get("task_name", "")))
        key = (str(row.get("model")), _text(row.get("judge")), _text(row.get("run")), suite)
        samples[key] += 1
        for provenance in row_provenances(row, metadata_columns):
            counts[key][provenance] += 1
    rows = []
    for key, seen in sorted(counts.items()):
        total = sum(seen.values())
        rows.append({**dict(zip(KEYS, key, strict=True)), "samples": samples[key], "replies": total,
                     **{p: seen.get(p, 0) / total for p in PROVENANCES}})
    return pd.DataFrame(rows, columns=COLUMNS)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)
