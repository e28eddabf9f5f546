"""Workflow controller: detectors, header stripping, the two-threshold policy, grid search, OOV audit, CLI."""

import json

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval

from clinical_cf.analysis.workflow_controller import (
    ControllerParams,
    apply_controller,
    detect,
    detector_table,
    grid_search,
    main,
    oov_audit,
    strip_headers,
    transfer_table,
)
from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.core.errors import CatalogError
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import FIXTURES, MockModel


def test_detectors_on_small_texts():
    assert detect("The nurse wrote: dark stools, probably the iron, nothing to do.") == {
        "conflict": True,
        "missing": False,
        "high_risk": False,
    }
    assert detect("The dose is not documented anywhere.")["missing"]
    assert detect("He collapsed and his systolic pressure is 78.")["high_risk"]
    assert detect("Routine review; observations normal.") == {"conflict": False, "missing": False, "high_risk": False}


def test_structural_headers_are_stripped_before_detection():
    text = "Conflicting information:\nChart:\nAll well.\n\nLater message (arrived after the request):\nHe feels fine."
    assert strip_headers(text) == "All well.\nHe feels fine."
    assert detect("Missing information:\nAll documented.")["missing"] is False  # a header alone does not fire
    assert detect("Missing information:\nAll documented.", strip=False)["missing"] is True


def test_detector_precision_recall_on_a_fixture():
    frame = pd.DataFrame([
        {"episode_id": "a", "text": "probably nothing", "variant": "conflict", "reference_action": "ESCALATE"},
        {"episode_id": "b", "text": "all fine", "variant": "conflict", "reference_action": "ASK_CLARIFICATION"},
        {"episode_id": "c", "text": "it is probably fine", "variant": "clean", "reference_action": "ANSWER"},
        {"episode_id": "c", "text": "it is probably fine", "variant": "clean", "reference_action": "ANSWER"},  # duplicate dropped
        {"episode_id": "d", "text": "he collapsed", "variant": "late_risk", "reference_action": "ESCALATE"},
    ])
    table = detector_table(frame).set_index(["detector", "target"])
    conflict = table.loc[("conflict", "variant == conflict")]
    assert (conflict["tp"], conflict["fp"], conflict["fn"]) == (1, 1, 1) and conflict["precision"] == 0.5
    high = table.loc[("high_risk", "reference == ESCALATE")]
    assert high["precision"] == 1.0 and high["recall"] == 0.5


def test_detectors_on_the_bundled_episodes_and_foreign_wording():
    frame = pd.DataFrame([{"episode_id": e.id, "text": e.text(), "variant": e.variant, "reference_action": e.reference_action}
                          for e in load_episodes(EPISODES_PATH)])
    table = detector_table(frame).set_index(["detector", "target"])
    # Documented in-benchmark numbers: the conflict detector is precise but misses a third; a deleted fact
    # leaves no words behind, so the lexical missing detector finds none of them.
    assert table.loc[("conflict", "variant == conflict"), "precision"] == 1.0
    assert 0.5 < table.loc[("conflict", "variant == conflict"), "recall"] < 0.8
    assert table.loc[("missing", "variant == missing"), "recall"] == 0.0
    assert table.loc[("high_risk", "reference == ESCALATE"), "precision"] >= 0.7
    foreign = {e["variant"]: detect("\n".join(t["content"] for t in e["turns"]))
               for e in map(json.loads, (FIXTURES / "workflow_episodes_user.jsonl").read_text().splitlines())}
    assert not foreign["conflict"]["conflict"]  # "thought to be from the iron, carry on": outside the vocabulary


def test_apply_controller_two_thresholds():
    actions = ["ANSWER", "ANSWER", "ABSTAIN", "ANSWER", None]
    risk = np.array([1.2, 0.6, 0.6, 0.1, 1.5])
    assert apply_controller(actions, risk, t_high=1.0, t_mid=0.5) == ["ESCALATE", "ASK_CLARIFICATION", "ABSTAIN", "ANSWER", "ESCALATE"]
    params = ControllerParams(1.0, 0.5, 0.0, 1.0, 1.0, 0.5)
    flags = np.array([[1, 0, 0], [0, 0, 1]], dtype=float)
    assert params.risk(np.array([0.8, np.nan]), flags) == pytest.approx([0.2 + 0.5, 0.5 + 1.0])


