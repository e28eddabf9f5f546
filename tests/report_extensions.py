"""A table and a banner registered on a suite in the report tests (as issue-specific report pieces would be)."""

import pandas as pd


def unscored_per_model(samples: pd.DataFrame) -> pd.DataFrame:
    """Unscored judge verdicts per model (test extension)"""
    values = pd.to_numeric(samples["score_judge_direction"], errors="coerce")
    return samples.assign(unscored=values.isna()).groupby("model", as_index=False)["unscored"].sum()


def catalog_banner(logs: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    hashes = sorted(set(samples["metadata_catalog_sha256"]))
    return [f"{row.log}: suite {row.eval_suite}, {len(hashes)} catalog hash(es), {row.samples} samples" for row in logs.itertuples()]
