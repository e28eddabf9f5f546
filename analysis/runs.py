"""Which run of a sample a table counts: the latest complete one.

Below the sections and the tables that use it (`clinical_cf.analysis.sections`, `clinical_cf.analysis.parse_quality`),
so neither imports the other for it.
"""

from __future__ import annotations

import pandas as pd


def latest_run(samples: pd.DataFrame, suite: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per model, run, sample and epoch: a rerun's latest complete sample replaces the earlier ones
    (as for CSS), so a second run of the same questions or episodes is not counted twice; the replaced
    rows are counted per model in the returned lines."""
    keys = [c for c in ("model", "judge", "run", "sample_id", "epoch") if c in samples.columns]
    if samples.empty or not {"model", "run", "sample_id", "epoch"} <= set(keys):
        return samples, []
    complete = samples["error"].isna() if "error" in samples.columns else pd.Series(True, index=samples.index)
    order = samples.assign(_complete=complete)
    order = order.sort_values([c for c in ("_complete", "created", "log") if c in order.columns], kind="stable")
    kept = order.drop_duplicates(keys, keep="last").drop(columns=["_complete"]).sort_index()
    dropped = samples.loc[samples.index.difference(kept.index)]
    lines = [f"{suite} / {model}: {n} samples of an earlier run of the same questions replaced by the latest complete run "
             "(label runs with --label NAME=PATH to keep both)" for model, n in dropped.groupby("model").size().items()]
    return kept, lines
