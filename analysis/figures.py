"""Static figures for the CSS report (PNG, matplotlib): the paper's Figures 1-3.

Interactive views belong to `inspect view` and inspect-viz; these are the figures a report
or paper needs as files.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.patches import Patch

matplotlib.use("Agg")  # no display: figures are written to files

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from clinical_cf.analysis.tables import format_number  # noqa: E402


def save_png(fig, path: Path) -> None:
    """`fig` written as PNG at `path`. A write that fails (a full disk, a file-size limit) names `path`: the
    imaging library removes the cut file and raises an error that names none."""
    try:
        fig.savefig(path, dpi=120)
    except OSError as ex:
        ex.filename = ex.filename or str(path)
        raise


def _short(model: str) -> str:
    return model.split("/", 1)[-1]


def _entry_label(row) -> str:
    """A figure label for one table row: the model, and the run when runs are labelled."""
    run = getattr(row, "run", "") or ""
    return _short(row.model) + (f" [{run}]" if isinstance(run, str) and run else "")


def _stacked_labels(ax, x: float, by_rank: dict[float, list[str]], ha: str, offset: int) -> None:
    """One label per rank, tied entries joined, so labels at one rank never draw over each other."""
    for rank, names in sorted(by_rank.items()):
        ax.annotate(", ".join(sorted(names)), (x, rank), xytext=(offset, 0), textcoords="offset points", ha=ha,
                    va="center", fontsize=8)


def rank_figure(table2: pd.DataFrame):
    """Figure 1 as a matplotlib figure: a slope chart from each entry's CMS rank to its CSS rank, one panel per judge
    (ranks are within a judge).

    The rank axis has one tick per whole rank, 1 (best) at the top, also for a one-entry panel (where a tick locator
    would draw fractional ranks); entries tied at a rank share one label.
    """
    judges = list(table2.groupby("judge")) if "judge" in table2.columns else [("", table2)]
    tallest = max(len(group) for _, group in judges)
    fig, axes = plt.subplots(1, len(judges), figsize=(5.5 * len(judges), 0.5 * tallest + 2.2), squeeze=False)
    for ax, (judge, group) in zip(axes[0], judges, strict=False):
        left: dict[float, list[str]] = {}
        right: dict[float, list[str]] = {}
        for row in group.itertuples():
            ax.plot([0, 1], [row.cms_rank, row.css_rank], marker="o")
            left.setdefault(row.cms_rank, []).append(_entry_label(row))
            right.setdefault(row.css_rank, []).append(_entry_label(row))
        _stacked_labels(ax, 0, left, "right", -6)
        _stacked_labels(ax, 1, right, "left", 6)
        ax.set_xticks([0, 1], ["CMS rank", "CSS rank"])
        ax.set_xlim(-1.2, 2.2)
        lowest = int(max(len(group), *[r for r in (*left, *right) if r == r]))
        ax.set_ylim(lowest + 0.5, 0.5)  # rank 1 at the top
        ax.set_yticks(range(1, lowest + 1))
        ax.set_ylabel("rank (1 = best)")
        ax.set_title(f"CMS vs CSS ranking{f' (judge {_short(str(judge))})' if judge else ''}", fontsize=10)
    fig.tight_layout()
    return fig


def rank_disagreement(table2: pd.DataFrame, path: Path) -> Path:
    """Figure 1 (`rank_figure`) written as a PNG."""
    fig = rank_figure(table2)
    save_png(fig, path)
    plt.close(fig)
    return path


CONTROL_AXIS = "judge score on controls (1 = held)"
"""The N panel's axis: a control's score is how well the recommendations held, not CSS."""


def family_figure(table3: pd.DataFrame):
    """Figure 2 as a matplotlib figure: one panel per family, one row per model (and run), one bar per judge.

    Bars are horizontal, so each entry's label has its own line whatever the number of models; the judges
    of one entry sit side by side in the judges' colours (legend), so a judge's scale is read across
    entries, never mixed with another's. Whiskers are the case-clustered 95% interval.
    """

    families = sorted(table3["family"].unique())
    has_judge = "judge" in table3.columns
    frame = table3.assign(_entry=[_entry_label(r) for r in table3.itertuples()],
                          _judge=table3["judge"].astype(str) if has_judge else "")
    entries = sorted(frame["_entry"].unique())
    judges = sorted(frame["_judge"].unique())
    colours = plt.get_cmap("tab10")
    ncols = min(len(families), 3)
    nrows = -(-len(families) // ncols)
    band = 0.8 / len(judges)
    height = max(2.5, 0.28 * len(entries) * max(1.0, 0.7 * len(judges)) + 1.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols + 1.5, height * nrows), squeeze=False, sharey=True)
    for index, family in enumerate(families):
        ax = axes[index // ncols][index % ncols]
        rows = frame[frame["family"] == family]
        for k, judge in enumerate(judges):
            mine = rows[rows["_judge"] == judge].set_index("_entry")
            y = [i - 0.4 + band * (k + 0.5) for i, e in enumerate(entries) if e in mine.index]
            hit = [e for e in entries if e in mine.index]
            if not hit:
                continue
            css = mine.loc[hit, "css"]
            errors = [(css - mine.loc[hit, "ci_low"]).clip(lower=0), (mine.loc[hit, "ci_high"] - css).clip(lower=0)]
            ax.barh(y, css, height=band * 0.9, xerr=errors, capsize=2, color=colours(k % 10))
            for at, value in zip(y, css, strict=True):  # a measured 0 is a number on the axis, not a missing bar
                if value == value:
                    ax.text(0.01, at, format_number(value), va="center", fontsize=6, color="black")
        ax.set_yticks(range(len(entries)), entries, fontsize=7)
        ax.set_ylim(len(entries) - 0.5, -0.5)  # first entry at the top
        ax.set_xlim(0, 1)
        ax.set_title(f"Family {family}" + (" (negative controls)" if family == "N" else ""), fontsize=9)
        ax.set_xlabel(CONTROL_AXIS if family == "N" else "CSS", fontsize=8)
    for index in range(len(families), nrows * ncols):
        axes[index // ncols][index % ncols].set_visible(False)
    if has_judge:
        fig.legend(handles=[Patch(color=colours(k % 10), label=f"judge {_short(j)}") for k, j in enumerate(judges)],
                   loc="upper center", ncol=min(len(judges), 4), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93 if has_judge else 1))
    return fig


def family_small_multiples(table3: pd.DataFrame, path: Path) -> Path:
    """Figure 2 (`family_figure`) written as PNG."""
    fig = family_figure(table3)
    save_png(fig, path)
    plt.close(fig)
    return path


def agent_lift(lift: pd.DataFrame, path: Path, family: str = "D") -> Path:
    """Figure 3: single-shot vs agent CSS per model on one family (paired tuples)."""
    rows = lift[lift["family"] == family].sort_values("model")
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows) + 2), 3.2))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], rows["css_single_shot"], width=0.4, label="single-shot")
    ax.bar([i + 0.2 for i in x], rows["css_agent"], width=0.4, label="agent")
    ax.set_xticks(list(x), [f"{_short(m)}\n(n={n})" for m, n in zip(rows["model"], rows["n"], strict=False)], fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("CSS")
    ax.set_title(f"Family {family}: single-shot vs tool-using agent")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path


def invariance_attributes(table: pd.DataFrame, path: Path) -> Path:
    """Invariance controls (issue 47): per attribute, each entry's mean movement with its 90% case-clustered
    interval and the equivalence margin it is tested against; an interval crossing the margin is not equivalent."""
    attributes = list(dict.fromkeys(table["attribute"]))
    entries = list(dict.fromkeys(_entry_label(r) + (f" / {r.judge}" if "judge" in table.columns else "") for r in table.itertuples()))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(attributes) * max(1, len(entries)) + 1.2))
    y = 0
    ticks, labels = [], []
    for attribute in attributes:
        for row in table[table["attribute"] == attribute].itertuples():
            label = _entry_label(row) + (f" / {row.judge}" if "judge" in table.columns else "")
            colour = "tab:green" if row.equivalent else "tab:red"
            ax.errorbar(row._asdict()["movement"], y, xerr=[[row.movement - row.ci90_low], [row.ci90_high - row.movement]],
                        fmt="o", color=colour, capsize=3)
            ax.plot([row.margin, row.margin], [y - 0.4, y + 0.4], color="grey", linestyle="--", linewidth=1)
            ticks.append(y)
            labels.append(f"{attribute}: {label}")
            y += 1
        y += 0.5
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("movement (1 - judge score); dashed: equivalence margin; red: not equivalent", fontsize=8)
    ax.set_title("Invariance controls by attribute (90% case-clustered intervals)", fontsize=9)
    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path
