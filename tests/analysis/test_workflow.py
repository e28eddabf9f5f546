"""Workflow analysis: rows from logs, metrics with seed-clustered CIs, calibration, risk-coverage, paired tests."""

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval

from clinical_cf.analysis.workflow import (
    accuracy_by,
    action_metrics,
    condition_effect,
    late_risk_updates,
    paired_tests,
    reliability_table,
    risk_coverage,
    summary_table,
    workflow_report_table,
    workflow_rows,
    write_tables,
)
from clinical_cf.scorers.workflow import utility
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import MockModel


def row(seed, variant, action, confidence, reference="ANSWER", acceptable=("ANSWER",), p=1, split="test", condition="neutral",
        first_action=None):

    ep = {"reference_action": reference, "acceptable_actions": list(acceptable)}
    return {
        "model": "m",
        "condition": condition,
        "first_action": first_action or action,
        "episode_id": f"{seed}.p{p}.{variant}",
        "seed_id": seed,
        "pair_key": f"{seed}.p{p}",
        "task_class": "triage_handoff",
        "variant": variant,
        "parameterization": p,
        "split": split,
        "epoch": 1,
        "reference_action": reference,
        "acceptable_actions": tuple(acceptable),
        "action": action,
        "confidence": confidence,
        "parse_ok": action is not None,
        "correct": float(action in acceptable),
        "utility_5": utility(action, ep, 5),
        "utility_10": utility(action, ep, 10),
        "escalate_required": reference == "ESCALATE",
        "escalate_acceptable": "ESCALATE" in acceptable,
        "text": "",
        "log": "x",
    }


@pytest.fixture
def toy():
    esc = {"reference": "ESCALATE", "acceptable": ("ESCALATE",)}
    return pd.DataFrame([
        row("s1", "clean", "ANSWER", 0.9), row("s1", "late_risk", "ESCALATE", 0.8, **esc),
        row("s2", "clean", "ANSWER", 0.9), row("s2", "late_risk", "ANSWER", 0.95, **esc),
        row("s3", "clean", "ESCALATE", 0.6), row("s3", "late_risk", "ANSWER", 0.7, **esc),
    ])


def test_action_metrics_and_summary_hand_computed(toy):
    m = action_metrics(toy)
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["utility"] == pytest.approx((1 + 1 + 1 - 5 - 1 - 5) / 6)
    assert m["missed_escalation"] == pytest.approx(2 / 3) and m["unnecessary_escalation"] == pytest.approx(1 / 3)
    table = summary_table(toy, n_resamples=200).iloc[0]
    assert table["episodes"] == 6 and table["seeds"] == 3 and table["utility_5"] == pytest.approx(m["utility"])
    assert table["utility_10"] == pytest.approx((3 - 10 - 1 - 10) / 6)
    assert table["utility_5_low"] <= table["utility_5"] <= table["utility_5_high"]
    assert table["sensitivity"] == pytest.approx(1 / 3) and table["specificity"] == pytest.approx(2 / 3)
    # failures at 0.95, 0.7, 0.6; successes at 0.9, 0.9, 0.8 -> (1 - conf) ranks failures above successes in 6 of 9 pairs
    assert table["failure_auroc"] == pytest.approx(6 / 9)
    by_variant = accuracy_by(toy, "variant", n_resamples=100).set_index("variant")
    assert by_variant.loc["clean", "accuracy"] == pytest.approx(2 / 3) and by_variant.loc["late_risk", "escalated"] == pytest.approx(1 / 3)


def test_reliability_and_risk_coverage(toy):
    bins = reliability_table(toy).set_index("bin_low")
    assert bins.loc[0.9, "episodes"] == 3 and bins.loc[0.9, "accuracy"] == pytest.approx(2 / 3)
    curve = risk_coverage(toy)
    # most confident first: 0.95 (missed escalation), 0.9, 0.9, 0.8, 0.7 (missed), 0.6 (unnecessary)
    assert curve["selective_risk"].iloc[0] == 1.0 and curve["missed_escalation_risk"].iloc[0] == pytest.approx(1 / 3)
    assert curve["missed_escalation_risk"].iloc[-1] == pytest.approx(2 / 3) and curve["coverage"].iloc[-1] == 1.0


