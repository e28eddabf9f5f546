"""lm-evaluation-harness export: task files, hooks on a hand-computed fixture, and a real lm_eval run."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clinical_cf.cli import main
from clinical_cf.exports.lm_eval import TASKS, export_lm_eval
from clinical_cf.exports.lm_eval_hooks import gf_cf_gap, mean_present, pair_accuracy, process_medpic, process_workflow
from helpers import llama_server


class _Loader(yaml.SafeLoader):
    """Reads lm-eval's `!function module.name` tags as plain strings."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("lm_eval_tasks")
    export_lm_eval(out)
    return out


def test_task_files(exported):
    for task in TASKS:
        config = yaml.load((exported / f"{task.name}.yaml").read_text(), Loader=_Loader)
        assert config["task"] == task.name
        assert config["output_type"] == "generate_until"
        assert config["doc_to_text"] == "{{prompt}}" and config["doc_to_target"] == "{{target}}"
        data = Path(config["dataset_kwargs"]["data_files"]["test"])
        docs = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
        assert len(docs) == len(task.docs()) > 0
        assert all(doc["prompt"] and doc["target"] for doc in docs)
        assert config["process_results"] == f"!function utils.{task.process_results}"
        assert [m["metric"] for m in config["metric_list"]] == [m for m, _ in task.metrics]
    groups = {p.stem: yaml.safe_load(p.read_text()) for p in exported.glob("clinical_cf*.yaml") if "group" in p.read_text()}
    assert groups["clinical_cf"]["task"] == ["clinical_cf_medpic", "clinical_cf_workflow"]
    assert groups["clinical_cf_workflow"]["task"] == ["clinical_cf_workflow_neutral", "clinical_cf_workflow_uncertainty"]


def test_css_is_refused_with_the_reason(tmp_path, capsys):
    assert main(["export", "lm-eval", "--out", str(tmp_path), "--suite", "css"]) == 2
    assert "CSS needs two arms and a judge" in capsys.readouterr().err


def test_aggregations_on_a_hand_computed_fixture():
    # Two pairs: p1 both right, p2 one wrong; p3 lost its partner to a --limit and is skipped.
    assert pair_accuracy([("p1", True), ("p1", True), ("p2", True), ("p2", False), ("p3", True), (None, True)]) == 0.5
    # GF 2/2 right, CF 1/3 right: gap = 1 - 1/3.
    assert gf_cf_gap([("gf", True), ("gf", True), ("cf", True), ("cf", False), ("cf", False)]) == pytest.approx(2 / 3)
    assert mean_present([None, 1.0, 0.0, None, 1.0]) == pytest.approx(2 / 3)
    assert math.isnan(mean_present([None, None]))


def test_process_medpic_scores_like_the_inspect_scorer():
    doc = {"options": {"A": "ibuprofen", "B": "paracetamol", "C": "naproxen", "D": "None of the above"},
           "answer": ["A", "C"], "kind": "cf", "operation": "activation", "pair_id": "p1"}
    right = process_medpic(doc, ["Both NSAIDs are unsafe after 20 weeks.\nANSWER: C, A"])
    assert right["accuracy"] == 1.0 and right["activation_accuracy"] == 1.0 and right["gf_accuracy"] is None
    assert right["pair_accuracy"] == ("p1", True) and right["parse_rate"] == 1.0
    wrong = process_medpic(doc, ["ANSWER: A"])
    assert wrong["accuracy"] == 0.0 and wrong["deactivation_accuracy"] is None
    # As pyarrow hands it over when another question has a sixth option.
    padded = {**doc, "options": {**doc["options"], "F": None}}
    assert process_medpic(padded, ["ANSWER: A, C"])["accuracy"] == 1.0
    assert process_medpic(padded, ["ANSWER: F"])["parse_rate"] == 0.0
    unparsed = process_medpic(doc, ["I cannot say."])
    assert unparsed["accuracy"] == 0.0 and unparsed["parse_rate"] == 0.0


def test_process_workflow_uses_the_suite_utility():
    doc = {"reference_action": "ESCALATE", "acceptable_actions": ["ESCALATE"], "cost_ratio": 5.0}
    missed = process_workflow(doc, ['{"action": "answer", "confidence": 0.9, "reason": "fine"}'])
    assert missed == {"accuracy": 0.0, "utility": -5.0, "missed_escalation": 1.0, "unnecessary_escalation": None,
                      "parse_rate": 1.0}
    routine = {"reference_action": "ANSWER", "acceptable_actions": ["ANSWER"], "cost_ratio": 10.0}
    assert process_workflow(routine, ["Escalate"])["utility"] == -1.0
    assert process_workflow(routine, ["Escalate"])["unnecessary_escalation"] == 1.0
    unparsed = process_workflow(routine, ["hmm"])
    assert unparsed["parse_rate"] == 0.0 and unparsed["utility"] == 0.0 and unparsed["accuracy"] == 0.0


@pytest.mark.slow  # lm_eval against llama.cpp's server on loopback
@pytest.mark.timeout(1200)  # the subprocess alone may take 900 s
def test_lm_eval_runs_the_exported_tasks_on_the_local_model(exported, tmp_path):
    """The command in docs/other-harnesses.md: lm_eval's local-chat-completions against llama.cpp's server on loopback."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf"),
           "OPENAI_API_KEY": "not-needed"}
    with llama_server(tmp_path, n_ctx=4096) as url:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "lm_eval"), "--include_path", str(exported), "--tasks", "clinical_cf",
             "--model", "local-chat-completions", "--apply_chat_template", "--limit", "3",
             "--model_args", f"model=smollm2,base_url={url}/chat/completions,tokenizer_backend=None,max_retries=1,num_concurrent=1",
             "--gen_kwargs", "max_gen_toks=96", "--output_path", str(tmp_path / "out")],
            env=env, capture_output=True, text=True, timeout=900,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [results_file] = list((tmp_path / "out").rglob("results_*.json"))
    results = json.loads(results_file.read_text())["results"]
    for task in TASKS:
        metrics = results[task.name]
        for metric, _ in task.metrics:
            assert f"{metric},none" in metrics, (task.name, metric, sorted(metrics))
        assert 0.0 <= metrics["accuracy,none"] <= 1.0
        assert 0.0 <= metrics["parse_rate,none"] <= 1.0