def toy_split(split, seeds, task_class="triage_handoff"):
    """Conflict-flagged and red-flag episodes need ESCALATE; the model always answers, confidently on clean ones."""
    rows = []
    for seed in seeds:
        for variant, text, reference, acceptable, conf in (
            ("clean", "routine update", "ANSWER", ("ANSWER",), 0.95),
            ("conflict", "bleeding, probably nothing", "ESCALATE", ("ESCALATE",), 0.9),
            ("late_risk", "now he collapsed", "ESCALATE", ("ESCALATE",), 0.9),
            ("missing", "update the dose", "ASK_CLARIFICATION", ("ASK_CLARIFICATION",), 0.5),
        ):
            rows.append({"model": "m", "condition": "neutral", "episode_id": f"{seed}.{variant}", "seed_id": seed, "split": split,
                         "task_class": task_class,
                         "variant": variant, "text": text, "reference_action": reference, "acceptable_actions": acceptable,
                         "escalate_required": reference == "ESCALATE", "escalate_acceptable": "ESCALATE" in acceptable,
                         "action": "ANSWER", "confidence": conf, "correct": float(reference == "ANSWER")})
    return pd.DataFrame(rows)


def test_grid_search_on_a_toy_dev_split():
    dev = toy_split("dev", ["d1", "d2"])
    params, dev_metrics = grid_search(dev, "full")
    # Escalate on either detector, ask when only uncertainty is raised: every toy episode right.
    assert dev_metrics["dev_accuracy"] == 1.0 and dev_metrics["dev_utility"] == 1.0
    assert params.w_c > 0 and params.w_r > 0 and params.w_u > 0 and params.w_m == 0  # the simplest perfect policy
    flags = np.array([detect(t) for t in dev["text"]])
    flags = np.array([[f["conflict"], f["missing"], f["high_risk"]] for f in flags], dtype=float)
    risk = params.risk(dev["confidence"].to_numpy(float), flags)
    assert apply_controller(list(dev["action"]), risk, params.t_high, params.t_mid) == list(dev["reference_action"])
    workflow_params, workflow_metrics = grid_search(dev, "workflow_only")
    assert workflow_params.w_u == 0 and workflow_metrics["dev_utility"] == pytest.approx((2 + 4 + 0) / 8)
    confidence_params, confidence_metrics = grid_search(dev, "confidence_only")
    assert (confidence_params.w_c, confidence_params.w_m, confidence_params.w_r) == (0, 0, 0)
    assert confidence_metrics["dev_utility"] < dev_metrics["dev_utility"]
    assert grid_search(dev, "full") == (params, dev_metrics)  # deterministic
    with pytest.raises(ValueError):
        grid_search(dev.iloc[0:0], "full")


def test_cross_task_transfer():
    rows = pd.concat([toy_split("dev", ["a1"], "triage_handoff"), toy_split("test", ["a2", "a3"], "triage_handoff"),
                      toy_split("dev", ["b1"], "patient_messaging"), toy_split("test", ["b2"], "patient_messaging")],
                     ignore_index=True)
    table = transfer_table(rows).set_index("held_out_class")
    assert set(table.index) == {"triage_handoff", "patient_messaging"}
    assert table.loc["triage_handoff", "test_episodes"] == 8
    assert (table["utility_transferred"] == 1.0).all() and (table["utility_model"] < 0).all()


def test_oov_audit_triggers_fire_paraphrases_do_not():
    detail, summary = oov_audit()
    assert len(detail) == 30 and (summary["concepts"] == 10).all()
    assert (summary["trigger_recall"] == 1.0).all()
    assert (summary["paraphrase_recall"] == 0.0).all()


def test_oov_audit_refuses_an_unbalanced_file(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("concepts:\n- {id: x, detector: conflict, concept: abc, trigger: probably, paraphrase: perhaps}\n")
    with pytest.raises(CatalogError, match="10 concepts"):
        oov_audit(path)


@pytest.mark.slow  # workflow evals, then the controller's grid search
def test_cli_on_logs(tmp_path, capsys):
    def reader(prompt):
        if "Later message" in prompt:
            return '{"action": "ESCALATE", "confidence": 0.7}'
        return '{"action": "ANSWER", "confidence": 0.9}'

    logs = tmp_path / "logs"
    log = eval(workflow(task_class="patient_messaging"), model=MockModel("mockllm/model", reader).model, display="none",
               log_dir=str(logs))[0]
    assert log.status == "success"
    assert main([str(logs), "--out", str(tmp_path / "out"), "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "Lexical OOV audit" in printed and "registered (matches its lock)" in printed
    table = pd.read_csv(tmp_path / "out" / "workflow_controller.csv")
    assert list(table["policy"]) == ["model", "full", "workflow_only", "confidence_only"]
    model_row, full = table.iloc[0], table.iloc[1]
    assert full["dev_utility"] >= 0 and full["utility"] >= model_row["utility"]  # conflict flags recover missed escalations
    params = json.loads((tmp_path / "out" / "workflow_controller_params.json").read_text())
    assert set(params["mockllm/model | neutral"]) == {"full", "workflow_only", "confidence_only"}
