"""Small real logs for the fault and hostile-input probes: one CSS run, and copies with edited eval metadata."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log

from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


def one_css_log(folder: Path) -> str:
    """One real CSS log (mock model and judge) over the hand-written cases."""

    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 1, "rationale": "r"}))
    log = eval(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
               model=MockModel("mockllm/alpha", lambda p: recommendations_json("FOLFOX")).model,
               model_roles={"judge": judge.model}, display="none", log_dir=str(folder))[0]
    assert log.status == "success", log.error
    return log.location


def with_setting(log: str, setting: object, target: Path) -> str:
    """A copy of `log` whose eval metadata names another setting (a hand-edited or hostile log)."""

    record = read_eval_log(log)
    record.eval.metadata = {**(record.eval.metadata or {}), "setting": setting}
    target.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(record, str(target))
    return str(target)
