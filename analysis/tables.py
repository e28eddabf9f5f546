"""Markdown rendering of result tables, shared by the comparison report and the per-suite analyses."""

from __future__ import annotations

import pandas as pd

NO_DATA = "no data"
"""What a missing number shows: a measured zero prints as 0, a value nobody measured never does."""


def markdown_table(table: pd.DataFrame) -> str:
    """A pipe table; numbers to three decimals (integers as integers), missing numbers as 'no data'."""
    if table.empty:
        return "(no rows)"
    shown = table.copy()
    for col in shown.select_dtypes("number").columns:
        shown[col] = shown[col].map(lambda v: NO_DATA if pd.isna(v) else f"{v:.3f}" if not float(v).is_integer() else f"{int(v)}")
    header = "| " + " | ".join(map(str, shown.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in shown.columns) + " |"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join([header, rule, *body])
