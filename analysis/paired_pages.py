"""Side-by-side pages for MedPIC pairs and workflow episodes, like the CSS tuples page.

MedPIC: one row per linked pair (the activation question and its deactivation partner, which differ
only in the patient information that switches the rule), one column per model: each member's gold
answer, the model's selection and whether it was right. Workflow: one row per episode group (the
same seed and parameterization under each controlled variant: clean, missing, stale, conflict,
late risk), one column per model: the action taken in each variant against the acceptable set.
Both come from the rows the report already holds (`medpic_rows`, `workflow_rows`), so nothing is
read again; every cell names its log and sample. Pages are Jinja templates with autoescape.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from clinical_cf.analysis.html import render


def _cell(rows: pd.DataFrame, label_col: str, shown: list[tuple[str, str]]) -> list[dict]:
    out = []
    for row in rows.sort_values(label_col).itertuples():
        out.append({"label": str(getattr(row, label_col)), "correct": bool(row.correct),
                    "fields": [(title, _shown(getattr(row, col))) for title, col in shown],
                    "src": f"{row.log}#{getattr(row, 'sample_id', getattr(row, 'episode_id', ''))} (epoch {row.epoch})"})
    return out


def _shown(value) -> str:
    """A cell's text: a value nobody read (None, or NaN once pandas holds it) reads 'none read', never 'nan'."""
    if value is None or (isinstance(value, float) and value != value):
        return "none read"
    return str(value)


def _page(title: str, intro: str, groups: list[dict], models: list[str], file: Path) -> Path:
    file.write_text(render("paired.html.j2", title=title, intro=intro, groups=groups, models=models), encoding="utf-8")
    return file


def medpic_pairs_page(rows: pd.DataFrame, file: str | Path) -> Path | None:
    """The MedPIC pairs page (first epoch of each member), or None when no complete pair was scored."""
    paired = rows[rows["pair_id"].notna() & (rows["epoch"] == rows["epoch"].min())] if not rows.empty else rows
    if paired.empty:
        return None
    models = sorted(paired["model"].unique())
    groups = []
    for pair_id, group in paired.groupby("pair_id", sort=True):
        cells = [_cell(group[group["model"] == m], "operation", [("gold", "answer"), ("selected", "selected")]) or None
                 for m in models]
        groups.append({"key": str(pair_id), "note": f"rule {group['rule_id'].iloc[0]}", "cells": cells})
    return _page("MedPIC pairs side by side",
                 "Each row is a linked pair: the activation question and its deactivation partner differ only in the "
                 "patient information that switches the rule. Per model: the gold set, the selection, right or wrong.",
                 groups, models, Path(file))


def workflow_episodes_page(rows: pd.DataFrame, file: str | Path) -> Path | None:
    """The workflow page: per seed and parameterization, each variant's action per model (first epoch)."""
    if rows.empty:
        return None
    first = rows[rows["epoch"] == rows["epoch"].min()].copy()
    first["group"] = first["seed_id"].astype(str) + " / " + first["parameterization"].astype(str)
    first["acceptable"] = first["acceptable_actions"].map(", ".join)
    models = sorted(first["model"].unique())
    groups = []
    for key, group in first.groupby("group", sort=True):
        cells = [_cell(group[group["model"] == m], "variant", [("acceptable", "acceptable"), ("action", "action")]) or None
                 for m in models]
        groups.append({"key": key, "note": f"task class {group['task_class'].iloc[0]}", "cells": cells})
    return _page("Workflow episodes side by side",
                 "Each row is one seed and parameterization under every controlled variant (clean and the perturbed "
                 "ones). Per model: the final action in each variant against the acceptable set.",
                 groups, models, Path(file))
