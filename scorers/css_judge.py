"""The CSS judge: did the recommendations move in the pre-registered direction?

The judge is a model role (`--model-role judge=...`). When it resolves to the model under
test, role `judge_alt` judges instead (the CSS paper's self-judging rule); each score
records which model and role judged it. The judge sees only the two recommendation lists,
the expected change and the scoring rule, never the chart, and returns
{"score": 0 | 0.5 | 1, "rationale": ...}. A verdict that cannot be parsed after retries
is `Score.unscored(reason="grader_failed")`, which Inspect counts as unscored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from clinical_cf.scorers.metrics import agent_trace, control_stability, css, css_stderr, family_css, verdict_shares
from clinical_cf.solvers.css import CSSArms, first_json_object, format_recommendations

JUDGE_PROMPT = """You are auditing whether a clinical AI updated its oncology tumor-board recommendations correctly after one fact in the patient's chart was changed. You do not see the chart. You see the recommendations made before the change (BASELINE) and after it (COUNTERFACTUAL), the pre-registered expected change, and the scoring rule.

BASELINE RECOMMENDATIONS:
{baseline}

COUNTERFACTUAL RECOMMENDATIONS:
{counterfactual}

EXPECTED CHANGE (pre-registered):
{expected_change}

SCORING RULE:
{scoring_rule}

Compare the two lists against the expected change and apply the scoring rule. Reply with a JSON object only:
{{"score": <0, 0.5 or 1>, "rationale": "<at most three sentences>"}}"""

RETRY_PROMPT = 'Your reply could not be read. Reply with only a JSON object such as {"score": 0.5, "rationale": "..."}; score must be 0, 0.5 or 1.'

VALID_SCORES = (0.0, 0.5, 1.0)

VERDICT_SCHEMA = ResponseSchema(
    name="verdict",
    description="CSS verdict: 0, 0.5 or 1 with a short rationale.",
    json_schema=JSONSchema(
        type="object",
        properties={
            "score": JSONSchema(type="number", enum=list(VALID_SCORES)),
            "rationale": JSONSchema(type="string", maxLength=500),
        },
        required=["score", "rationale"],
    ),
)


@dataclass(frozen=True)
class Verdict:
    score: float
    rationale: str


@dataclass(frozen=True)
class ResolvedJudge:
    model: Model
    role: str
    self_judged: bool


def resolve_judge(role: str = "judge", fallback_role: str = "judge_alt") -> ResolvedJudge:
    """The judge for the current sample, avoiding self-judging where a fallback role exists."""
    under_test = get_model()
    roles = model_roles()
    # Each role is resolved only when it is bound, so `required=True` states that a bound role must resolve.
    judge = get_model(role=role, required=True) if role in roles else under_test
    if _same_model(judge, under_test):
        if fallback_role in roles:
            return ResolvedJudge(get_model(role=fallback_role, required=True), fallback_role, False)
        return ResolvedJudge(judge, role if role in roles else "model_under_test", True)
    return ResolvedJudge(judge, role, False)


def _same_model(a: Model, b: Model) -> bool:
    return str(a) == str(b) and a.api.base_url == b.api.base_url


def parse_verdict(text: str) -> Verdict | None:
    """Read {"score": ..., "rationale": ...}; accept a bare `score: x` line as a fallback."""
    data = first_json_object(text, lambda d: _as_score(d.get("score")) is not None)
    if data is not None:
        return Verdict(_as_score(data["score"]), str(data.get("rationale") or data.get("reason") or "").strip())  # type: ignore[arg-type]
    match = re.search(r"\bscore\b\W{0,4}(1(?:\.0+)?|0?\.5|0(?:\.0+)?)(?![\d.])", text, re.IGNORECASE)
    if match:
        score = _as_score(match.group(1))
        if score is not None:
            return Verdict(score, text.strip()[:500])
    return None


def _as_score(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number in VALID_SCORES else None


@scorer(
    metrics=[css(), css_stderr(), family_css(), verdict_shares(), control_stability()],
)
def judge_direction(
    judge_role: str = "judge", fallback_role: str = "judge_alt", retries: int = 2, json_schema: bool = True
) -> Scorer:
    """Score {0, 0.5, 1}: did the counterfactual recommendations update in the expected direction?

    Args:
        judge_role: Model role of the judge.
        fallback_role: Role used when the judge would be the model under test.
        retries: Extra attempts when the judge's reply cannot be parsed.
        json_schema: Send the verdict's JSON Schema as `response_schema`.
    """
    config = GenerateConfig(response_schema=VERDICT_SCHEMA if json_schema else None)

    async def score(state: TaskState, target: Target) -> Score:
        arms = state.store_as(CSSArms)
        meta = state.metadata
        judge = resolve_judge(judge_role, fallback_role)
        if judge.self_judged:
            transcript().info(
                f"Judge is the model under test ({judge.model}); pass --model-role {fallback_role}=... to avoid self-judging."
            )
        baseline = format_recommendations(arms.baseline)
        counterfactual = format_recommendations(arms.counterfactual)
        messages: list[ChatMessage] = [
            ChatMessageUser(
                content=JUDGE_PROMPT.format(
                    baseline=baseline,
                    counterfactual=counterfactual,
                    expected_change=meta["expected_change"],
                    scoring_rule=meta["scoring_rule"],
                )
            )
        ]
        trace = arms.counterfactual.trace if arms.counterfactual else None
        metadata = {
            "trace": None if trace is None else {
                **trace.model_dump(),
                "procedures_read": trace.procedures_read,
                "changed_section_read": trace.changed_section_read,
            },
            "judge_model": str(judge.model),
            "judge_role": judge.role,
            "self_judged": judge.self_judged,
            "baseline_recommendations": baseline,
            "counterfactual_recommendations": counterfactual,
            "family": meta.get("family"),
            "intervention_id": meta.get("intervention_id"),
        }
        replies: list[str] = []
        for _ in range(retries + 1):
            output = await judge.model.generate(messages, config=config)
            replies.append(output.completion)
            verdict = parse_verdict(output.completion)
            if verdict is not None:
                return Score(
                    value=verdict.score,
                    answer=counterfactual,
                    explanation=(
                        f"{verdict.rationale}\n\nBASELINE:\n{baseline}\n\nCOUNTERFACTUAL:\n{counterfactual}\n\n"
                        f"Judged by {judge.model} (role {judge.role})."
                    ),
                    metadata={**metadata, "judge_attempts": len(replies)},
                )
            messages += [ChatMessageAssistant(content=output.completion), ChatMessageUser(content=RETRY_PROMPT)]
        return Score.unscored(
            reason="grader_failed",
            answer=counterfactual,
            explanation=f"Judge reply could not be parsed after {len(replies)} attempts:\n" + "\n---\n".join(replies),
            metadata={**metadata, "judge_attempts": len(replies)},
        )

    return score


@scorer(
    metrics=[css(), css_stderr(), family_css(), verdict_shares(), control_stability(), agent_trace()],
)
def agent_judge_direction(
    judge_role: str = "judge", fallback_role: str = "judge_alt", retries: int = 2, json_schema: bool = True
) -> Scorer:
    """`judge_direction` for the agent setting, with the chart-reading trace metrics added."""
    return judge_direction(judge_role, fallback_role, retries, json_schema)
