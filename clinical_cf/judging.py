"""One way to ask a judge: role resolution with the self-judging fallback, the call with retries, the score's metadata.

Every judge in every suite goes through here (the CSS direction judge, the observation-process
judge, CMS coverage matching, the MedPIC rationale judge, and the judge audit through the CSS
judge), so the rules are written once:

- **Which model judges.** The judge is a model role (`--model-role judge=...`). When it resolves
  to the model under test, role `judge_alt` judges instead where it is bound (the CSS paper's
  self-judging rule); without it the model judges itself and the score says so (`self_judged`).
  With no judge role bound at all, the model under test judges (role `model_under_test`).
- **How often it is asked.** Once, then again up to `retries` times while its reply cannot be
  read, each time with the scorer's retry prompt after the unreadable reply.
- **What the score records.** `judge_model`, `judge_role`, `self_judged` and `judge_attempts`.

How a reply is *read* stays with each scorer (`clinical_cf.replies` and the scorers' own
parsers): the reader is a parameter, a callable `reply -> verdict | None` (None: unreadable or
ambiguous), so the helper never guesses a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)

from clinical_cf.replies.whole import not_whole

V = TypeVar("V")

JUDGE_ROLE = "judge"
FALLBACK_ROLE = "judge_alt"
UNDER_TEST = "model_under_test"
"""The role recorded when no judge role is bound and the model under test judges."""


@dataclass(frozen=True)
class ResolvedJudge:
    model: Model
    role: str
    self_judged: bool

    def metadata(self) -> dict[str, Any]:
        """The judge's fields on a score: which model, under which role, and whether it judged itself."""
        return {"judge_model": str(self.model), "judge_role": self.role, "self_judged": self.self_judged}


def resolve_judge(role: str = JUDGE_ROLE, fallback_role: str = FALLBACK_ROLE) -> ResolvedJudge:
    """The judge for the current sample, avoiding self-judging where a fallback role exists."""
    under_test = get_model()
    roles = model_roles()
    # Each role is resolved only when it is bound, so `required=True` states that a bound role must resolve.
    judge = get_model(role=role, required=True) if role in roles else under_test
    if same_model(judge, under_test):
        if fallback_role in roles:
            return ResolvedJudge(get_model(role=fallback_role, required=True), fallback_role, False)
        return ResolvedJudge(judge, role if role in roles else UNDER_TEST, True)
    return ResolvedJudge(judge, role, False)


def same_model(a: Model, b: Model) -> bool:
    """The same model served from the same place (a local and a hosted copy of one name are different judges)."""
    return str(a) == str(b) and a.api.base_url == b.api.base_url


@dataclass(frozen=True)
class Judgement(Generic[V]):
    """What a judge call came to: the verdict (None when no reply could be read) and every reply it took."""

    judge: ResolvedJudge
    verdict: V | None
    replies: list[str]
    cut: list[str] = field(default_factory=list)
    """Why replies were not whole (`truncated: ...`, `filtered: ...`): never read, the judge was asked again."""

    @property
    def attempts(self) -> int:
        return len(self.replies)

    def metadata(self) -> dict[str, Any]:
        return {**self.judge.metadata(), "judge_attempts": self.attempts, **({"judge_cut": self.cut} if self.cut else {})}


async def ask_judge(
    judge: ResolvedJudge,
    prompt: str | list[ChatMessage],
    read: Callable[[str], V | None],
    *,
    retry_prompt: str | None = None,
    retries: int = 2,
    config: GenerateConfig | None = None,
) -> Judgement[V]:
    """Ask `judge` until `read` returns a verdict, at most `1 + retries` times.

    Args:
        judge: From `resolve_judge`.
        prompt: The judge prompt (a string is one user message).
        read: The scorer's reader of one reply: the verdict, or None when it is unreadable or ambiguous.
        retry_prompt: Sent after an unreadable reply (required when `retries` > 0).
        retries: Extra attempts after an unreadable reply.
        config: Generation config of every call (e.g. the verdict's `response_schema`).
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, not {retries}")
    if retries and retry_prompt is None:
        raise ValueError("a judge asked again needs a retry prompt")
    messages: list[ChatMessage] = [ChatMessageUser(content=prompt)] if isinstance(prompt, str) else list(prompt)
    replies: list[str] = []
    cut: list[str] = []
    for attempt in range(retries + 1):
        output = await (judge.model.generate(messages, config=config) if config is not None else judge.model.generate(messages))
        replies.append(output.completion)
        # A verdict the provider cut for length or filtered is not read (a cut "Score: 1" may have gone on "0"):
        # whole replies only, as for the model under test (clinical_cf.replies.whole).
        not_read = not_whole(output.completion, output.stop_reason)
        if not_read:
            cut.append(not_read)
        verdict = None if not_read else read(output.completion)
        if verdict is not None:
            return Judgement(judge, verdict, replies, cut)
        if attempt < retries:
            messages += [ChatMessageAssistant(content=output.completion), ChatMessageUser(content=str(retry_prompt))]
    return Judgement(judge, None, replies, cut)


def note_self_judging(judge: ResolvedJudge, fallback_role: str = FALLBACK_ROLE) -> None:
    """Say in the transcript that the model under test judged itself, and how to avoid it."""
    if judge.self_judged:
        transcript().info(
            f"Judge is the model under test ({judge.model}); pass --model-role {fallback_role}=... to avoid self-judging."
        )
