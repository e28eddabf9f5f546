"""The eval_set example of docs/other-harnesses.md: clinical_cf next to a lab's own task, on mock models, in one eval set."""

import importlib.util
import json
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from helpers import MockModel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a full eval_set run: a CSS task next to a lab task

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lab_eval_set.py"


def load_example():
    spec = importlib.util.spec_from_file_location("lab_eval_set", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_under_test(prompt: str) -> str:
    if "Convert 2 g" in prompt:
        return "2000"
    if "Convert 500 mL" in prompt:
        return "0.5 L"
    if "<packet>" in prompt:
        return "Summary: resected or not, see packet."
    return json.dumps({"recommendations": [{"treatment": "adjuvant chemotherapy", "rationale": "stage"}],
                       "not_recommended": []})


def judge(prompt: str) -> str:
    return json.dumps({"score": 0, "rationale": "recommendations did not change"})


def test_eval_set_runs_css_family_d_next_to_a_lab_task(tmp_path):
    example = load_example()
    model, judge_model = MockModel("mockllm/model", model_under_test), MockModel("mockllm/judge", judge)
    log_dir = tmp_path / "suite"
    success, logs = example.run_suite(model.model, judge_model.model, str(log_dir), limit=2, display="none")
    assert success
    by_task = {log.eval.task: log for log in logs}
    assert set(by_task) == {"clinical_cf/css_family_d", "lab_unit_conversion"}
    css = by_task["clinical_cf/css_family_d"]
    assert css.status == "success" and len(css.samples or read_eval_log(css.location).samples) == 2
    # The judge role reached the CSS scorer: the scripted judge said "no change" (score 0).
    assert css.results.scores[0].metrics["css"].value == 0.0
    lab = by_task["lab_unit_conversion"]
    assert lab.results.scores[0].metrics["accuracy"].value == 1.0
    assert len(list_eval_logs(str(log_dir))) == 2

    # Rerunning the finished set does nothing new: eval_set sees both logs complete.
    calls = model.total_calls
    success, _ = example.run_suite(model.model, judge_model.model, str(log_dir), limit=2, display="none")
    assert success and model.total_calls == calls
