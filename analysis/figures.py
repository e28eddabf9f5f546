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


def rank_disagreement(table2: pd.DataFrame, path: Path) -> Path:
    """Figure 1: a slope chart from each model's CMS rank to its CSS rank."""
    fig, ax = plt.subplots(figsize=(5, 0.5 * len(table2) + 2))
    for row in table2.itertuples():
        ax.plot([0, 1], [row.cms_rank, row.css_rank], marker="o")
        ax.annotate(_short(row.model), (0, row.cms_rank), xytext=(-6, 0), textcoords="offset points", ha="right", va="center", fontsize=8)
        ax.annotate(_short(row.model), (1, row.css_rank), xytext=(6, 0), textcoords="offset points", ha="left", va="center", fontsize=8)
    ax.set_xticks([0, 1], ["CMS rank", "CSS rank"])
    ax.set_xlim(-0.8, 1.8)
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title("CMS vs CSS ranking")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def family_small_multiples(table3: pd.DataFrame, path: Path) -> Path:
    """Figure 2: CSS per model in one panel per family, with case-clustered 95% CIs."""
    families = sorted(table3["family"].unique())
    fig, axes = plt.subplots(1, len(families), figsize=(2.6 * len(families), 3.2), sharey=True, squeeze=False)
    for ax, family in zip(axes[0], families):
        rows = table3[table3["family"] == family].sort_values("model")
        errors = [rows["css"] - rows["ci_low"], rows["ci_high"] - rows["css"]]
        ax.bar(range(len(rows)), rows["css"], yerr=errors, capsize=3, color="#4c72b0")
        ax.set_xticks(range(len(rows)), [_short(m) for m in rows["model"]], rotation=60, ha="right", fontsize=7)
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
    ax.set_xticks(list(x), [f"{_short(m)}\n(n={n})" for m, n in zip(rows["model"], rows["n"])], fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("CSS")
    ax.set_title(f"Family {family}: single-shot vs tool-using agent")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
