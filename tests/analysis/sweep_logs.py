"""A sweep-shaped set of real Inspect CSS logs, with hand-set verdicts (tests import `write_sweep`).

One genuine mock-model run of `css_family_d` over the handwritten cases (two epochs, scripted judge)
is the template; the sweep's logs are written from it with Inspect's log API, each with its own
model, judge (in `eval.model_roles` and in every score's `judge_model`), creation time and verdicts:

    alpha x judge-a (first run), alpha x judge-b, beta x judge-a, beta x judge-b,
    alpha x judge-a again (a rerun, created later, every verdict 1)

Verdicts per interventional tuple (family D; case breast, case pancreas), epoch 1 / epoch 2:

    log                      breast     pancreas   epoch mean  CSS (mean of tuple means)
    alpha judge-a (first)    1 / 0      1 / 1      0.5, 1      0.75
    alpha judge-b            0 / 0      1 / 0      0, 0.5      0.25
    beta  judge-a            .5 / .5    0 / 0      0.5, 0      0.25
    beta  judge-b            1 / 1      1 / 1      1, 1        1.00
    alpha judge-a (rerun)    1 / 1      1 / 1      1, 1        1.00

Negative controls (family N) are 1 everywhere.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log

from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

VERDICTS = {
    # name: (model, judge, created offset in minutes, {case prefix: (epoch 1, epoch 2)})
    "alpha-judge-a": ("mockllm/alpha", "mockllm/judge-a", 0, {"fx-breast-1": (1.0, 0.0), "fx-pancreas-1": (1.0, 1.0)}),
    "alpha-judge-b": ("mockllm/alpha", "mockllm/judge-b", 1, {"fx-breast-1": (0.0, 0.0), "fx-pancreas-1": (1.0, 0.0)}),
    "beta-judge-a": ("mockllm/beta", "mockllm/judge-a", 2, {"fx-breast-1": (0.5, 0.5), "fx-pancreas-1": (0.0, 0.0)}),
    "beta-judge-b": ("mockllm/beta", "mockllm/judge-b", 3, {"fx-breast-1": (1.0, 1.0), "fx-pancreas-1": (1.0, 1.0)}),
    "alpha-judge-a-rerun": ("mockllm/alpha", "mockllm/judge-a", 60, {"fx-breast-1": (1.0, 1.0), "fx-pancreas-1": (1.0, 1.0)}),
}


def template_log(folder: Path) -> str:
    """One real two-epoch run of css_family_d on the handwritten cases (mock model, scripted judge)."""

    log = eval(
        css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
        model=MockModel("mockllm/alpha", lambda p: recommendations_json("FOLFOX")).model,
        model_roles={"judge": MockModel("mockllm/judge-a", lambda p: json.dumps({"score": 1, "rationale": "r"})).model},
        epochs=2,
        display="none",
        log_dir=str(folder),
    )[0]
    return log.location


def write_sweep(template: str, folder: Path, names: tuple[str, ...] = tuple(VERDICTS)) -> dict[str, Path]:
    """The sweep's logs in `folder` (one `<name>.eval` each), written from the template run."""

    base = read_eval_log(template)
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    written = {}
    for name in names:
        model, judge, minutes, verdicts = VERDICTS[name]
        samples = []
        for sample in base.samples or []:
            scores = dict(sample.scores or {})
            old = scores["judge_direction"]
            value = 1.0 if sample.metadata["family"] == "N" else verdicts[sample.metadata["case_id"]][sample.epoch - 1]
            scores["judge_direction"] = old.model_copy(update={"value": value, "metadata": {**(old.metadata or {}), "judge_model": judge}})
            samples.append(sample.model_copy(update={"uuid": uuid.uuid4().hex, "scores": scores}))
        roles = {**(base.eval.model_roles or {})}
        roles["judge"] = roles["judge"].model_copy(update={"model": judge})
        spec = base.eval.model_copy(update={
            "model": model, "model_roles": roles, "eval_id": uuid.uuid4().hex, "run_id": uuid.uuid4().hex,
            "created": (start + timedelta(minutes=minutes)).isoformat(),
        })
        path = folder / f"{name}.eval"
        write_eval_log(base.model_copy(update={"eval": spec, "samples": samples}), str(path))
        written[name] = path
    return written
