"""CSS results from Inspect logs as tidy pandas tables.

`css_samples` gives one row per scored (model, case, intervention) tuple, read through the one log
reader (`clinical_cf.analysis.logs`), so every number a table shows traces back to a sample in a log.
The comparison report (tables, figures, statistics across models) builds on these frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from clinical_cf.analysis.logs import LogRows, suite_samples

KEEP = {
    "model": "model",
    "task": "task",
    "log": "log",
    "sample_id": "sample_id",
    "epoch": "epoch",
    "metadata_case_id": "case_id",
    "metadata_cancer_type": "cancer_type",
    "metadata_split": "split",
    "metadata_family": "family",
    "metadata_intervention_id": "intervention_id",
    "metadata_mutation_mode": "mutation_mode",
    "metadata_catalog_sha256": "catalog_sha256",
}


def css_samples(logs: str | Path | Sequence[str | Path] | LogRows, judge_score: str = "judge_direction") -> pd.DataFrame:
    """One row per CSS tuple: model, task, case, family, intervention, `css` (the judge's score) and `cms`.

    Args:
        logs: Log files or directories (CSS logs are used), or rows the log reader already gave.
        judge_score: Which judge score to read (`judge_direction1` after an appended re-judging).
    """
    frame = suite_samples(logs, "css")
    if f"score_{judge_score}" not in frame.columns:
        where = "the given rows" if isinstance(logs, LogRows) else ", ".join(map(str, [logs] if isinstance(logs, (str, Path)) else logs))
        raise ValueError(f"no score named '{judge_score}' in {where}; is this a CSS log?")
    out = frame[[c for c in KEEP if c in frame.columns]].rename(columns=KEEP)
    out["css"] = pd.to_numeric(frame[f"score_{judge_score}"], errors="coerce")
    out["cms"] = pd.to_numeric(frame["score_cms"], errors="coerce") if "score_cms" in frame.columns else float("nan")
    return out.reset_index(drop=True)


def family_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Mean CSS per model (rows) and family (columns), with tuple counts; unscored tuples excluded."""
    scored = samples.dropna(subset=["css"])
    means = scored.pivot_table(index="model", columns="family", values="css", aggfunc="mean")
    counts = scored.pivot_table(index="model", columns="family", values="css", aggfunc="count")
    return means.join(counts, rsuffix="_n")


def agent_lift(single_shot: pd.DataFrame, agent: pd.DataFrame) -> pd.DataFrame:
    """Single-shot -> agent CSS per model and family, on the tuples both settings scored.

    The paper's Figure 3: the agent setting re-runs a subset, so the comparison is paired on
    (model, case, intervention); `n` is how many tuples each difference rests on.
    """
    keys = [c for c in ("model", "judge", "run") if c in single_shot.columns and c in agent.columns]
    keys += ["case_id", "intervention_id", "family"]
    paired = single_shot.dropna(subset=["css"])[keys + ["css"]].merge(
        agent.dropna(subset=["css"])[keys + ["css"]], on=keys, suffixes=("_single_shot", "_agent")
    )
    grouped = paired.groupby(keys[:-3] + ["family"])
    table = grouped[["css_single_shot", "css_agent"]].mean()
    table["lift"] = table["css_agent"] - table["css_single_shot"]
    table["n"] = grouped.size()
    return table.reset_index()
