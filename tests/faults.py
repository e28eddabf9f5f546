"""A fault-injecting Inspect provider (`faults/<fault>`): every way a provider's reply can go wrong, as a real ModelAPI.

The model name picks the fault; a healthy reply (`faults/none`) is plausible for every prompt the suites send (CSS
recommendations, a judge's verdict, a reader's refusal to read, an option letter), so a task runs end to end with
the fault in one role (the model under test, the judge, the reader or the second reader) and the others healthy.

Faults (`FAULTS`), each from what providers really return:

- `no_choices`: a response with an empty `choices` list (a provider that filtered everything, a proxy's empty body);
- `empty`: one choice with no text; `tool_calls`: one choice with only a tool call and no text;
- `refusal`: a refusal withheld by the provider (stop reason `content_filter`, text of a refusal);
- `stop_<reason>`: the healthy reply with each of Inspect's stop reasons (`max_tokens` and `model_length` cut it);
- `no_usage`: the healthy reply with no token usage reported;
- `rate_limited`: the first attempt of each call raises a 429-style error, the retry succeeds;
- `hang`: the first attempt of each call never returns (bounded by Inspect's `attempt_timeout`), the retry succeeds.

Retries wait nothing (`retry_wait`), so a test of the retry paths takes no wall-clock time of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, get_args

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.model._model_output import StopReason  # the Literal of every stop reason; no public alias
from inspect_ai.tool import ToolCall
from tenacity import wait_none

STOP_REASONS: tuple[str, ...] = get_args(StopReason)
FAULTS: tuple[str, ...] = (
    "no_choices", "empty", "tool_calls", "refusal", *(f"stop_{r}" for r in STOP_REASONS), "no_usage", "rate_limited", "hang",
)
ROLES = ("model", "judge", "reader", "second_reader")

# Bounds a hung attempt: Inspect abandons it after this many seconds and retries.
HANG_TIMEOUT_S = 1


class RateLimited(Exception):
    """What a provider's client raises on HTTP 429."""

    status_code = 429


def healthy_reply(prompt: str, prose: bool = False) -> str:
    """A reply each suite can read: CSS lists, a judge's verdict, a reader's JSON, an option letter. `prose`: the
    model under test answers in words, so the reader roles are asked (step d)."""
    if "You are auditing" in prompt or '"score"' in prompt:
        return json.dumps({"score": 1, "rationale": "moved as expected"})
    if "You convert a reply" in prompt:
        return json.dumps({"unreadable": True, "reason": "the fault provider reads nothing"})
    if "ecommend" in prompt and prose:
        return "After weighing the chart I would favour surgery first; nothing else is recommended."
    if "ecommend" in prompt:
        return json.dumps({"recommendations": [{"treatment": "Surgery", "rationale": "per guideline"}], "not_recommended": []})
    return "Answer: A"


def _usage() -> ModelUsage:
    return ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)


class FaultModelAPI(ModelAPI):
    """The provider: `faults/<fault>`, with calls counted per fault and per prompt (the first attempt fails)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in (*FAULTS, "none"):
            raise ValueError(f"faults/{model_name}: not a fault ({', '.join(FAULTS)}, none)")
        self.attempts: Counter[str] = Counter()
        self.prose = bool(model_args.get("prose", False))

    def should_retry(self, ex: Exception) -> bool:
        return isinstance(ex, RateLimited)

    def retry_wait(self):
        return wait_none()

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # type: ignore[override]
        prompt = "\n".join(m.text for m in input)
        key = hashlib.sha256(prompt.encode()).hexdigest()
        self.attempts[key] += 1
        first = self.attempts[key] == 1
        fault, name = self.model_name, f"faults/{self.model_name}"
        if fault == "rate_limited" and first:
            raise RateLimited("429 Too Many Requests: rate limit reached, retry after 0s")
        if fault == "hang" and first:
            await anyio.sleep_forever()
        if fault == "no_choices":
            return ModelOutput(model=name, choices=[], usage=_usage())
        if fault == "empty":
            return _with_usage(ModelOutput.from_content(name, ""))
        if fault == "tool_calls":
            message = ChatMessageAssistant(content="", tool_calls=[ToolCall(id="call-1", function="lookup", arguments={})])
            return ModelOutput(model=name, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")], usage=_usage())
        if fault == "refusal":
            return _with_usage(ModelOutput.from_content(name, "I can't help with that.", stop_reason="content_filter"))
        stop = fault.removeprefix("stop_") if fault.startswith("stop_") else "stop"
        output = ModelOutput.from_content(name, healthy_reply(prompt, self.prose), stop_reason=stop)  # type: ignore[arg-type]
        return output if fault == "no_usage" else _with_usage(output)


def _with_usage(output: ModelOutput) -> ModelOutput:
    output.usage = _usage()
    return output


@modelapi(name="faults")
def faults():
    return FaultModelAPI


def fault_model(fault: str, prose: bool = False):
    """A `faults/<fault>` model whose hung attempts Inspect abandons after HANG_TIMEOUT_S and retries."""
    return get_model(f"faults/{fault}", config=GenerateConfig(attempt_timeout=HANG_TIMEOUT_S, max_retries=3), prose=prose)
