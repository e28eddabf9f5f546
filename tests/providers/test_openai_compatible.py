"""A CSS family through Inspect's `openai-api` provider against a real OpenAI-compatible server.

The server is llama-cpp-python's, serving the bundled SmolLM2 GGUF on loopback, started and stopped
here: the path a vLLM or hosted-endpoint user takes, exercised by a real HTTP client.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from helpers import HANDWRITTEN_CASES, llama_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # llama.cpp's server on loopback and an inspect subprocess

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai-api/llamacpp/smollm2"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    with llama_server(tmp_path_factory.mktemp("server")) as url:
        yield url


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
            "-T", f"cases={HANDWRITTEN_CASES}", "-T", "unreviewed=allow", "-T", "json_schema=false",
            "--limit", "1", "--max-tokens", "160", "--max-retries", "1", "--timeout", "180",
            "--fail-on-error", "--log-dir", str(tmp_path), "--display", "plain",
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = read_eval_log(next(tmp_path.glob("*.eval")))
    assert log.status == "success", log.error
    usage = log.stats.model_usage
    assert usage[MODEL].input_tokens > 0
    # The judge is asked only about tuples whose two arms were read (a 135M model's often are not).
    if any(s.scores["judge_direction"].value in (0.0, 0.5, 1.0) for s in log.samples):
        assert usage["openai-api/judge/smollm2"].input_tokens > 0
    for sample in log.samples:
        arms = [sample.store[f"CSSArms:{arm}"] for arm in ("baseline", "counterfactual")]
        assert all(arm["raw"] for arm in arms)
        score = sample.scores["judge_direction"]
        assert score.metadata["judge_model"] == "openai-api/judge/smollm2"
        # A 135M model may not produce a readable list or verdict; the tuple is then unscored with the
        # reason (an arm no step could read, an invalid arm, or a verdict the judge never stated), not zero.
        assert score.value in (0.0, 0.5, 1.0) or score.reason in ("grader_failed", "unreadable", "invalid_output")
