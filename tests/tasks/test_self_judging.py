"""Self-judging is refused unless asked for (issue 38 item 8): a judged task with no judge role bound stops with one line
naming the roles to bind; `-T self_judging=allow` lets the model under test judge itself and every score says so;
Inspect's conventional `grader` role is a judge."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from clinical_cf.judging import judge_bound, missing_judge
from clinical_cf.suites import create_task, task_function
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

ARGS = {"cases": str(HANDWRITTEN_CASES), "unreviewed": "allow", "controls": "none"}
ROLES = "--model-role judge=<provider>/<model> or --model-role grader=<provider>/<model>"


def _model() -> MockModel:
    return MockModel("mockllm/model", lambda prompt: recommendations_json("Surgery") if "ecommend" in prompt else "Summary.")


def _judge(name: str = "mockllm/judge") -> MockModel:
    return MockModel(name, lambda prompt: '{"score": 1, "explanation": "moved as expected"}')


@pytest.mark.slow  # two whole evals (about 15 s on two busy cores); test_the_refusal_names_the_roles_and_the_opt_in is its fast part
def test_a_judged_task_with_no_judge_stops_before_asking_anything_naming_the_roles(tmp_path):
    """Built by Inspect from its name (as `inspect eval tasks/css_family_d` does) or before `eval()`, the run stops in each
    sample's setup step, before the model under test is asked anything, with one line naming the roles and the opt-in."""
    for task in (task_function("css_family_d"), create_task("css_family_d", **ARGS)):
        model = _model()
        [log] = inspect_eval(task, task_args=ARGS if callable(task) and not hasattr(task, "dataset") else {}, model=model.model,
                             log_dir=str(tmp_path), display="none")
        assert log.status == "error" and model.total_calls == 0
        message = log.error.message
        assert ROLES in message and "-T self_judging=allow" in message and "\n" not in message.strip()


def test_the_refusal_names_the_roles_and_the_opt_in():
    message = missing_judge("this CSS task", "refuse")
    assert message.startswith("this CSS task is judged and no judge is bound") and ROLES in message
    assert "-T self_judging=allow" in message and "\n" not in message
    assert missing_judge("this CSS task", "allow") is None
    with pytest.raises(ValueError, match="self_judging must be one of refuse, allow"):
        missing_judge("this CSS task", "yes")


def test_self_judging_is_an_explicit_opt_in_that_every_score_records(tmp_path):
    model = _model()
    [log] = inspect_eval(task_function("css_family_d"), task_args={**ARGS, "self_judging": "allow"}, model=model.model,
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.eval.task_args["self_judging"] == "allow"
    scores = [s.scores["judge_direction"] for s in log.samples]
    assert scores and all(s.metadata["self_judged"] and s.metadata["judge_role"] == "model_under_test" for s in scores)


@pytest.mark.parametrize("role", ["judge", "grader"])
def test_a_bound_judge_or_grader_judges(tmp_path, role):
    model, judge = _model(), _judge()
    [log] = inspect_eval(task_function("css_family_d"), task_args=ARGS, model=model.model, model_roles={role: judge.model},
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success" and judge.total_calls > 0
    for sample in log.samples:
        metadata = sample.scores["judge_direction"].metadata
        assert (metadata["judge_model"], metadata["judge_role"], metadata["self_judged"]) == ("mockllm/judge", role, False)


def test_a_task_that_judges_nothing_needs_no_judge(tmp_path):
    """MedPIC asks a judge only for its rationale analysis; its GF-only variant does not even take the argument."""
    assert "self_judging" not in __import__("inspect").signature(task_function("medpic_gf")).parameters
    model = MockModel("mockllm/model", lambda prompt: '{"answer": ["A"]}')
    [log] = inspect_eval(task_function("medpic_cf"), task_args={"populations": "renal"}, model=model.model, limit=2,
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    [refused] = inspect_eval(task_function("medpic_cf"), task_args={"rationale_judge": True}, model=model.model, limit=2,
                             log_dir=str(tmp_path), display="none")
    assert refused.status == "error" and ROLES in refused.error.message


def test_the_check_is_a_setup_step_of_judged_tasks_only():
    assert create_task("css_family_d", **ARGS).setup is not None
    assert create_task("css_family_d", **ARGS, self_judging="allow").setup is None
    assert create_task("medpic_gf").setup is None
    assert callable(judge_bound("this task"))
