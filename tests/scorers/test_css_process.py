"""`judge_process` on its own: a judge grades how the agent handled a perturbed tool return; unreadable verdicts stay unscored."""

import json
import math

from inspect_ai import Task, eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.scorers.css_process import judge_process
from clinical_cf.solvers.css_agent import perturbed_observation_agent
from clinical_cf.tasks.css_agent_observation.css_agent_observation import css_agent_observation
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


def agent(messages, tools, tool_choice, config) -> ModelOutput:
    """Reads the labs once, then submits whatever it saw."""
    if not any(m.role == "tool" for m in messages):
        out = ModelOutput.for_tool_call("mockllm/model", "read_chart_section", {"section": "labs"})
    else:
        out = ModelOutput.for_tool_call("mockllm/model", "submit", json.loads(recommendations_json("gemcitabine")))
    out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
    return out


def samples(n: int = 2):
    return list(css_agent_observation(kinds="noise,contradiction", cases=str(HANDWRITTEN_CASES), samples=None).dataset)[:n]


def run(judge, retries=2, roles=True):
    task = Task(dataset=samples(), solver=perturbed_observation_agent(), scorer=judge_process(retries=retries))
    log = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=agent),
        model_roles={"judge": judge.model} if roles else None,
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log


def test_verdict_and_critical_error_are_recorded_per_perturbation_kind():
    judge = MockModel(
        "mockllm/judge",
        lambda p: "Verdict follows.\n" + json.dumps({"score": 0.5, "critical_error": "[PERTURBED SECTION]" in p, "rationale": "partly"}),
    )
    log = run(judge)
    for sample in log.samples:
        score = sample.scores["judge_process"]
        assert score.value == 0.5
        assert score.metadata["kind"] == sample.metadata["perturbation"]["kind"]
        assert score.metadata["judge_role"] == "judge" and not score.metadata["self_judged"]
        assert score.metadata["trace"]["sections_read"] == ["labs"]
        # The judge saw the trace with the perturbed section marked only when the agent read it.
        assert score.metadata["critical_error"] == (sample.metadata["perturbation"]["section"] == "labs")
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    kinds = {s.metadata["perturbation"]["kind"] for s in log.samples}
    for kind in kinds:
        assert metrics[f"score_{kind}"] == 0.5


def test_unreadable_verdicts_are_retried_then_left_unscored():
    judge = MockModel("mockllm/judge", lambda p: "I think it went fine overall.")
    log = run(judge, retries=1)
    for sample in log.samples:
        score = sample.scores["judge_process"]
        assert math.isnan(score.value) and score.reason == "grader_failed"
        assert "could not be parsed" in score.explanation
    assert judge.total_calls == 2 * len(log.samples)  # the first try and one retry each


def test_without_a_judge_role_the_agent_judges_itself_and_says_so():
    def both(messages, tools, tool_choice, config):
        if tools:
            return agent(messages, tools, tool_choice, config)
        out = ModelOutput.from_content("mockllm/model", json.dumps({"score": 1, "critical_error": False, "rationale": "ok"}))
        out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
        return out

    task = Task(dataset=samples(1), solver=perturbed_observation_agent(), scorer=judge_process())
    log = eval(task, model=get_model("mockllm/model", custom_outputs=both), display="none")[0]
    assert log.status == "success", log.error
    score = log.samples[0].scores["judge_process"]
    assert score.value == 1.0 and score.metadata["self_judged"] and score.metadata["judge_role"] == "model_under_test"
