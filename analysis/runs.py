"""Which run of a sample a table counts: one from a complete log, error-free, newest.

Below the sections and the tables that use it (`clinical_cf.analysis.sections`, `clinical_cf.analysis.parse_quality`),
so neither imports the other for it.
"""

from __future__ import annotations

import pandas as pd


def latest_run(samples: pd.DataFrame, suite: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per model, run, sample and epoch: a rerun's sample replaces the earlier ones (as for CSS; see
    `replaced_rows`), so a second run of the same questions or episodes is not counted twice; the replaced
    rows are counted per model, with their logs, in the returned lines."""
    keys = [c for c in ("model", "judge", "run", "sample_id", "epoch") if c in samples.columns]
    if samples.empty or not {"model", "run", "sample_id", "epoch"} <= set(keys):
        return samples, []
    kept, dropped = replaced_rows(samples, keys)
    lines = [f"{suite} / {model}: {len(group)} samples of {', '.join(sorted(map(str, group['log'].unique())))} replaced by "
             "another sample of the same question and epoch (complete log first, then error-free, then newest) "
             "(label runs with --label NAME=PATH to keep both)" for model, group in dropped.groupby("model")]
    return kept, lines


def replaced_rows(samples: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, replaced): per key one row wins: from a complete log first (a log that did not complete never
    replaces a complete run), then a sample that neither errored nor hit a limit, then the newest log."""
    ok = pd.Series(True, index=samples.index)
    for col in ("error", "limit"):
        if col in samples.columns:
            ok &= samples[col].isna()
    log_ok = (samples["status"].fillna("success") == "success") if "status" in samples.columns else pd.Series(True, index=samples.index)
    order = samples.assign(_log_ok=log_ok, _complete=ok)
    order = order.sort_values([c for c in ("_log_ok", "_complete", "created", "log") if c in order.columns], kind="stable")
    kept = order.drop_duplicates(keys, keep="last").drop(columns=["_log_ok", "_complete"]).sort_index()
    return kept, samples.loc[samples.index.difference(kept.index)]
