"""Solver of the editor audit: the `editor` model role makes one pre-registered edit, as `counterfactuals build` asks it.

The sample's input is exactly the editor's messages of the frozen-set route (`editor_messages`), so
what is audited is what a user's build would send. One attempt, no retry: the audit measures the
editor, not the retry loop.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from clinical_cf.replies.provider import provider_reply


@solver
def editor_edit(role: str = "editor", max_tokens: int = 4096) -> Solver:
    """Ask the model bound to `role` for the edit (required: an unbound editor role ends the run naming it, rather than
    auditing the model under evaluation under the editor's name)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model(role=role, required=True)
        output = await model.generate(state.messages, config=GenerateConfig(temperature=0.0, max_tokens=max_tokens))
        state.output = output
        # A response with no choices has no message (Inspect's `output.message` raises): an empty one, read as unreadable.
        state.messages.append(provider_reply(output).message)
        state.metadata["editor_model"] = str(model)
        return state

    return solve
