"""The bundled gguf provider reports Inspect's stop reason as the readers need it (fast: no model is loaded).

Readers take only a reply that ended by itself as whole (`clinical_cf.replies.final.not_whole`): a reply the
provider cut for length or filtered is unreadable with its reason, so the provider must say which it was.
"""

import pytest

from clinical_cf.providers.gguf import model_output


@pytest.mark.parametrize(
    "finish, tool_call, usage, cap, expected",
    [
        ("stop", False, {"prompt_tokens": 40, "completion_tokens": 12}, 256, "stop"),
        ("length", False, {"prompt_tokens": 40, "completion_tokens": 256}, 256, "max_tokens"),
        ("length", True, {"prompt_tokens": 40, "completion_tokens": 64}, 64, "max_tokens"),  # a cut tool call is cut
        ("length", False, {"prompt_tokens": 8000, "completion_tokens": 192}, 256, "model_length"),  # the context filled
        ("content_filter", False, {}, None, "content_filter"),
        ("tool_calls", True, {"prompt_tokens": 40, "completion_tokens": 9}, 256, "tool_calls"),
        (None, False, {}, None, "unknown"),  # never reported as a reply that ended by itself
    ],
)
def test_finish_reason_becomes_inspects_stop_reason(finish, tool_call, usage, cap, expected):
    message = {"role": "assistant", "content": '{"answer": ["A"'}
    if tool_call:
        message["tool_calls"] = [{"id": "a", "type": "function", "function": {"name": "submit", "arguments": '{"x": 1}'}}]
    response = {"choices": [{"message": message, "finish_reason": finish}], "usage": usage}
    assert model_output("smollm2", response, max_tokens=cap, n_ctx=8192).stop_reason == expected
