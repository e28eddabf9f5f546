"""The third lab walkthrough (issue 45): epochs, every log status, and headlines a reader can trust.

Real Inspect runs (`oracle_logs`), plus copies written with Inspect's own `EvalLog` types where a run cannot be
scripted cheaply (a rerun whose every sample errored and whose log status is `error`; a provider that reports no
usage). Every expected cell is computed here from the raw logs (`read_eval_log`, full samples) and the scripts,
never by calling the analysis code; each test is one class of the issue and names every wrong cell.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log import EvalError, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, get_model

from clinical_cf.analysis import side_by_side
from clinical_cf.analysis.logs import read_logs
from clinical_cf.cli import main
from clinical_cf.tasks.workflow.workflow import workflow

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402
from test_oracle_walkthrough import Ledger, one  # noqa: E402

pytestmark = pytest.mark.slow  # the module's fixture runs six evals (three CSS epochs) and a report (over 3 s)

M = "mockllm/"
EPOCHS = 3
WORKFLOW_UNREADABLE = (2, 5)
"""Workflow calls (1-based) answered in prose, from which no action can be read."""


class ThirdEpochMover:
    """Moves its counterfactual recommendation only in the third epoch of each tuple (one call per arm per epoch)."""

    def __init__(self, baselines: set[str]) -> None:
        self.inner = oracle.CSSModel("never", baselines)
        self.seen: Counter = Counter()

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = self.inner(messages, tools, tool_choice, config)
        text = messages[-1].text
        if oracle.SUMMARY_MARK in text or "(baseline," in text:
            return out
        self.seen[text] += 1
        items = oracle.MOVED if self.seen[text] == EPOCHS else oracle.BASE
        return oracle.reply(M + "thrice", oracle.recommendations(items), oracle.MODEL_USAGE)


def crashed_copy(source: str, target: Path) -> str:
    """The same entry rerun and crashed: log status `error`, every sample errored before scoring, usage kept."""
    log = read_eval_log(source)
    log.status = "error"
    log.error = EvalError(message="provider outage", traceback="", traceback_ansi="")
    log.results = None
    for sample in log.samples or []:
        sample.scores = None
        sample.error = EvalError(message="provider outage", traceback="", traceback_ansi="")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(target))
    return str(target)


def silent_copy(source: str, target: Path) -> str:
    """A run of another model whose provider reports no usage for the model under test (the judge's is kept), and
    whose judge scored every tuple 1 (so it leads the CSS table)."""
    log = read_eval_log(source)
    old = log.eval.model
    log.eval.model = M + "silent"
    for sample in log.samples or []:
        sample.scores["judge_direction"].value = 1.0
        sample.model_usage = {k: v for k, v in (sample.model_usage or {}).items() if k != old}
        sample.role_usage = {k: v for k, v in (sample.role_usage or {}).items() if k != "model"}
    log.stats.model_usage = {k: v for k, v in log.stats.model_usage.items() if k != old}
    target.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(target))
    return str(target)


def workflow_log(folder: Path) -> str:
    """The `right` workflow model, answering in prose (no action to read) on `WORKFLOW_UNREADABLE` calls."""
    chosen = oracle.workflow_selection()
    inner = oracle.WorkflowModel("right", {s.input: dict(s.metadata) for s in chosen})
    calls = Counter()

    def vague(messages, tools, tool_choice, config):
        calls["n"] += 1
        if calls["n"] in WORKFLOW_UNREADABLE:
            return oracle.reply(M + "vague", "Hard to say; it depends on the patient.", oracle.MODEL_USAGE)
        return inner(messages, tools, tool_choice, config)

    log = eval(workflow(task_class="triage_handoff"), model=get_model(M + "vague", custom_outputs=vague),
               sample_id=[s.id for s in chosen], display="none", log_dir=str(folder / "workflow"), max_samples=1)[0]
    assert log.status == "success", log.error
    return log.location


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("walk45")
    logs = folder / "logs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(folder / "cache"))
        thrice = oracle._css_eval(logs / "css", "thrice", ThirdEpochMover(oracle.css_baselines()), epochs=EPOCHS)
        assert thrice.status == "success", thrice.error
        crashed = crashed_copy(thrice.location, logs / "css" / "crashed-rerun.eval")
        silent = silent_copy(thrice.location, logs / "css" / "silent.eval")
        medpic = oracle.walkthrough_medpic(logs)
        sensitivity = oracle.sensitivity_logs(logs)
        workflow = workflow_log(logs)
        out = folder / "report"
        assert main(["report", str(logs), "--out", str(out)]) == 0
    return {"thrice": thrice.location, "crashed": crashed, "silent": silent, "medpic": medpic, "sensitivity": sensitivity,
            "workflow": workflow, "out": out, "logs": logs, "folder": folder}


def table(walk, name: str) -> pd.DataFrame:
    return pd.read_csv(walk["out"] / name, keep_default_na=False, na_values=[""])


def markdown(walk) -> str:
    return (walk["out"] / "report.md").read_text(encoding="utf-8")


def tokens(samples, role: str) -> int:
    """A role's tokens over samples, as Inspect recorded them (`role_usage`, the model under test by its name)."""
    total = 0
    for s in samples:
        use = (s.role_usage or {}).get(role)
        total += use.total_tokens if use is not None else 0
    return total


# ------------------------------------------------------------------ 1. an errored log: row, count, advice, spend


def test_an_errored_log_has_its_status_count_advice_and_spend(walk):
    ledger = Ledger()
    crashed = walk["crashed"]
    raw = read_eval_log(crashed)
    logs = table(walk, "logs.csv")
    row = one(logs, log=crashed)
    ledger.eq("logs.csv status", row["status"], "error")
    ledger.eq("logs.csv samples", row["samples"], len(raw.samples))
    ledger.eq("logs.csv used", row["used"], False)
    ledger.eq("logs.csv advice is a rerun, not inspect score", "inspect score" in str(row["why"]), False)
    ledger.eq("logs.csv advice names a rerun", "eval-retry" in str(row["why"]), True)
    text = markdown(walk)
    unscored = text.split("Logs not scored", 1)[-1].split("\n#", 1)[0] if "Logs not scored" in text else ""
    ledger.eq("'Logs not scored' lists it", crashed in unscored, True)
    usage = table(walk, "usage.csv")
    model_row = one(usage, model=M + "thrice", role="model")
    thrice = read_eval_log(walk["thrice"]).samples
    expected = sum(s.model_usage[M + "thrice"].total_tokens for s in thrice) + \
        sum(s.model_usage[M + "thrice"].total_tokens for s in raw.samples)
    ledger.eq("usage.csv model tokens include the errored log", model_row["tokens"], expected)
    ledger.eq("usage.csv model samples include the errored log", model_row["samples"], len(thrice) + len(raw.samples))
    samples = table(walk, "samples.csv")
    ledger.eq("samples.csv rows of the errored log", int((samples["log"] == crashed).sum()), len(raw.samples))
    ledger.check()


def test_a_provider_that_reports_no_usage_gets_a_row_marked_missing(walk):
    usage = table(walk, "usage.csv")
    row = one(usage, model=M + "silent", role="model")
    assert pd.isna(row["tokens"]), row
    assert str(row["usage"]) == "not reported", row
    judge = one(usage, model=M + "silent", role="judge")
    assert judge["tokens"] == tokens(read_eval_log(walk["silent"]).samples, "judge")


# ------------------------------------------------------------------ 2. header, --include-incomplete wording, title


def _header_counts(text: str) -> tuple[int, int]:
    found = re.search(r"Logs: (\d+)(?: read, (\d+) used)?", text.split("single-shot setting", 1)[1])
    assert found, "no Logs: header"
    return int(found.group(1)), int(found.group(2) or found.group(1))


def test_the_header_counts_every_log_read_of_its_setting(walk):
    logs = table(walk, "logs.csv")
    css = logs[logs["suite"] == "css"]
    read, used = _header_counts(markdown(walk))
    assert (read, used) == (len(css), int(css["used"].astype(str).eq("True").sum()))


def test_include_incomplete_never_says_a_complete_run_was_replaced_by_a_later_one(walk, tmp_path):
    out = tmp_path / "flagged"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(walk["folder"] / "cache"))
        assert main(["report", str(walk["logs"] / "css"), "--out", str(out), "--include-incomplete"]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "replaced by a later run" not in text
    assert re.search(r"replaced by (?:the|a) complete run", text), text[:3000]


def test_the_html_title_names_the_suites_it_reports(walk):
    title = re.search(r"<title>(.*?)</title>", (walk["out"] / "report.html").read_text(encoding="utf-8")).group(1)
    assert "CSS comparison" not in title
    for suite in ("css", "medpic", "sensitivity", "workflow"):
        assert suite in title.lower(), title


# ------------------------------------------------------------------ 3. epochs on the side-by-side page


def page_data(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="tuples">(.*?)</script>', text, re.S).group(1))


def test_every_epoch_is_reachable_on_the_side_by_side_page_with_the_reducers_score(walk):
    ledger = Ledger()
    data = page_data(walk["out"] / "side_by_side.html")
    per_tuple: dict[str, dict[int, float]] = defaultdict(dict)
    for s in read_eval_log(walk["thrice"]).samples:
        per_tuple[f"{s.metadata['case_id']}:{s.metadata['intervention_id']}"][s.epoch] = s.scores["judge_direction"].value
    column = next(i for i, m in enumerate(data["models"]) if "thrice" in m)
    for t in data["tuples"]:
        answer = t["answers"][column]
        expected = per_tuple[t["key"]]
        mean = sum(expected.values()) / len(expected)
        ledger.eq(f"{t['key']} reduced score", answer["score"], f"{mean:g}")
        epochs = {e["epoch"]: e["score"] for e in answer.get("epochs", [])}
        ledger.eq(f"{t['key']} epochs shown", sorted(epochs), sorted(expected))
        for epoch, value in expected.items():
            ledger.eq(f"{t['key']} epoch {epoch} score", epochs.get(epoch), f"{value:g}")
    ledger.check()


# ------------------------------------------------------------------ 4. MedPIC counts and intervals


def test_medpic_counts_distinct_questions_and_pairs_with_the_epochs_beside(walk):
    raw = read_eval_log(walk["medpic"]).samples
    row = one(table(walk, "medpic.csv"), model=M + "alternate")
    questions = {s.id for s in raw}
    pairs = {s.metadata["pair_id"] for s in raw if s.metadata.get("pair_id")}
    assert (row["questions"], row["pairs"], row["epochs"]) == (len(questions), len(pairs), len({s.epoch for s in raw}))


# ------------------------------------------------------------------ 5. headlines


def headline_value(headline: str, name: str) -> float:
    found = re.search(rf"\b{re.escape(name)} (-?[0-9.]+)", headline)
    assert found, f"{name} not in {headline!r}"
    return float(found.group(1))


def test_the_sensitivity_headline_is_inspects_own_metric(walk):
    raw = read_eval_log(walk["sensitivity"])
    logged = raw.results.scores[0].metrics["mean"].value
    summary = table(walk, "summary.csv")
    row = one(summary[summary["suite"] == "sensitivity"], model=M + "steady")
    assert math.isclose(headline_value(row["headline"], "consistency"), logged, abs_tol=5e-4), (row["headline"], logged)


def test_every_headline_rate_is_a_fraction(walk):
    summary = table(walk, "summary.csv")
    for r in summary[summary["headline"].notna()].itertuples():
        for name, value in re.findall(r"([A-Za-z_]+) (-?[0-9.]+)", r.headline):
            if name not in ("pp", "n"):
                assert 0 <= float(value) <= 1, (r.suite, r.model, r.headline)


def test_workflow_headline_names_its_split_and_counts_that_split(walk):
    raw = read_eval_log(walk["workflow"]).samples
    test_split = [s for s in raw if s.metadata.get("split") == "test"]
    summary = table(walk, "summary.csv")
    row = one(summary[summary["suite"] == "workflow"], model=M + "vague")
    assert "test split" in row["headline"], row["headline"]
    assert row["samples"] == len(test_split)


def test_share_scored_counts_an_unreadable_workflow_reply_as_unscored(walk):
    raw = read_eval_log(walk["workflow"]).samples
    read = [s for s in raw if s.error is None and (s.scores["workflow_action"].metadata or {}).get("parse") not in ("unreadable", "invalid")]
    summary = table(walk, "summary.csv")
    row = one(summary[summary["suite"] == "workflow"], model=M + "vague")
    assert math.isclose(row["share_scored"], len(read) / len(raw), abs_tol=1e-3), (row["share_scored"], len(read), len(raw))


def test_the_first_sentence_says_who_leads_each_suite_and_by_how_much(walk):
    """Recomputed from the raw logs: CSS per tuple is the epoch mean of the judge's verdicts on interventional tuples,
    an entry's CSS the mean over its tuples; MedPIC overall is the share of correct sample epochs."""
    text = markdown(walk)
    lead = text.split("## Summary", 1)[1].strip().split("\n\n", 1)[0]
    css: dict[str, float] = {}
    for name in ("thrice", "silent"):
        per_tuple: dict[str, list[float]] = defaultdict(list)
        for s in read_eval_log(walk[name]).samples:
            if s.metadata["family"] != "N":
                per_tuple[s.id].append(s.scores["judge_direction"].value)
        means = [sum(v) / len(v) for v in per_tuple.values()]
        css[name] = sum(means) / len(means)
    assert css["silent"] == 1.0  # every interventional verdict 1: the case-clustered interval is [1, 1]
    shown = lambda v: f"{round(v, 3):g}"  # noqa: E731 - the report's number format
    expected = (f"CSS (single-shot, judge {M}strict): {M}silent leads with CSS 1 [1, 1], {shown(1 - css['thrice'])} ahead of "
                f"{M}thrice ({shown(css['thrice'])}).")
    assert expected in lead, (expected, lead)
    medpic = read_eval_log(walk["medpic"]).samples
    overall = sum(1 for s in medpic if s.scores["medpic_exact_set"].value in (1, 1.0, "C")) / len(medpic)
    assert f"MedPIC: only {M}alternate was measured: overall accuracy {shown(overall)}" in lead, lead


def test_workflow_calibration_is_shown_per_task_class(walk):
    """ECE per task class recomputed from the raw log: test-split episodes scored and with a confidence read, 10
    equal-width bins on [0, 1] (the last closed), |accuracy - confidence| weighted by the bin's share."""
    by_class: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for s in read_eval_log(walk["workflow"]).samples:
        score = s.scores["workflow_action"]
        confidence = (score.metadata or {}).get("confidence")
        if s.metadata.get("split") != "test" or s.error or not isinstance(confidence, (int, float)):
            continue
        right = (score.metadata or {}).get("action") in s.metadata["acceptable_actions"]
        by_class[s.metadata["task_class"]].append((float(confidence), float(right)))
    table = pd.read_csv(walk["out"] / "workflow_calibration_by_class.csv")
    assert set(table["task_class"]) == set(by_class)
    for task_class, pairs in by_class.items():
        bins: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for confidence, right in pairs:
            bins[min(int(confidence * 10), 9)].append((confidence, right))
        ece = sum(len(b) / len(pairs) * abs(sum(r for _, r in b) / len(b) - sum(c for c, _ in b) / len(b)) for b in bins.values())
        row = one(table[table["model"] == M + "vague"], task_class=task_class)
        assert (row["episodes"], round(row["ece"], 9)) == (len(pairs), round(ece, 9))


# ------------------------------------------------------------------ 6. the page from summaries only (design change)

NEW_FIELDS = ("edit", "baseline_items", "counterfactual_items", "epoch")


def legacy_copy(source: str, target: Path) -> str:
    """The log as a scorer before issue 45 wrote it: no edit record, item lists or epoch in the judge's metadata."""
    log = read_eval_log(source)
    for sample in log.samples or []:
        score = sample.scores["judge_direction"]
        score.metadata = {k: v for k, v in (score.metadata or {}).items() if k not in NEW_FIELDS}
    target.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(target))
    return str(target)


def _page_cells(tuples: dict) -> dict:
    return {key: (tuple(map(tuple, entry["diff"])), {m: (a["score"], str(a["before"]), str(a["after"]), len(a["epochs"]))
                                                     for m, a in entry["answers"].items()})
            for key, entry in tuples.items()}


def test_the_side_by_side_page_reads_summaries_only_and_older_logs_read_the_same(walk, tmp_path, monkeypatch):

    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", "off")
    legacy = legacy_copy(walk["thrice"], tmp_path / "legacy" / "thrice.eval")
    _, slow = side_by_side.collect(read_logs([legacy], mode="summaries", use_cache=False), workers=1)

    def no_full_read(*args, **kwargs):
        raise AssertionError(f"full samples read for {args[0]}")

    monkeypatch.setattr(side_by_side, "_collect_log_cached", no_full_read)
    _, fast = side_by_side.collect(read_logs([walk["thrice"]], mode="summaries", use_cache=False), workers=1)
    assert fast and all(any(s[0] in "+-" for s in e["diff"]) for e in fast.values() if e["family"] != "N" or e["diff"])
    assert _page_cells(fast) == _page_cells(slow)  # the older log, read on the slower path, shows the same page
