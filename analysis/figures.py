"""Static figures for the CSS report (PNG, matplotlib): the paper's Figures 1-3.

Interactive views belong to `inspect view` and inspect-viz; these are the figures a report
or paper needs as files.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: figures are written to files

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


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


def rank_disagreement(table2: pd.DataFrame, path: Path) -> Path:
    """Figure 1: a slope chart from each entry's CMS rank to its CSS rank, one panel per judge (ranks are within a judge).

    The rank axis has whole-rank ticks (1 = best at the top); entries tied at a rank share one label.
    """
    from matplotlib.ticker import MaxNLocator

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
        ax.set_ylim(len(group) + 0.5, 0.5)  # rank 1 at the top
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("rank (1 = best)")
        ax.set_title(f"CMS vs CSS ranking{f' (judge {_short(str(judge))})' if judge else ''}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def family_small_multiples(table3: pd.DataFrame, path: Path) -> Path:
    """Figure 2: CSS per entry (model, judge, run) in one panel per family, with case-clustered 95% CIs."""
    families = sorted(table3["family"].unique())
    fig, axes = plt.subplots(1, len(families), figsize=(2.8 * len(families), 3.6), sharey=True, squeeze=False)
    for ax, family in zip(axes[0], families, strict=False):
        rows = table3[table3["family"] == family].sort_values([c for c in ("judge", "model", "run") if c in table3.columns])
        errors = [rows["css"] - rows["ci_low"], rows["ci_high"] - rows["css"]]
        ax.bar(range(len(rows)), rows["css"], yerr=errors, capsize=3, color="#4c72b0")
        labels = [_entry_label(r) + (f"\n{_short(str(r.judge))}" if "judge" in table3.columns else "") for r in rows.itertuples()]
        ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=7)
        ax.set_title(f"Family {family}")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("CSS")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
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
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
