"""The report over a sweep (two models x two judges, a rerun, two epochs): hand-computed tables.

The logs and their verdicts are described in `sweep_logs.py`. Before issue 23 the report pooled this
sweep into one row per model (alpha: CSS 0.667 over 12 "tuples", three logs and two judges averaged;
beta: 0.625 over 8), said no log carried a second judge, and counted the rerun and the other judge
as epoch-to-epoch instability (1.0 for both models).
"""

import math
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from clinical_cf.cli import main
from clinical_cf.solvers.css import BASELINE_SPAN, COUNTERFACTUAL_SPAN

sys.path.insert(0, str(Path(__file__).parent))  # the fixture builder next to this file (tests/ is the import root)
from sweep_logs import template_log, write_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    template = template_log(folder / "template")
    return write_sweep(template, folder / "logs")


def _report(tmp_path, *args):
    out = tmp_path / "report"
    assert main(["report", *map(str, args), "--out", str(out)]) == 0
    return out


def _entry(table, model, judge, run=""):
    rows = table[(table["model"] == f"mockllm/{model}") & (table["judge"] == f"mockllm/{judge}") & (table["run"].fillna("") == run)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


@pytest.mark.slow
def test_rows_are_keyed_by_model_judge_and_run_with_epochs_reduced_and_the_rerun_deduplicated(sweep, tmp_path, capsys):
    out = _report(tmp_path, sweep["alpha-judge-a"].parent)
    t2 = pd.read_csv(out / "single_shot_cms_css.csv")
    assert len(t2) == 4  # two models x two judges; the rerun replaced alpha x judge-a's first run
    # CSS = mean over tuples of the epoch mean (Inspect's default reducer), never over pooled verdicts.
    assert _entry(t2, "alpha", "judge-a")["css"] == 1.0  # the rerun (latest complete), not 0.75
    assert _entry(t2, "alpha", "judge-b")["css"] == 0.25
    assert _entry(t2, "beta", "judge-a")["css"] == 0.25
    assert _entry(t2, "beta", "judge-b")["css"] == 1.0
    assert set(t2["tuples"]) == {2}
    # Ranks are within a judge.
    assert _entry(t2, "alpha", "judge-a")["css_rank"] == 1 and _entry(t2, "beta", "judge-a")["css_rank"] == 2
    assert _entry(t2, "beta", "judge-b")["css_rank"] == 1 and _entry(t2, "alpha", "judge-b")["css_rank"] == 2

    coverage = pd.read_csv(out / "single_shot_coverage.csv")
    alpha_a = _entry(coverage, "alpha", "judge-a")
    assert alpha_a["tuples"] == 4 and alpha_a["cases"] == 2 and alpha_a["rerun_rows_dropped"] == 8
    assert alpha_a["case_ids"] == "fx-breast-1, fx-pancreas-1" and coverage["same_cases"].all()
    assert "replaced by another sample of the same tuple and epoch" in capsys.readouterr().err

    # Verdict shares are over the judge's verdicts (epochs), tuples counted once.
    t4 = pd.read_csv(out / "single_shot_verdicts.csv")
    assert _entry(t4, "alpha", "judge-b")["wrong"] == 0.75 and _entry(t4, "alpha", "judge-b")["correct"] == 0.25
    assert _entry(t4, "beta", "judge-a")["partial"] == 0.5 and _entry(t4, "beta", "judge-a")["wrong"] == 0.5
    assert set(t4["tuples"]) == {2} and set(t4["verdicts"]) == {4}

    # The two judges of one model feed the cross-judge table instead of being averaged.
    cross = pd.read_csv(out / "single_shot_cross_judge.csv").set_index("model")
    alpha = cross.loc["mockllm/alpha"]
    assert (alpha["judge_1"], alpha["judge_2"]) == ("mockllm/judge-a", "mockllm/judge-b")
    assert alpha["agreement"] == 0.25 and alpha["css_judge_1"] == 1.0 and alpha["css_judge_2"] == 0.25
    assert alpha["shift"] == -0.75 and not alpha["same_replies"] and alpha["tuples"] == 2
    assert cross.loc["mockllm/beta", "agreement"] == 0.0 and cross.loc["mockllm/beta", "shift"] == 0.75

    # Instability is between epochs of one run: alpha x judge-b's pancreas tuple (1, 0) only.
    floor = pd.read_csv(out / "single_shot_instability.csv")
    floor = floor[floor["family"] == "D"]
    assert _entry(floor, "alpha", "judge-b")["instability"] == 0.5
    assert _entry(floor, "alpha", "judge-a")["instability"] == 0.0 and _entry(floor, "beta", "judge-a")["instability"] == 0.0

    # Paired comparisons stay within a judge.
    paired = pd.read_csv(out / "single_shot_paired.csv").set_index("judge")
    assert paired.loc["mockllm/judge-a", "difference"] == 0.75 and paired.loc["mockllm/judge-b", "difference"] == -0.75

    # Family winners are per judge; no winner among ties (N: every entry at 1).
    t3 = pd.read_csv(out / "single_shot_families.csv")
    assert not t3[t3["family"] == "N"]["winner"].any()
    winners = t3[(t3["family"] == "D") & t3["winner"]]
    assert sorted(zip(winners["model"], winners["judge"], strict=False)) == [("mockllm/alpha", "mockllm/judge-a"), ("mockllm/beta", "mockllm/judge-b")]

    # Every table names the judge; the per-sample table is written whole.
    assert all("judge" in pd.read_csv(out / f"single_shot_{n}.csv").columns for n in ("cms_css", "families", "verdicts", "controls"))
    samples = pd.read_parquet(out / "samples.parquet")
    assert len(samples) == 5 * 8 and len(pd.read_csv(out / "samples.csv")) == 40
    usage = pd.read_csv(out / "usage.csv")
    assert {"model", "judge"} <= set(usage["role"])


@pytest.mark.slow
def test_a_labelled_rerun_is_kept_apart(sweep, tmp_path):
    out = _report(tmp_path, sweep["alpha-judge-a"], sweep["alpha-judge-a-rerun"], "--label", f"rerun={sweep['alpha-judge-a-rerun']}")
    t2 = pd.read_csv(out / "single_shot_cms_css.csv")
    assert _entry(t2, "alpha", "judge-a")["css"] == 0.75  # the first run: (0.5 + 1) / 2
    assert _entry(t2, "alpha", "judge-a", "rerun")["css"] == 1.0
    paired = pd.read_csv(out / "single_shot_paired.csv")
    assert len(paired) == 1 and paired.loc[0, "run_b"] == "rerun" and paired.loc[0, "difference"] == -0.25


@pytest.mark.slow
def test_the_gate_refuses_a_baseline_of_several_models_and_one_sharing_no_tuples(sweep, tmp_path, capsys):
    args = ["report", str(sweep["alpha-judge-a"]), "--out", str(tmp_path / "out"), "--gate", "--baseline"]
    assert main(args + [str(sweep["alpha-judge-b"]), str(sweep["beta-judge-b"])]) == 2
    assert "must hold one model; it holds 2" in capsys.readouterr().err
    # Same model and tuples, another judge: nothing to compare like for like.
    assert main(args + [str(sweep["beta-judge-b"])]) == 2
    assert "shares no (case, intervention, judge) tuple" in capsys.readouterr().err
    assert main(args + [str(sweep["beta-judge-a"])]) == 0


@pytest.mark.slow
def test_samples_without_metadata_are_counted_and_named(sweep, tmp_path, capsys):
    log = read_eval_log(str(sweep["beta-judge-a"]))
    for sample in log.samples[::2]:
        sample.metadata = {}
    broken = tmp_path / "half.eval"
    write_eval_log(log, str(broken))
    out = _report(tmp_path, broken)
    err = capsys.readouterr().err
    assert "half.eval: 4 of 8 samples lack CSS metadata (case_id, family, intervention_id); left out" in err
    assert "samples lack CSS metadata" in (out / "report.md").read_text()
    assert math.isclose(pd.read_csv(out / "single_shot_coverage.csv").loc[0, "samples_without_metadata"], 4)


@pytest.mark.slow
def test_the_viewer_shows_each_arms_calls_under_a_named_span(sweep):
    """Read back from a real log: the baseline and counterfactual model calls sit in spans named for their arm."""

    template = next(Path(sweep["alpha-judge-a"]).parent.parent.glob("template/*.eval"))
    sample = read_eval_log(str(template)).samples[0]
    spans = {e.id: e.name for e in sample.events if e.event == "span_begin"}
    arms = [
        spans.get(e.span_id) for e in sample.events if e.event == "model" and spans.get(e.span_id) in (BASELINE_SPAN, COUNTERFACTUAL_SPAN)
    ]
    # Two calls per arm (summary, then recommendations), the baseline's first.
    assert arms == [BASELINE_SPAN] * 2 + [COUNTERFACTUAL_SPAN] * 2
