"""Markdown rendering of result tables, shared by the comparison report and the per-suite analyses."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pandas as pd

NO_DATA = "no data"
"""What a missing number shows: a measured zero prints as 0, a value nobody measured never does."""


def format_number(value) -> str:
    """How a number reads in every rendered table: integers as integers (a rank of 2, a count of 215), others to at
    most three decimals without trailing zeros (2.5, 0.372), a value nobody measured as 'no data'."""
    if value is None or pd.isna(value):
        return NO_DATA
    if isinstance(value, bool):
        return str(value)
    number = float(value)
    if number.is_integer():
        return str(int(number))
    text = f"{number:.3f}".rstrip("0").rstrip(".")
    return text if text not in ("0", "-0") else f"{number:.2g}"  # 0.0004 is not 0


def shown_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the reader sees it: numbers through `format_number`, missing text blank, everything a string."""
    shown = table.copy()
    for col in shown.columns:
        if pd.api.types.is_bool_dtype(shown[col]):
            shown[col] = shown[col].map(str)
        elif pd.api.types.is_numeric_dtype(shown[col]):
            shown[col] = shown[col].map(format_number)
        else:
            # A missing cell of a numeric column was not measured ('no data'); missing text (a run label) is blank.
            numeric = shown[col].map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and not pd.isna(v)).any()
            missing = NO_DATA if numeric else ""
            shown[col] = shown[col].map(lambda v, missing=missing: missing if v is None or (isinstance(v, float) and pd.isna(v))
                                        else format_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v))
    return shown


def markdown_table(table: pd.DataFrame) -> str:
    """A pipe table; numbers as `format_number` shows them, missing numbers as 'no data', missing text blank."""
    if table.empty:
        return "(no rows)"
    shown = shown_cells(table)
    header = "| " + " | ".join(map(str, shown.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in shown.columns) + " |"
    # A pipe or a line break inside a cell (a run label, a rationale) would end the cell or the row.
    body = ["| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join([header, rule, *body])


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP's CSV-injection list)."""


def neutralised(value):
    """A text cell that a spreadsheet would run as a formula (`=HYPERLINK(...)` as a run label), quoted with a
    leading apostrophe so it reads as the text it is; everything else as is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def safe_for_spreadsheets(table: pd.DataFrame) -> pd.DataFrame:
    """The table with every text cell `neutralised` (numbers are numbers: only text columns are touched)."""
    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(neutralised)
    out.columns = [neutralised(str(c)) for c in out.columns]
    return out


def write_table(table: pd.DataFrame, path, kind: str = "csv") -> None:
    """A table written for people and spreadsheets: text cells neutralised, atomically (temp file + rename)."""

    target = Path(path)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    safe = safe_for_spreadsheets(table)
    try:
        if kind == "parquet":
            safe.to_parquet(partial, index=False)
        else:
            safe.to_csv(partial, index=False)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
