"""One way to ask a judge: role resolution with the self-judging fallback, the call with retries, the score's metadata.

Every judge in every suite goes through here (the CSS direction judge, the observation-process
judge, CMS coverage matching, the MedPIC rationale judge, and the judge audit through the CSS
judge), so the rules are written once:

- **Which model judges.** The judge is a model role (`--model-role judge=...`; Inspect's conventional
  `grader` is accepted for it). When it resolves to the model under test, role `judge_alt` judges
  instead where it is bound (the CSS paper's self-judging rule); without it the model judges itself
  and the score says so (`self_judged`). With no judge role bound at all, a judged task stops
  before anything is asked (`judge_bound`, the setup step `clinical_cf.tasks.build.build_task` gives
  it) with one line naming the roles to bind, unless the run opted in with `-T self_judging=allow`;
  then the model under test judges (role `model_under_test`) and every score records `self_judged`.
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
from inspect_ai.solver import Generate, Solver, TaskState, solver

from clinical_cf.core.errors import PrerequisiteError
from clinical_cf.replies.provider import provider_reply
from clinical_cf.replies.whole import not_whole

V = TypeVar("V")

JUDGE_ROLE = "judge"
FALLBACK_ROLE = "judge_alt"
ALIASES = {JUDGE_ROLE: ("grader",)}
"""Other names a role is bound under: Inspect's own scorers call their judge `grader`."""
UNDER_TEST = "model_under_test"
"""The role recorded when no judge role is bound and the model under test judges (by `-T self_judging=allow`)."""
SELF_JUDGING = ("refuse", "allow")
"""A judged task's `self_judging` argument: refuse (default) to run with no judge role bound, or allow the model under test
to judge its own replies."""


def bound_role(role: str) -> str | None:
    """The name `role` is bound under in this eval (itself, else an alias of it), or None when it is not bound."""
    roles = model_roles()
    return next((name for name in (role, *ALIASES.get(role, ())) if name in roles), None)


def missing_judge(task: str, self_judging: str, role: str = JUDGE_ROLE, fallback_role: str = FALLBACK_ROLE) -> str | None:
    """Why a judged task must not run (one line naming the roles to bind), or None: a judge role is bound or self-judging
    was asked for.

    Asked in each sample's setup step (`judge_bound`), where the eval's roles are known whoever built the task: at
    build time they are not (a task built before `eval()`, or after another eval in the same process, sees none).
    """
    if self_judging not in SELF_JUDGING:
        raise ValueError(f"self_judging must be one of {', '.join(SELF_JUDGING)}, not {self_judging!r}")
    if self_judging == "allow" or bound_role(role) is not None:
        return None
    names = " or ".join(f"--model-role {name}=<provider>/<model>" for name in (role, *ALIASES.get(role, ())))
    return (
        f"{task} is judged and no judge is bound: pass {names} (and --model-role {fallback_role}=... for when the "
        "judge is the model under test), or -T self_judging=allow to let the model under test judge its own replies"
    )


@dataclass(frozen=True)
class ResolvedJudge:
    model: Model
    role: str
    self_judged: bool

    def metadata(self) -> dict[str, Any]:
        """The judge's fields on a score: which model, under which role, and whether it judged itself."""
        return {"judge_model": str(self.model), "judge_role": self.role, "self_judged": self.self_judged}


@solver
def judge_bound(task: str) -> Solver:
    """Stop a judged sample before anything is asked when no judge role is bound (a task built outside the eval, where
    `missing_judge` could not see the roles): the message names the roles to bind and the opt-in."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        refused = missing_judge(task, "refuse")
        if refused:
            raise JudgeNotBound(refused)
        return state

    return solve


class JudgeNotBound(PrerequisiteError):
    """A judged sample with no judge role bound and no opt-in to self-judging."""


def resolve_judge(role: str = JUDGE_ROLE, fallback_role: str = FALLBACK_ROLE) -> ResolvedJudge:
    """The judge for the current sample, avoiding self-judging where a fallback role exists (the role recorded is the name
    it was bound under: `grader` when that alias was used)."""
    under_test = get_model()
    bound, fallback = bound_role(role), bound_role(fallback_role)
    # Each role is resolved only when it is bound, so `required=True` states that a bound role must resolve.
    judge = get_model(role=bound, required=True) if bound else under_test
    if same_model(judge, under_test):
        if fallback:
            return ResolvedJudge(get_model(role=fallback, required=True), fallback, False)
        return ResolvedJudge(judge, bound or UNDER_TEST, True)
    return ResolvedJudge(judge, bound or role, False)


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
        # Any response shape (no choices, tool calls only) is a reply with a text, possibly empty.
        reply = provider_reply(output)
        replies.append(reply.text)
        # A verdict the provider cut for length or filtered is not read (a cut "Score: 1" may have gone on "0"):
        # whole replies only, as for the model under test (clinical_cf.replies.whole).
        not_read = not_whole(reply.text, reply.stop_reason)
        if not_read:
            cut.append(not_read)
        verdict = None if not_read else read(reply.text)
        if verdict is not None:
            return Judgement(judge, verdict, replies, cut)
        if attempt < retries:
            messages += [ChatMessageAssistant(content=reply.text), ChatMessageUser(content=str(retry_prompt))]
    return Judgement(judge, None, replies, cut)


def note_self_judging(judge: ResolvedJudge, fallback_role: str = FALLBACK_ROLE) -> None:
    """Say in the transcript that the model under test judged itself, and how to avoid it."""
    if judge.self_judged:
        transcript().info(
            f"Judge is the model under test ({judge.model}); pass --model-role {fallback_role}=... to avoid self-judging."
        )
