"""The paper's judge configuration with real provider classes (no request is sent)."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

from clinical_cf.judging import resolve_judge


@solver
def record_judge():
    async def solve(state, generate):
        judge = resolve_judge()
        state.metadata.update(judge_model=str(judge.model), judge_role=judge.role, self_judged=judge.self_judged)
        return state

    return solve


@pytest.fixture(autouse=True)
def dummy_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used")


@pytest.mark.parametrize(
    "under_test, expected",
    [
        ("openai/gpt-5", ("openai/gpt-5.4", "judge")),
        ("openai/gpt-5.4", ("anthropic/claude-opus-4-7", "judge_alt")),  # never judges itself
    ],
)
def test_paper_dispatch(under_test, expected):
    log = eval(
        Task(dataset=[Sample(input="x")], solver=record_judge()),
        model=under_test,
        model_roles={"judge": "openai/gpt-5.4", "judge_alt": "anthropic/claude-opus-4-7"},
        display="none",
    )[0]
    assert log.status == "success", log.error
    meta = log.samples[0].metadata
    assert (meta["judge_model"], meta["judge_role"]) == expected
    assert meta["self_judged"] is False
