"""Shared test helpers: mock models with deterministic, input-dependent outputs."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

from clinical_cf.catalog.sensitivity.vignettes import PRESENTATIONS
from clinical_cf.providers.gguf import default_weights

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


# A mock clinician for the sensitivity suite: it reads the vignette like a careful but
# background-blind reader would.
SUPPORT = {p.supporting for p in PRESENTATIONS}
REMOVABLE = {p.removable for p in PRESENTATIONS}
CONFLICT = {p.conflicting for p in PRESENTATIONS}


def gold_of(prompt: str) -> str:
    return next(p.gold for p in PRESENTATIONS if p.complaint in prompt or p.synonym in prompt or p.vague in prompt)


def clinician(prompt: str) -> str:
    """Puts 0.6 on the gold; more with a supporting sign, less without the key finding, spread on a conflict."""
    options = dict(re.findall(r"^([A-F])\) (.+)$", prompt, re.M))
    gold = next(letter for letter, name in options.items() if name == gold_of(prompt))
    p_gold = 0.6
    if any(s in prompt for s in SUPPORT):
        p_gold = 0.9
    if not any(r in prompt for r in REMOVABLE):
        p_gold = 0.3
    if any(c in prompt for c in CONFLICT):
        p_gold = 1 / len(options)
    rest = (1 - p_gold) / (len(options) - 1)
    return json.dumps({letter: (p_gold if letter == gold else rest) for letter in options})




def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(workdir: Path, n_ctx: int = 8192) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server for the bundled SmolLM2 on loopback; yields its /v1 URL."""

    port = free_port()
    # A file, not a pipe: llama.cpp logs enough at start-up to fill a pipe and block the server.
    log = (workdir / "server.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(default_weights()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", "smollm2", "--verbose", "False"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        # Wait while the server is alive and not yet answering: no deadline of our own, because loading the model
        # takes longer on a busy machine; a server that exits is an error at once, and a hang is the test's own
        # timeout (pytest-timeout covers fixtures; the finally below still stops the server).
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama_cpp.server exited: {log.read()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        log.close()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def data_blocks(prompt: str) -> dict[str, str]:
    """The model-text data blocks of a judge prompt, by name (BASELINE, COUNTERFACTUAL, RESPONSE, ...)."""
    return {name: body for name, _, body in re.findall(r"<<<([A-Z][A-Z ]*?) DATA (\w+)>>>\n(.*?)\n<<<END \1 DATA \2>>>", prompt, re.S)}