def test_paired_tests_at_seed_level_with_holm():
    rows = []
    for i in range(8):
        rows.append(row(f"s{i}", "clean", "ANSWER", 0.9))
        rows.append(row(f"s{i}", "conflict", "ANSWER", 0.9, reference="ESCALATE", acceptable=("ESCALATE",)))
        rows.append(row(f"s{i}", "stale", "ANSWER" if i else "ABSTAIN", 0.9))
    table = paired_tests(pd.DataFrame(rows), n_resamples=200).set_index("variant")
    assert table.loc["conflict", "seeds_clean_better"] == 8 and table.loc["conflict", "sign_test_p"] == pytest.approx(2 / 2**8)
    assert table.loc["stale", "seeds_clean_better"] == 1 and table.loc["stale", "sign_test_p"] == 1.0
    assert table.loc["conflict", "holm_p"] == pytest.approx(2 * 2 / 2**8) and table.loc["conflict", "significant"]
    assert table.loc["conflict", "difference"] == 1.0


def test_condition_effect_and_late_risk_updates():
    esc = {"reference": "ESCALATE", "acceptable": ("ESCALATE",)}
    rows = pd.DataFrame([
        row("s1", "late_risk", "ESCALATE", 0.9, first_action="ANSWER", **esc),
        row("s2", "late_risk", "ESCALATE", 0.9, first_action="ESCALATE", **esc),
        row("s3", "late_risk", "ASK_CLARIFICATION", 0.9, first_action="ANSWER", **esc),
        row("s4", "late_risk", "ANSWER", 0.9, **esc),
        # uncertainty prompting turns two of the escalations into clarification requests (the paper's backfire)
        row("s1", "late_risk", "ASK_CLARIFICATION", 0.5, condition="uncertainty", **esc),
        row("s2", "late_risk", "ASK_CLARIFICATION", 0.5, condition="uncertainty", **esc),
        row("s3", "late_risk", "ESCALATE", 0.5, condition="uncertainty", **esc),
        row("s4", "late_risk", "ANSWER", 0.5, condition="uncertainty", **esc),
    ])
    effect = condition_effect(rows, n_resamples=100).iloc[0]
    assert effect["accuracy_neutral"] == 0.5 and effect["accuracy_uncertainty"] == 0.25 and effect["difference"] == -0.25
    assert effect["escalated_uncertainty"] == 0.25 and effect["episodes"] == 4
    updates = late_risk_updates(rows).set_index("condition").loc["neutral"]
    assert (updates["escalated_after_red_flag"], updates["already_escalated"], updates["never_escalated"]) == (0.25, 0.25, 0.5)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("wf_logs")

    def reader(prompt):
        if "Later message" in prompt:
            return '{"action": "ESCALATE", "confidence": 0.7}'
        return '{"action": "ANSWER", "confidence": 0.9}'

    log = eval(workflow(task_class="triage_handoff"), model=MockModel("mockllm/model", reader).model, display="none", log_dir=str(out))[0]
    assert log.status == "success"
    return out


@pytest.mark.slow  # workflow evals, then the report
def test_rows_from_logs_and_report_table(log_dir, tmp_path):
    rows = workflow_rows([log_dir])
    assert len(rows) == 100 and set(rows["split"]) == {"dev", "test"}
    late = rows[rows["variant"] == "late_risk"].iloc[0]
    assert late["action"] == "ESCALATE" and "Later message" in late["text"] and late["confidence"] == 0.7
    assert late["first_action"] == "ANSWER"  # the red flag arrived after an ANSWER to the request
    summary, md = workflow_report_table([log_dir], n_resamples=100)
    assert summary.iloc[0]["episodes"] == 80  # the test split only
    assert "| model |" in md and "late_risk" in md
    assert write_tables([log_dir], tmp_path / "out").exists()
    assert (tmp_path / "out" / "workflow_paired_tests.csv").exists() and (tmp_path / "out" / "workflow_late_risk_updates.csv").exists()
    empty, note = workflow_report_table([tmp_path / "nothing-here"])
    assert empty.empty and note == "(no workflow logs)"
    assert np.isclose(summary.iloc[0]["parse_rate"], 1.0)
