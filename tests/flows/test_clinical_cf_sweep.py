"""The Inspect Flow sweep: every suite x two models x judges on mock models, with the self-judging fallback, resumed on rerun."""

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model
from inspect_flow.api import init, run

from clinical_cf.exports.register import published_version
from clinical_cf.suites import SUITES
from helpers import MockModel, clinician, recommendations_json

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # an Inspect Flow sweep of every suite, run twice

FLOW_FILE = Path(__file__).resolve().parents[2] / "flows" / "clinical_cf_sweep.py"


def load_flow():
    """The flow file as `flow run` reads it: a plain Python file, not part of the package."""
    spec = importlib.util.spec_from_file_location("clinical_cf_sweep", FLOW_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def any_suite(prompt: str) -> str:
    """A model that answers each suite's prompt in its own format, and judges when asked to."""
    if prompt.startswith("You are auditing"):
        return verdicts(prompt)
    if "Candidate diagnoses:" in prompt:
        return clinician(prompt)
    if "Case summary:" in prompt:
        return recommendations_json("capecitabine" if "HER2" in prompt else "surveillance")
    if "Summarise the patient packet" in prompt:
        return "Summary: " + " ".join(prompt.split()[-40:])
    if "ANSWER: <letter" in prompt:
        return "The rule applies to this patient.\nANSWER: A"
    return json.dumps({"action": "ANSWER", "confidence": 0.7, "reason": "routine"})


def verdicts(prompt: str) -> str:
    return json.dumps({"score": 1, "rationale": "moved as expected"})


def flow_model(mock: MockModel):
    """The mock as a model whose outputs come from a plain function (Flow writes the spec, models included, to the log dir)."""

    def outputs(messages, tools, tool_choice, config):
        return mock(messages, tools, tool_choice, config)

    return get_model(mock.name, custom_outputs=outputs)


def test_flow_file_cli_entry_builds_the_matrix():
    flow = load_flow()
    spec = flow.clinical_cf_sweep(models="prov/a, prov/b", judges="prov/b,prov/j", log_dir="x", suites="css,workflow")
    pairs = [(t.name, str(t.model), dict(t.model_roles or {})) for t in spec.tasks]
    assert ("clinical_cf/workflow", "prov/a", {}) in pairs and ("clinical_cf/workflow", "prov/b", {}) in pairs
    # The judge-free task runs once per model; the judged one once per (model, judge).
    assert sum(1 for name, _, _ in pairs if name == "clinical_cf/workflow") == 2
    assert ("clinical_cf/css", "prov/a", {"judge": "prov/b"}) in pairs
    # prov/b would judge itself: the next judge is bound as judge_alt.
    assert ("clinical_cf/css", "prov/b", {"judge": "prov/b", "judge_alt": "prov/j"}) in pairs
    assert len(pairs) == 2 + 4
    # A relative log dir is taken from where `flow run` starts, as Inspect's --log-dir is.
    assert spec.log_dir == str(Path("x").resolve())
    all_tasks = flow.clinical_cf_sweep(models="prov/a", log_dir="x", suites="medpic", tasks="all")
    assert sorted(t.name for t in all_tasks.tasks) == sorted(f"clinical_cf/{n}" for n in SUITES["medpic"].tasks)
    with pytest.raises(ValueError, match="unknown suites"):
        flow.clinical_cf_sweep(models="prov/a", suites="oncology")
    with pytest.raises(ValueError, match="at least one model"):
        flow.clinical_cf_sweep(models="")


def test_two_model_sweep_runs_every_suite_and_resumes(tmp_path, monkeypatch):
    # As in an activated environment: Flow records the run's packages with this environment's uv,
    # offline (it would otherwise ask the index for hashes; without them it only warns).
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("UV_OFFLINE", "1")
    # Flow remembers the last log directory (for `flow run --resume`) in the user data dir.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    flow = load_flow()
    a, b, judge = MockModel("mockllm/a", any_suite), MockModel("mockllm/b", any_suite), MockModel("mockllm/j", verdicts)
    spec = flow.sweep_spec(
        models=[flow_model(a), flow_model(b)],
        judges=[flow_model(b), flow_model(judge)],
        log_dir=str(tmp_path / "sweep"),
        limit=2,
        store=None,
        options={"display": "none", "max_tasks": 2},
    )
    init(display="none", dotenv_base_dir=None)
    result = run(spec, base_dir=str(tmp_path))
    assert result.success
    logs = [read_eval_log(log.location) for log in result.logs]
    # Three judge-free suites x 2 models, and CSS x 2 models x 2 judges.
    assert len(logs) == 3 * 2 + 2 * 2
    assert {log.eval.task.split("/")[-1] for log in logs} == {s.main_task for s in SUITES.values()}
    for log in logs:
        assert log.status == "success", log.error
        suite = log.eval.task.split("/")[-1]
        assert log.eval.task_version == published_version(next(n for n, s in SUITES.items() if s.main_task == suite))
        assert len(log.samples) == 2

    css_logs = [log for log in logs if log.eval.task.endswith("/css")]
    by_pair = {(log.eval.model, log.eval.model_roles["judge"].model): log for log in css_logs}
    assert set(by_pair) == {("mockllm/a", "mockllm/b"), ("mockllm/a", "mockllm/j"), ("mockllm/b", "mockllm/b"), ("mockllm/b", "mockllm/j")}
    # Model b bound as its own judge: the scorer falls back to judge_alt, and says so.
    fallback = by_pair[("mockllm/b", "mockllm/b")]
    assert fallback.eval.model_roles["judge_alt"].model == "mockllm/j"
    for sample in fallback.samples:
        score = next(iter(sample.scores.values()))
        assert score.metadata["judge_role"] == "judge_alt" and not score.metadata["self_judged"]
    for sample in by_pair[("mockllm/a", "mockllm/b")].samples:
        assert next(iter(sample.scores.values())).metadata["judge_model"] == "mockllm/b"

    # Rerunning the same spec resumes: every log is complete, so nothing is generated again.
    calls = (a.total_calls, b.total_calls, judge.total_calls)
    again = run(spec, base_dir=str(tmp_path))
    assert again.success
    assert (a.total_calls, b.total_calls, judge.total_calls) == calls
    assert sorted(Path(log.location).name for log in again.logs) == sorted(Path(log.location).name for log in result.logs)
