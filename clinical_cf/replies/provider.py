"""What the suites take from one provider response (an Inspect `ModelOutput`), whatever the provider returned.

Every place a `ModelOutput` is consumed (the model under test's replies, the judge's verdicts, the readers' JSON, the
editor's edits) reads it through `provider_reply`, so a response of any shape is a reply with a text (possibly
empty) and a stop reason, never an exception: a provider can return no choices at all (Inspect's
`output.stop_reason` and `output.message` then raise IndexError), one choice with only tool calls and no text, a
refusal withheld with stop reason `content_filter`, or no token usage. The text is then read by the suite's
contract, which makes an empty or cut reply unreadable with its reason (`clinical_cf.replies.whole`).

A response without token usage is not billed by Inspect (it records usage only when the provider reports it), so
the call would vanish from a run's usage: it is counted in the sample's store under `USAGE_MISSING` (calls per
model), which the log keeps, so a report can say which calls reported no usage instead of dropping them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Generate, TaskState
from inspect_ai.util import store

USAGE_MISSING = "clinical_cf:usage_missing"
"""Sample store key: {model name: calls whose response reported no token usage}."""

NO_CHOICES = "the provider returned no choices"


@dataclass(frozen=True)
class ProviderReply:
    """One response as the suites read it: its text ("" when none), its stop reason (None when the provider gave
    none), the max-token cap it was made with or hit, and `missing` ("" or why there is no reply at all)."""

    text: str
    stop_reason: str | None
    max_tokens: int | None = None
    missing: str = ""

    @property
    def message(self) -> ChatMessageAssistant:
        """The reply as an assistant message for a conversation (empty when the provider returned none)."""
        return ChatMessageAssistant(content=self.text)


def provider_reply(output: Any, configured_max_tokens: int | None = None) -> ProviderReply:
    """The reply in `output` (None: no response). The cap is the one the call was made with when known, else the
    output tokens the provider reported when it stopped for length (the cap it hit)."""
    if output is None:
        return ProviderReply("", None, None, "no response")
    _note_usage(output)
    choices = getattr(output, "choices", None) or []
    if not choices:
        return ProviderReply("", None, None, NO_CHOICES)
    stop = getattr(choices[0], "stop_reason", None)
    text = getattr(output, "completion", None) or ""
    cap = None
    if str(stop) in ("max_tokens", "model_length"):
        usage = getattr(output, "usage", None)
        cap = configured_max_tokens or (getattr(usage, "output_tokens", None) if usage is not None else None)
    return ProviderReply(text, stop, cap)


async def generate_reply(generate: Generate, state: TaskState, **config: Any) -> TaskState:
    """Inspect's generate step (`generate(state, ...)`, keeping the eval's config and cache) for a solver that reads
    the reply itself. Inspect's step appends `output.message`, which raises IndexError on a response with no choices
    after it has stored that response in `state.output`; the reply is then missing (an empty assistant turn keeps the
    conversation's shape), and the suite's reader makes it unreadable with its reason instead of erroring the sample."""
    try:
        return await generate(state, **config)
    except IndexError:
        if state.output is None or state.output.choices:
            raise
        state.messages.append(provider_reply(state.output).message)
        return state


def _note_usage(output: Any) -> None:
    """Count a response that reported no token usage in the sample's store (outside a sample, the store is a
    throwaway one)."""
    if getattr(output, "usage", None) is not None:
        return
    counts = dict(store().get(USAGE_MISSING, {}) or {})
    model = str(getattr(output, "model", "") or "unknown")
    counts[model] = counts.get(model, 0) + 1
    store().set(USAGE_MISSING, counts)
