"""MedPIC, workflow and sensitivity rows: a rerun of the same samples is not counted twice."""

import pandas as pd

from clinical_cf.analysis.sections import latest_run


def test_a_rerun_replaces_the_earlier_run_of_the_same_samples_and_is_counted():
    rows = pd.DataFrame([
        {"model": "m", "run": "", "sample_id": "q1", "epoch": 1, "log": "old.eval", "created": "2026-01-01", "error": None},
        {"model": "m", "run": "", "sample_id": "q1", "epoch": 1, "log": "new.eval", "created": "2026-01-02", "error": None},
        {"model": "m", "run": "", "sample_id": "q2", "epoch": 1, "log": "old.eval", "created": "2026-01-01", "error": None},
        # A newer sample that errored does not replace a complete one.
        {"model": "m", "run": "", "sample_id": "q2", "epoch": 1, "log": "new.eval", "created": "2026-01-02", "error": "boom"},
        # A labelled run is kept apart.
        {"model": "m", "run": "v2", "sample_id": "q1", "epoch": 1, "log": "v2.eval", "created": "2026-01-03", "error": None},
    ])
    kept, lines = latest_run(rows, "MedPIC")
    assert sorted(zip(kept["sample_id"], kept["log"], strict=False)) == [("q1", "new.eval"), ("q1", "v2.eval"), ("q2", "old.eval")]
    assert lines == ["MedPIC / m: 2 samples of new.eval, old.eval replaced by another sample of the same question and epoch "
                     "(complete log first, then error-free, then newest) (label runs with --label NAME=PATH to keep both)"]


def test_a_log_that_did_not_complete_never_replaces_a_complete_run_whatever_its_age():
    rows = pd.DataFrame([
        {"model": "m", "run": "", "sample_id": "q1", "epoch": 1, "log": "old.eval", "created": "2026-01-01", "error": None,
         "status": "success"},
        {"model": "m", "run": "", "sample_id": "q1", "epoch": 1, "log": "crashed.eval", "created": "2026-01-02", "error": None,
         "status": "error"},
        {"model": "m", "run": "", "sample_id": "q2", "epoch": 1, "log": "crashed.eval", "created": "2026-01-02", "error": None,
         "status": "error"},
    ])
    kept, lines = latest_run(rows, "MedPIC")
    assert sorted(zip(kept["sample_id"], kept["log"], strict=False)) == [("q1", "old.eval"), ("q2", "crashed.eval")]
    assert "crashed.eval replaced" in lines[0]
