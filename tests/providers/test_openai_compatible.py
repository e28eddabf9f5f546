"""A CSS family through Inspect's `openai-api` provider against a real OpenAI-compatible server.

The server is llama-cpp-python's, serving the bundled SmolLM2 GGUF on loopback, started and stopped
here: the path a vLLM or hosted-endpoint user takes, exercised by a real HTTP client.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from clinical_cf.providers.gguf import default_weights
from helpers import HANDWRITTEN_CASES

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai-api/llamacpp/smollm2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    port = free_port()
    # A file, not a pipe: llama.cpp logs enough at start-up to fill a pipe and block the server.
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(default_weights()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "8192", "--model_alias", "smollm2", "--verbose", "False"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 90
    while time.time() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"llama_cpp.server exited: {log.read()[-2000:]}")
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        raise RuntimeError("llama_cpp.server did not start within 90 s")
    yield url
    log.close()
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_css_family_d_from_the_cli_against_a_loopback_server(server_url, tmp_path):
    """The README's form: model under test via <SERVICE>_BASE_URL, judge on its own base_url by --model-role."""
    env = {
        **os.environ,
        "LLAMACPP_BASE_URL": server_url,
        "LLAMACPP_API_KEY": "not-needed",
        "JUDGE_API_KEY": "not-needed",
    }
    judge = f"judge={{model: openai-api/judge/smollm2, model_args: {{base_url: '{server_url}'}}}}"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "inspect"), "eval", "tasks/css_family_d",
            "--model", MODEL, "--model-role", judge,
            # llama.cpp's server rejects OpenAI's json_schema response format: ask for JSON in the prompt only.
            "-T", f"cases={HANDWRITTEN_CASES}", "-T", "json_schema=false",
            "--limit", "1", "--max-tokens", "160", "--max-retries", "1", "--timeout", "180",
            "--fail-on-error", "--log-dir", str(tmp_path), "--display", "plain",
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = read_eval_log(next(tmp_path.glob("*.eval")))
    assert log.status == "success", log.error
    usage = log.stats.model_usage
    assert usage[MODEL].input_tokens > 0 and usage["openai-api/judge/smollm2"].input_tokens > 0
    for sample in log.samples:
        arms = [sample.store[f"CSSArms:{arm}"] for arm in ("baseline", "counterfactual")]
        assert all(arm["raw"] for arm in arms)
        score = sample.scores["judge_direction"]
        assert score.metadata["judge_model"] == "openai-api/judge/smollm2"
        # A 135M model may not produce a readable verdict; it must then be unscored, not zero.
        assert score.value in (0.0, 0.5, 1.0) or score.reason == "grader_failed"
