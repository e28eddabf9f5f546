"""The workflow section against the oracle (`oracle_logs.WORKFLOW_MODELS`): every cell of the summary and the
by-variant table, in CSV, report.md and report.html, computed here from the episodes' own reference and
acceptable actions (the catalog's input) and the scripts, never by the analysis code."""

import sys
from pathlib import Path

import pytest

from clinical_cf.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402
from test_oracle import M, check_table, html_tables, md_tables  # noqa: E402


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("oracle_workflow")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(folder / "cache"))
        logs = oracle.workflow_logs(folder / "logs")
        out = folder / "report"
        assert main(["report", str(folder / "logs"), "--out", str(out)]) == 0
    return {"logs": logs, "out": out}


@pytest.fixture(scope="module")
def rendered(sweep):
    return md_tables(sweep["out"] / "report.md"), html_tables(sweep["out"] / "report.html")


def utility(action, reference, acceptable, ratio):
    if reference == "ESCALATE" and action != "ESCALATE":
        return -float(ratio)
    if action == "ESCALATE" and "ESCALATE" not in acceptable:
        return -1.0
    return 1.0 if action in acceptable else 0.0


def scripted(behaviour, episode):
    fixed = oracle.WORKFLOW_MODELS[behaviour]
    return (episode["reference_action"], 0.9) if fixed is None else fixed


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def test_workflow_summary_every_cell(sweep, rendered):
    episodes = [s.metadata for s in oracle.workflow_selection()]
    expected = []
    for behaviour in oracle.WORKFLOW_MODELS:
        acts = [(scripted(behaviour, e), e) for e in episodes]
        correct = [float(a in e["acceptable_actions"]) for (a, _), e in acts]
        required = [a != "ESCALATE" for (a, _), e in acts if e["reference_action"] == "ESCALATE"]
        not_ok = [a == "ESCALATE" for (a, _), e in acts if "ESCALATE" not in e["acceptable_actions"]]
        confidence = acts[0][0][1]
        expected.append({
            "model": M + behaviour, "condition": "neutral", "episodes": len(episodes),
            "seeds": len({e["seed_id"] for e in episodes}), "parse_rate": 1.0, "accuracy": mean(correct),
            "utility_5": mean([utility(a, e["reference_action"], e["acceptable_actions"], 5) for (a, _), e in acts]),
            "utility_10": mean([utility(a, e["reference_action"], e["acceptable_actions"], 10) for (a, _), e in acts]),
            "missed_escalation": mean(required), "unnecessary_escalation": mean(not_ok),
            "sensitivity": 1 - mean(required), "specificity": 1 - mean(not_ok),
            # One confidence per model: all episodes fall in one bin, so ECE = |confidence - accuracy|.
            "ece": abs(confidence - mean(correct)),
        })
    check_table(sweep, rendered, "workflow_summary.csv", "Workflow escalation suite", expected, ["model", "condition"])


def test_workflow_accuracy_by_variant_every_cell(sweep, rendered):
    episodes = [s.metadata for s in oracle.workflow_selection()]
    expected = []
    for behaviour in oracle.WORKFLOW_MODELS:
        for variant in sorted({e["variant"] for e in episodes}):
            mine = [e for e in episodes if e["variant"] == variant]
            acts = [scripted(behaviour, e)[0] for e in mine]
            expected.append({
                "model": M + behaviour, "condition": "neutral", "variant": variant, "episodes": len(mine),
                "accuracy": mean([float(a in e["acceptable_actions"]) for a, e in zip(acts, mine, strict=True)]),
                "utility_5": mean([utility(a, e["reference_action"], e["acceptable_actions"], 5) for a, e in zip(acts, mine, strict=True)]),
                "escalated": mean([float(a == "ESCALATE") for a in acts]),
            })
    check_table(sweep, rendered, "workflow_by_variant.csv", "Accuracy by variant", expected, ["model", "condition", "variant"])


def test_workflow_parse_quality_per_model_judge_and_run(sweep, rendered):
    n = len(oracle.workflow_selection())
    expected = [{"model": M + b, "judge": "", "run": "", "samples": n, "replies": n, "json": 1.0} for b in oracle.WORKFLOW_MODELS]
    check_table(sweep, rendered, "workflow_parse_table.csv", "Parse quality", expected, ["model", "run"])
