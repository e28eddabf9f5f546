"""Report banners on real mock-model logs, and the checks confirmatory mode runs before testing predictions."""

from __future__ import annotations

import pandas as pd
import pytest
from inspect_ai import eval

from clinical_cf.analysis.registration import (
    LogRegistration,
    annotate_verdicts,
    banners_for_logs,
    confirmatory_predictions,
    log_banners,
    read_log_registration,
)
from clinical_cf.catalog.css.predictions import PREDICTIONS_PATH
from clinical_cf.catalog.workflow import SEEDS_PATH
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import UnregisteredCatalogError, write_lock
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import MockModel

SMALL = dict(variant="clean", task_class="triage_handoff", split="dev")


def answer(prompt: str) -> str:
    return '{"action": "ANSWER", "confidence": 0.7, "reason": "routine"}'


def run(task, tmp_path, name: str, model_name: str = "mockllm/model"):
    log = eval(task, model=MockModel(model_name, answer).model, display="none", log_dir=str(tmp_path / name))[0]
    assert log.status == "success", log.error
    return log.location


def test_registered_published_log_has_no_banner(tmp_path):
    path = run(workflow(**SMALL), tmp_path, "clean")
    entry = read_log_registration(path)
    assert entry.record["registered"] and entry.record["published"]
    assert log_banners(entry) == []
    assert banners_for_logs([path]) == {"mockllm/model": []}


def test_unregistered_relocked_and_mixed_logs_get_banners(tmp_path):
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text(SEEDS_PATH.read_text() + "\n# edited after release\n")
    unregistered = run(workflow(seeds=str(seeds), allow_unregistered=True, **SMALL), tmp_path, "unregistered")
    [line] = log_banners(read_log_registration(unregistered))
    assert line.startswith("UNREGISTERED") and "seeds.yaml" in line and "allow_unregistered" in line

    write_lock(seeds)  # tamper, then re-lock: registered, but not the published file
    relocked = run(workflow(seeds=str(seeds), **SMALL), tmp_path, "relocked", "mockllm/other")
    [line] = log_banners(read_log_registration(relocked))
    assert line.startswith("RE-LOCKED, NOT PUBLISHED") and "seeds.yaml" in line

    # One model whose two logs of the same task used different inputs: flagged on its row.
    clean = run(workflow(**SMALL), tmp_path, "clean")
    rows = banners_for_logs([clean, unregistered])
    assert any(line.startswith("MIXED INPUTS: mockllm/model: its") and "workflow logs were run on 2" in line
               for line in rows["mockllm/model"])
    assert banners_for_logs([relocked])["mockllm/other"][0].startswith("RE-LOCKED")


def test_a_log_whose_samples_have_two_fingerprints_is_flagged():
    entry = LogRegistration(
        log="logs/x.eval", model="m", task="workflow",
        record={"fingerprint": "a" * 64, "registered": True, "published": True, "files": []},
        sample_fingerprints=("a" * 64, "b" * 64, "a" * 64),
    )
    [line] = log_banners(entry)
    assert line.startswith("MIXED INPUTS: x.eval") and "2 input fingerprints" in line


def test_log_without_a_record_is_flagged():
    entry = LogRegistration(log="old.eval", model="m", task="css", record=None)
    assert log_banners(entry)[0].startswith("NO REGISTRATION RECORD")


def test_confirmatory_refuses_relocked_predictions(tmp_path):
    checked = confirmatory_predictions(PREDICTIONS_PATH)
    assert checked.registration.published and checked.version

    mine = tmp_path / "predictions.yaml"
    mine.write_text(PREDICTIONS_PATH.read_text().replace("threshold: 0.5", "threshold: 0.05", 1))
    with pytest.raises(UnregisteredCatalogError):
        confirmatory_predictions(mine)
    write_lock(mine)
    with pytest.raises(CatalogError, match="only the published predictions"):
        confirmatory_predictions(mine)


def test_verdicts_carry_threshold_and_hash():
    checked = confirmatory_predictions(PREDICTIONS_PATH)
    first = checked.predictions[0]
    table = pd.DataFrame([{"model": "m", "prediction": first.id, "css": 0.2, "p_bh": 0.01, "verdict": "supported"}])
    out = annotate_verdicts(table, checked)
    row = out.iloc[0]
    assert row["threshold"] == first.threshold and row["direction"] == first.direction
    assert row["predictions_sha256"] == checked.registration.sha256
    assert f"{first.direction} {first.threshold:g}" in row["verdict_line"] and checked.registration.sha256[:12] in row["verdict_line"]


def test_the_report_shows_banners_and_the_parse_table_in_the_suite_section(tmp_path):
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text(SEEDS_PATH.read_text() + "\n# edited after release\n")
    run(workflow(seeds=str(seeds), allow_unregistered=True, **SMALL), tmp_path / "logs", "unregistered")
    write_lock(seeds)
    run(workflow(seeds=str(seeds), **SMALL), tmp_path / "logs", "relocked", "mockllm/other")
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "**UNREGISTERED: " in text and "seeds.yaml" in text
    assert "**RE-LOCKED, NOT PUBLISHED: " in text
    # Both models' replies were well-formed JSON: the parse table says so, per model.
    table = pd.read_csv(out / "workflow_parse_table.csv").set_index("model")
    assert set(table.index) == {"mockllm/model", "mockllm/other"} and (table["json"] == 1.0).all()
