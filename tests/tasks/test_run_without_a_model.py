"""`inspect eval` runs that cannot start say why in one sentence and exit non-zero (issue 26), also under `--display none`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clinical_cf.tasks.arguments import TaskInputError
from clinical_cf.tasks.build import NO_MODEL, check_model_under_test

INSPECT = str(Path(sys.executable).parent / "inspect")


def _inspect(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`inspect eval` from a folder without .env and with no model in the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_EVAL_MODEL")}
    return subprocess.run([INSPECT, "eval", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a subprocess CLI run
def test_no_model_ends_in_one_sentence_naming_it(tmp_path):
    run = _inspect(tmp_path, "clinical_cf/css_family_d", "--limit", "1")
    out = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "no model to evaluate: pass --model" in out and "INSPECT_EVAL_MODEL" in out
    assert "Traceback" not in out and "none/none" not in out


@pytest.mark.slow  # a subprocess CLI run
def test_an_argument_error_reaches_stderr_under_display_none(tmp_path):
    run = _inspect(tmp_path, "clinical_cf/workflow", "--model", "mockllm/model", "-T", "cost_ratio=0", "--display", "none")
    assert run.returncode == 1
    assert "task argument 'cost_ratio': got 0; expected a number >= 1 and <= 1000" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.slow  # a subprocess CLI run
def test_an_empty_path_argument_reaches_stderr_under_display_none(tmp_path):
    run = _inspect(tmp_path, "clinical_cf/sensitivity", "--model", "mockllm/model", "-T", "vignettes=", "--display", "none")
    assert run.returncode == 1 and "task argument 'vignettes'" in run.stderr


@pytest.mark.parametrize("model", [None, "mockllm/model"])
def test_outside_an_eval_or_with_a_model_nothing_is_refused(monkeypatch, model):
    """Tests and exports build tasks with no eval running, and an eval with a model builds them: neither is refused."""
    if model is None:
        monkeypatch.delenv("INSPECT_EVAL_MODEL", raising=False)
    else:
        monkeypatch.setenv("INSPECT_EVAL_MODEL", model)
    assert check_model_under_test() is None  # returned: no TaskInputError


def test_the_none_model_is_refused(monkeypatch):
    monkeypatch.setenv("INSPECT_EVAL_MODEL", "none/none")  # what an eval with no --model makes active
    with pytest.raises(TaskInputError, match="no model to evaluate"):
        check_model_under_test()
    assert NO_MODEL.count(".") <= 1  # one sentence
