"""The lab walkthrough (issue 38) as a ledger of cells: every expected cell is computed here from the raw
logs (`read_eval_log`, full samples) and the scripts in `oracle_logs.py`, never by calling the analysis
code, then looked up in what the report wrote. Each test is one class of the issue; a failing test names
every cell it found wrong, not only the first.
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
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from clinical_cf.cli import main
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402

M = "mockllm/"


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("walkthrough")
    logs = folder / "logs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(folder / "cache"))
        css = oracle.walkthrough_css(logs)
        agent = oracle.walkthrough_agent(logs)
        medpic = oracle.walkthrough_medpic(logs)
        workflow = oracle.walkthrough_workflow(logs)
        other = oracle.walkthrough_other(logs)
        out = folder / "report"
        assert main(["report", str(logs), "--out", str(out)]) == 0
    return {"css": css, "agent": agent, "medpic": medpic, "workflow": workflow, "other": other, "out": out,
            "folder": folder, "logs": logs}


class Ledger:
    """Cells compared one by one; the assertion lists every mismatch."""

    def __init__(self) -> None:
        self.wrong: list[str] = []
        self.cells = 0

    def eq(self, where: str, got, expected) -> None:
        self.cells += 1
        same = (_blank(got) and _blank(expected)) or (
            isinstance(expected, (int, float)) and not isinstance(expected, bool) and not _blank(got)
            and _number(got) is not None and math.isclose(_number(got), float(expected), abs_tol=1e-9)) or str(got) == str(expected)
        if not same:
            self.wrong.append(f"{where}: got {got!r}, expected {expected!r}")

    def check(self) -> None:
        assert not self.wrong, f"{len(self.wrong)} of {self.cells} cells wrong:\n" + "\n".join(self.wrong)


def _blank(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def csv(walk, name: str) -> pd.DataFrame:
    return pd.read_csv(walk["out"] / name, keep_default_na=False, na_values=[""])


def one(table: pd.DataFrame, **keys) -> pd.Series:
    hit = table
    for k, v in keys.items():
        hit = hit[hit[k].fillna("").astype(str) == str(v)]
    assert len(hit) == 1, f"no single row for {keys}:\n{table}"
    return hit.iloc[0]


def samples_of(path: str):
    return read_eval_log(path).samples or []


def outcome(sample) -> str:
    """What became of one sample epoch, from the raw log: error, limit, unscored (with reason) or scored."""
    if sample.error is not None:
        return "error"
    if sample.limit is not None:
        return "limit"
    score = (sample.scores or {}).get("judge_direction") or (sample.scores or {}).get("agent_judge_direction")
    if score is None or (isinstance(score.value, float) and math.isnan(score.value)):
        return "unscored"
    return "scored"


# ------------------------------------------------------------------ 1. a log's status


def test_errored_rerun_is_listed_with_its_status_and_never_replaces_the_complete_run(walk):
    ledger = Ledger()
    first, crashed = walk["css"]["rerun"]
    assert read_eval_log(crashed, header_only=True).status == "error"
    logs = csv(walk, "logs.csv")
    ledger.eq("logs.csv rerun (crashed) status", one(logs, log=crashed)["status"], "error")
    ledger.eq("logs.csv rerun (crashed) used", one(logs, log=crashed)["used"], False)
    ledger.eq("logs.csv rerun (first) status", one(logs, log=first)["status"], "success")
    ledger.eq("logs.csv rerun (first) used", one(logs, log=first)["used"], True)
    # The complete run moved everywhere: strict judge 1 on D, its controls moved (0).
    table = csv(walk, "single_shot_cms_css.csv")
    row = one(table, model=M + "rerun", judge=M + "strict")
    ledger.eq("Table 2 rerun css", row["css"], 1.0)
    ledger.eq("Table 2 rerun tuples", row["tuples"], 2)
    text = (walk["out"] / "report.md").read_text(encoding="utf-8")
    ledger.eq("report.md names the crashed log's status", f"{crashed} (status error" in text, True)
    ledger.eq("no 'latest complete run' claim for the rerun", bool(re.search(r"rerun.*latest complete run", text)), False)
    ledger.check()


def test_incomplete_logs_are_scored_only_with_the_flag_and_still_never_replace_a_complete_run(walk, tmp_path):
    first, crashed = walk["css"]["rerun"]
    out = tmp_path / "flagged"
    assert main(["report", str(walk["logs"] / "css"), "--out", str(out), "--include-incomplete"]) == 0
    logs = pd.read_csv(out / "logs.csv", keep_default_na=False)
    assert str(one(logs, log=crashed)["used"]) == "True"
    row = one(pd.read_csv(out / "single_shot_cms_css.csv"), model=M + "rerun", judge=M + "strict")
    assert row["css"] == 1.0  # every tuple the crashed rerun completed is also in the complete run: it wins


@pytest.mark.parametrize("which, why", [("crashed", r"status error.*--include-incomplete"), ("no_score", r"no score"),
                                        ("unknown_suite", r"suite 'CSS'")])
def test_a_log_named_explicitly_that_cannot_be_used_exits_non_zero_naming_why(walk, tmp_path, capsys, which, why):
    path = walk["css"]["rerun"][1] if which == "crashed" else walk["other"][which]
    assert main(["report", path, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert path in err and re.search(why, err), err
    assert "Traceback" not in err


def test_errors_and_limits_are_counted_as_such_in_every_suites_table(walk):
    ledger = Ledger()
    raw = samples_of(walk["css"]["flaky"][0])
    seen = Counter(outcome(s) for s in raw)
    assert seen["error"] == 4 and seen["limit"] == 1, seen
    table = csv(walk, "css_parse_table.csv")
    row = one(table, model=M + "flaky", judge=M + "strict")
    ledger.eq("css parse table flaky samples", row["samples"], len(raw))
    ledger.eq("css parse table flaky error", row["error"], seen["error"])
    ledger.eq("css parse table flaky limit", row["limit"], seen["limit"])
    ledger.eq("css parse table flaky scored", row["scored"], seen["scored"])
    # Replies read: both arms of every sample that was neither errored nor stopped by a limit.
    ledger.eq("css parse table flaky replies", row["replies"], 2 * seen["scored"])
    # The sample stopped by the token limit is not a CSS verdict: Table 3 rests on the scored breast tuples only.
    scored = {(s.metadata["case_id"], s.metadata["family"]) for s in raw if outcome(s) == "scored"}
    families = csv(walk, "single_shot_families.csv")
    for family in ("D", "N"):
        keys = {k for k in scored if (k[1] == "N") == (family == "N")}
        ledger.eq(f"Table 3 flaky {family} tuples", one(families, model=M + "flaky", family=family)["tuples"], len(keys))
    wf = samples_of(walk["workflow"])
    errored = sum(s.error is not None for s in wf)
    assert errored == len(oracle.WALK_WORKFLOW_ERRORS)
    wparse = csv(walk, "workflow_parse_table.csv")
    ledger.eq("workflow parse table error", one(wparse, model=M + "flaky")["error"], errored)
    ledger.eq("workflow parse table samples", one(wparse, model=M + "flaky")["samples"], len(wf))
    summary = csv(walk, "workflow_summary.csv")
    ledger.eq("workflow summary errored", summary["errored"].sum(), errored)
    ledger.eq("workflow summary episodes", summary["episodes"].sum(), len(wf))
    page = (walk["out"] / "workflow_episodes.html").read_text(encoding="utf-8")
    ledger.eq("episodes page prints no 'action: nan'", "nan" in re.sub(r"<[^>]+>", " ", page).split(), False)
    ledger.check()


# ------------------------------------------------------------------ 2. rows on the cases they claim


def test_coverage_counts_scored_tuples_and_the_banner_names_the_entry_on_fewer_cases(walk):
    ledger = Ledger()
    coverage = csv(walk, "single_shot_coverage.csv")
    for behaviour, paths in walk["css"].items():
        used = [p for p in paths if read_eval_log(p, header_only=True).status == "success"][-1]
        raw = samples_of(used)
        scored = {(s.metadata["case_id"], s.metadata["intervention_id"]) for s in raw if outcome(s) == "scored"}
        row = one(coverage, model=M + behaviour)
        ledger.eq(f"coverage {behaviour} tuples", row["tuples"], len(scored))
        ledger.eq(f"coverage {behaviour} cases", row["cases"], len({c for c, _ in scored}))
    text = (walk["out"] / "report.md").read_text(encoding="utf-8")
    banner = next((line for line in text.splitlines() if "different set of cases" in line), "")
    ledger.eq("banner names flaky", f"{M}flaky" in banner, True)
    t2 = one(csv(walk, "single_shot_cms_css.csv"), model=M + "flaky")
    # CMS and CSS of one row on the same cases: CMS over the cases its CSS was scored on.
    ledger.eq("Table 2 flaky cases", t2["cases"], 1)
    ledger.check()


# ------------------------------------------------------------------ 3. parse quality per arm


def arm_counts(path: str) -> tuple[Counter, int, set[str]]:
    """Replies per provenance over both arms, the samples, and the reason codes of the unreadable arms."""
    seen, samples, reasons = Counter(), 0, set()
    for s in samples_of(path):
        samples += 1
        if outcome(s) in ("error", "limit"):
            continue
        metadata = s.scores["judge_direction"].metadata
        seen.update(metadata["parse"].values())
        unreadable = metadata.get("unreadable") or {}
        reasons.update(str(v) for v in (unreadable.values() if isinstance(unreadable, dict) else [unreadable]) if v)
    return seen, samples, reasons


def test_parse_quality_counts_both_arms_of_the_verdict_whatever_the_folder_holds(walk, tmp_path):
    ledger = Ledger()
    seen, samples, reasons = arm_counts(walk["css"]["alternating"][0])
    assert seen["unreadable"] > 0 and seen["field"] > 0 and reasons, seen  # the script's formats reached the log
    total = sum(seen.values())
    alone = tmp_path / "alone"
    assert main(["report", walk["css"]["alternating"][0], "--out", str(alone)]) == 0
    for label, table in (("whole folder", csv(walk, "css_parse_table.csv")),
                         ("log alone", pd.read_csv(alone / "css_parse_table.csv", keep_default_na=False, na_values=[""]))):
        row = one(table, model=M + "alternating")
        ledger.eq(f"{label} samples", row["samples"], samples)
        ledger.eq(f"{label} replies", row["replies"], total)
        for provenance in ("json", "repaired", "field", "unreadable"):
            ledger.eq(f"{label} {provenance}", row[provenance], seen[provenance] / total)
        for reason in sorted(reasons):
            ledger.eq(f"{label} unreadable reason {reason!r}", reason in str(row["unreadable_reasons"]), True)
    ledger.check()


def test_an_unreadable_arm_is_shown_as_unreadable_on_the_side_by_side_page(walk):
    pages = sorted(walk["out"].glob("side_by_side*.html"))
    text = " ".join(p.read_text(encoding="utf-8") for p in pages)
    assert "(none)" not in text
    assert "unreadable" in text


# ------------------------------------------------------------------ 4. the agent table


def test_agent_trace_metrics_per_model_judge_and_run(walk):
    ledger = Ledger()
    table = csv(walk, "agent_trace.csv")
    for behaviour, path in walk["agent"].items():
        raw = samples_of(path)
        traces = [s.store["CSSArms:counterfactual"]["trace"] for s in raw]
        meaning = [[c for c in t["changed_sections"] if c != "overview"] or t["changed_sections"] for t in traces]
        read = [any(c in t["sections_read"] for c in m) for t, m in zip(traces, meaning, strict=True)]
        row = one(table, model=M + behaviour, judge=M + "strict")
        ledger.eq(f"{behaviour} tool_calls", row["tool_calls"], sum(t["tool_calls"] for t in traces) / len(traces))
        ledger.eq(f"{behaviour} changed_section_read", row["changed_section_read"], sum(read) / len(read))
        not_updated = [s.scores["agent_judge_direction"].value == 0 for s, r in zip(raw, read, strict=True) if r]
        ledger.eq(f"{behaviour} retrieved_not_updated", row["retrieved_not_updated"],
                  sum(not_updated) / len(not_updated) if not_updated else float("nan"))
        logged = read_eval_log(path, header_only=True).results.scores
        metric = next(s for s in logged if "changed_section_read" in s.metrics).metrics["changed_section_read"].value
        ledger.eq(f"{behaviour} logged changed_section_read", metric, sum(read) / len(read))
    ledger.eq("overview reader reads no changed section", one(table, model=M + "overview")["changed_section_read"], 0)
    ledger.check()


# ------------------------------------------------------------------ 5. exports a lab can analyse


def test_samples_export_has_real_nulls_the_log_status_and_a_replaced_flag(walk):
    ledger = Ledger()
    for name in ("samples.csv", "samples.parquet"):
        table = pd.read_parquet(walk["out"] / name) if name.endswith("parquet") else \
            pd.read_csv(walk["out"] / name, keep_default_na=False, na_values=[""])
        ledger.eq(f"{name}: no 'nan' strings", int((table.astype(str).isin(["nan", "None", "NaN"]) & table.notna()
                                                    & table.map(lambda v: isinstance(v, str))).sum().sum()), 0)
        first, crashed = walk["css"]["rerun"]
        ledger.eq(f"{name}: crashed rerun status", set(table[table["log"] == crashed]["status"]), {"error"})
        ledger.eq(f"{name}: crashed rerun rows unused", set(table[table["log"] == crashed]["used"].astype(str)), {"False"})
        ledger.eq(f"{name}: complete run rows used", set(table[table["log"] == first]["used"].astype(str)), {"True"})
        ledger.eq(f"{name}: replaced column", "replaced" in table.columns, True)
        errored = table[table["log"] == walk["css"]["flaky"][0]]["error"]
        ledger.eq(f"{name}: flaky errors", int(errored.notna().sum()), 4)
    ledger.check()


def test_medpic_pair_accuracy_is_the_seed_papers_in_the_log_and_the_report(walk):
    raw = samples_of(walk["medpic"])
    members = defaultdict(list)
    for s in raw:
        if s.metadata.get("pair_id"):
            members[(s.metadata["pair_id"], s.epoch)].append(s.scores["medpic_exact_set"].value)
    pairs = [all(v in ("C", 1, 1.0) for v in vs) for vs in members.values() if len(vs) == 2]
    expected = sum(pairs) / len(pairs)
    assert expected == 0.0
    logged = read_eval_log(walk["medpic"], header_only=True).results.scores
    value = next(s for s in logged if "pair_accuracy" in s.metrics).metrics["pair_accuracy"].value
    table = csv(walk, "medpic.csv")
    ledger = Ledger()
    ledger.eq("logged pair_accuracy", value, expected)
    ledger.eq("report pair accuracy", one(table, model=M + "alternate")["pair"], 100 * expected)
    ledger.check()


# ------------------------------------------------------------------ 7. lead with the result


def test_the_report_opens_with_the_summary_then_the_housekeeping(walk):
    text = (walk["out"] / "report.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Summary", headings[:4]
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert "Figure 1" in summary and "Figure 2" in summary
    table = csv(walk, "summary.csv")
    ledger = Ledger()
    for behaviour, paths in walk["css"].items():
        used = [p for p in paths if read_eval_log(p, header_only=True).status == "success"][-1]
        raw = samples_of(used)
        row = one(table, suite="css", setting="single_shot", model=M + behaviour)
        ledger.eq(f"summary {behaviour} share scored", row["share_scored"],
                  sum(outcome(s) == "scored" for s in raw) / len(raw))
        for col in ("css", "css_rank", "cms", "cms_rank", "family_D", "controls_held"):
            ledger.eq(f"summary {behaviour} has {col}", col in table.columns, True)
    ledger.check()
    html = (walk["out"] / "report.html").read_text(encoding="utf-8")
    assert html.index(">Summary<") < html.index(">Logs read<")


# ------------------------------------------------------------------ 3. reader calls billed to the reader role


def test_reader_calls_are_billed_to_the_reader_role_not_the_judge(tmp_path):
    """With no reader role bound the judge's model reads the prose replies; usage.csv bills those calls to `reader`."""

    readings = []

    def judge(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        blocks = oracle.data_blocks(prompt)
        if "BASELINE" not in blocks:  # a reader request: nothing can be read from prose
            readings.append(prompt)
            return oracle.reply("mockllm/strict", json.dumps({"unreadable": True}), (7, 1))
        return oracle.reply("mockllm/strict", json.dumps({"score": 1.0, "rationale": "r"}), (30, 3))

    cases = str(Path(__file__).parents[1] / "fixtures" / "css_cases_handwritten.jsonl")
    model = oracle.WalkModel("always", oracle.css_baselines(), styles=("json", "prose"))
    log = eval(css_family_d(cases=cases, unreviewed="allow"), model=get_model("mockllm/alternating", custom_outputs=model),
               model_roles={"judge": get_model("mockllm/strict", custom_outputs=judge)}, display="none",
               log_dir=str(tmp_path / "logs"), max_samples=1)[0]
    assert log.status == "success" and readings
    raw = {role: sum(s.role_usage[role].total_tokens for s in log.samples if role in (s.role_usage or {}))
           for role in ("judge", "reader")}
    assert raw["reader"] == 8 * len(readings)  # Inspect's own record: every reading under `reader`
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0
    usage = pd.read_csv(out / "usage.csv", keep_default_na=False, na_values=[""])
    ledger = Ledger()
    ledger.eq("usage reader tokens", one(usage, role="reader")["tokens"], raw["reader"])
    ledger.eq("usage reader role_model", one(usage, role="reader")["role_model"], M + "strict")
    ledger.eq("usage judge tokens", one(usage, role="judge")["tokens"], raw["judge"])
    ledger.check()
