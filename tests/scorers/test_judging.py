"""The one judging helper (`clinical_cf.judging`): role resolution, retries on unreadable verdicts, score metadata.

Judges here are scripted mocks, misbehaving ones included (prose, then a readable verdict; never readable).
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from clinical_cf.judging import ResolvedJudge, ask_judge, resolve_judge
from tests.helpers import MockModel

RETRY = "Reply with JSON only."


def read_verdict(text: str) -> float | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data.get("score") if isinstance(data, dict) and data.get("score") in (0, 0.5, 1) else None


@scorer(metrics=[mean()])
def scripted_judge(retries: int = 2):
    async def score(state: TaskState, target: Target) -> Score:
        judgement = await ask_judge(resolve_judge(), "Judge this.", read_verdict, retry_prompt=RETRY, retries=retries)
        if judgement.verdict is None:
            return Score.unscored(reason="grader_failed", metadata={**judgement.metadata(), "replies": judgement.replies})
        return Score(value=judgement.verdict, metadata={**judgement.metadata(), "replies": judgement.replies})

    return score


def run(judge: MockModel, under_test: str = "mockllm/model", retries: int = 2, roles: dict | None = None):
    log = eval(
        Task(dataset=[Sample(input="x")], scorer=scripted_judge(retries)),
        model=MockModel(under_test, lambda p: "answer").model,
        model_roles=roles if roles is not None else {"judge": judge.model},
        display="none",
    )[0]
    assert log.status == "success", log.error
    return log.samples[0].scores["scripted_judge"]


def test_an_unreadable_verdict_is_asked_again_with_the_retry_prompt():
    replies = iter(["I think it moved somewhat.", json.dumps({"score": 0.5})])
    judge = MockModel("mockllm/judge", lambda prompt: next(replies))
    result = run(judge)
    assert result.value == 0.5
    assert result.metadata["judge_attempts"] == 2
    assert result.metadata["judge_model"] == "mockllm/judge" and result.metadata["judge_role"] == "judge"
    assert result.metadata["self_judged"] is False
    assert judge.calls == {"Judge this.": 1, RETRY: 1}


def test_a_judge_never_readable_is_unscored_after_every_attempt():
    judge = MockModel("mockllm/judge", lambda prompt: "no idea")
    result = run(judge, retries=2)
    assert math.isnan(result.value)  # unscored, never a guessed verdict
    assert result.metadata["judge_attempts"] == 3 and result.metadata["replies"] == ["no idea"] * 3
    assert judge.total_calls == 3


def test_without_retries_the_judge_is_asked_once():
    judge = MockModel("mockllm/judge", lambda prompt: "no idea")
    result = run(judge, retries=0)
    assert result.metadata["judge_attempts"] == 1 and judge.total_calls == 1


def test_self_judging_falls_back_to_judge_alt_and_is_recorded_without_it():
    alt = MockModel("mockllm/alt", lambda prompt: json.dumps({"score": 1}))
    same = MockModel("mockllm/model", lambda prompt: json.dumps({"score": 0}))
    fallback = run(same, roles={"judge": same.model, "judge_alt": alt.model})
    assert (fallback.value, fallback.metadata["judge_role"], fallback.metadata["self_judged"]) == (1, "judge_alt", False)
    alone = run(same, roles={"judge": same.model})
    assert (alone.metadata["judge_role"], alone.metadata["self_judged"]) == ("judge", True)
    unbound = run(same, roles={})
    assert (unbound.metadata["judge_role"], unbound.metadata["self_judged"]) == ("model_under_test", True)


@pytest.mark.asyncio
async def test_retries_need_a_retry_prompt_and_cannot_be_negative():
    judge = ResolvedJudge(MockModel("mockllm/judge", lambda p: "x").model, "judge", False)
    with pytest.raises(ValueError, match="retry prompt"):
        await ask_judge(judge, "p", read_verdict, retries=1)
    with pytest.raises(ValueError, match=">= 0"):
        await ask_judge(judge, "p", read_verdict, retry_prompt=RETRY, retries=-1)


def test_no_scorer_calls_a_judge_model_itself():
    # Every judge goes through clinical_cf.judging.ask_judge: no scorer generates on its own.
    scorers = Path(__file__).resolve().parents[2] / "scorers"
    calls = []
    for path in scorers.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "generate":
                calls.append(f"{path.name}:{node.lineno}")
    assert calls == []
