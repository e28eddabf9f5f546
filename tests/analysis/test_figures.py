"""Figure 2 stays readable with many models and two judges: one label per entry, bars grouped by judge,
nothing drawn over anything else, and the controls' panel says what its axis is."""

import pandas as pd

from clinical_cf.analysis.figures import CONTROL_AXIS, family_figure, rank_figure


def _table(models: int) -> pd.DataFrame:
    rows = []
    for family in ("A", "D", "N"):
        for judge in ("mockllm/strict", "mockllm/lenient"):
            for i in range(models):
                css = (i % 5) / 4
                rows.append({"family": family, "model": f"provider/a-rather-long-model-name-{i:02d}", "judge": judge,
                             "run": "r1" if i % 2 else "", "css": css, "ci_low": max(0, css - 0.1), "ci_high": min(1, css + 0.1)})
    return pd.DataFrame(rows)


def _overlaps(boxes) -> list:
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]


def test_many_models_two_judges_one_label_each_no_collisions_and_the_control_axis_named():
    fig = family_figure(_table(14))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["Family A", "Family D", "Family N (negative controls)"]
    assert [ax.get_xlabel() for ax in axes] == ["CSS", "CSS", CONTROL_AXIS]
    labels = [t for t in axes[0].get_yticklabels() if t.get_text()]
    assert len(labels) == 14 and len({t.get_text() for t in labels}) == 14  # one line per model (and run)
    assert "a-rather-long-model-name-01 [r1]" in {t.get_text() for t in labels}
    assert not _overlaps([t.get_window_extent(renderer) for t in labels])
    # Two judges: two colours, each bar of one judge in its own band of the entry's row.
    for ax in axes:
        assert len({tuple(p.get_facecolor()) for p in ax.patches}) == 2 and len(ax.patches) == 28
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["judge lenient", "judge strict"]


def test_rank_ticks_are_whole_ranks_even_for_one_model():
    fig = rank_figure(pd.DataFrame([{"model": "mockllm/only", "judge": "mockllm/strict", "run": "", "cms_rank": 1, "css_rank": 1}]))
    for ax in fig.axes:
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[1] <= t <= ax.get_ylim()[0]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
