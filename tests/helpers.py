"""Shared test helpers: mock models with deterministic, input-dependent outputs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Callable

from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

FIXTURES = Path(__file__).parent / "fixtures"
HANDWRITTEN_CASES = FIXTURES / "css_cases_handwritten.jsonl"


def output(model: str, content: str) -> ModelOutput:
    # An explicit usage stops Inspect from downloading a tokenizer to count tokens.
    out = ModelOutput.from_content(model, content)
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


class MockModel:
    """A mockllm model whose reply is `respond(last user message)`; counts calls per prompt."""

    def __init__(self, name: str, respond: Callable[[str], str]) -> None:
        self.name = name
        self.respond = respond
        self.calls: Counter[str] = Counter()

    def __call__(self, messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        text = messages[-1].text
        self.calls[text] += 1
        return output(self.name, self.respond(text))

    @property
    def model(self):
        return get_model(self.name, custom_outputs=self)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


def recommendations_json(*treatments: str, avoid: tuple[str, ...] = ()) -> str:
    return json.dumps(
        {
            "recommendations": [{"treatment": t, "rationale": "per guideline"} for t in treatments],
            "not_recommended": [{"treatment": t, "reason": "contraindicated"} for t in avoid],
        }
    )
