"""The one log reader: listing, routing by recorded suite, one read per log, rows that trace back to samples."""

import json

import inspect_ai.log
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample

from clinical_cf.analysis import logs as reader
from clinical_cf.analysis.logs import list_logs, read_logs, sample_views
from clinical_cf.cli import main
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from helpers import HANDWRITTEN_CASES, MockModel, clinician, recommendations_json

pytestmark = pytest.mark.slow  # the module's fixture writes and reads a sweep of logs (over 3 s)


def judge(verdict):
    return MockModel("mockllm/grader", lambda p: json.dumps({"score": 1 if "No change in substance" in p else verdict, "rationale": "why"}))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    logs = tmp_path_factory.mktemp("mixed")
    for name, verdict in (("north", 1), ("south", 0)):
        eval(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"), model=MockModel(f"mockllm/{name}", lambda p: recommendations_json("CAPOX")).model,
             model_roles={"judge": judge(verdict).model}, display="none", log_dir=str(logs))
    eval(sensitivity(types="surface"), model=MockModel("mockllm/north", clinician).model, limit=6, display="none", log_dir=str(logs))
    eval(Task(dataset=[Sample(input="hello")]), model=MockModel("mockllm/plain", lambda p: "hi").model, display="none", log_dir=str(logs))
    (logs / "truncated.eval").write_bytes(b"PK\x03\x04 not really a zip")
    return logs


def test_lists_folders_files_and_file_urls_once(folder):
    listed = list_logs([folder])
    assert len(listed) == 5 and all(not p.startswith("file://") for p in listed)
    one = sorted(p for p in listed if p.endswith(".eval") and "truncated" not in p)[0]
    assert list_logs([f"file://{one}", one]) == [one]


def test_routes_by_recorded_suite_and_names_what_it_skips(folder):
    rows = read_logs([folder])
    assert set(rows.suites) == {"css", "sensitivity"}
    why = dict(rows.skipped)
    assert any("truncated.eval" in p and w.startswith("cannot be read") for p, w in why.items())
    assert any("records no `suite`" in w for w in why.values())
    css = rows.suite("css")
    assert set(css["model"]) == {"mockllm/north", "mockllm/south"}
    # Provenance, every metadata field and every score with its metadata, per sample and epoch.
    assert {"log", "model", "task", "sample_id", "epoch", "uuid", "metadata_case_id", "metadata_expected_change",
            "score_judge_direction", "score_judge_direction_metadata", "score_judge_direction_explanation", "score_cms"} <= set(css.columns)
    assert css["uuid"].is_unique
    sens = rows.suite("sensitivity")
    assert "score_direction_consistency" in sens.columns and "metadata_case_id" not in sens.columns
    logs = rows.suite_logs("css")
    assert len(logs) == 2 and set(logs["eval_suite"]) == {"css"} and logs["eval_catalog_sha256"].notna().all()
    # A row read back as its sample: the judge's verdict and rationale, the arms in the store.
    view = next(v for v in sample_views(css) if v.metadata["family"] == "D")
    assert view.scores["judge_direction"].explanation.startswith("why") and "CSSArms:counterfactual" in view.store


def test_report_rewards_and_gate_read_each_log_once(folder, tmp_path, monkeypatch):
    # Issue 23 changed this test on purpose: the report's numbers come from Inspect's sample summaries
    # (one summaries read per log), full samples are read only for the rewards export and, for the
    # side-by-side page, once per tuple's edit; a second report over the same logs reads them from the
    # per-log cache; and a gate's baseline must hold one model, so the baseline is north's log alone
    # rather than the whole folder (which holds north and south).
    full_reads: list[str] = []
    summary_reads: list[str] = []
    original = reader.read_eval_log
    original_summaries = reader.read_eval_log_sample_summaries

    def counting(path, *args, **kwargs):
        if not kwargs.get("header_only"):
            full_reads.append(str(path))
        return original(path, *args, **kwargs)

    def counting_summaries(path, *args, **kwargs):
        summary_reads.append(str(path))
        return original_summaries(path, *args, **kwargs)

    north = next(p for p in list_logs([folder]) if "truncated" not in p
                 and original(p, header_only=True).eval.model == "mockllm/north"
                 and (original(p, header_only=True).eval.metadata or {}).get("suite") == "css")

    monkeypatch.setenv("CLINICAL_CF_WORKERS", "1")  # read in this process, where the reads are counted
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reader, "read_eval_log", counting)
    monkeypatch.setattr(reader, "read_eval_log_sample_summaries", counting_summaries)
    monkeypatch.setattr(inspect_ai.log, "read_eval_log", counting)
    code = main(["report", str(folder), "--out", str(tmp_path / "out"), "--rewards", str(tmp_path / "r.jsonl"),
                 "--gate", "--baseline", north])
    assert code == 1  # south scores 0 where north scores 1 on the same tuples
    # One summaries read per readable clinical_cf log of the folder (2 CSS, 1 sensitivity); the baseline's
    # second read of north comes from the cache.
    assert len(summary_reads) == len(set(summary_reads)) == 3 and north in summary_reads
    css_logs = {p for p in summary_reads if "css-family-d" in p}
    # Full samples: the rewards export reads each CSS log once; the page reads the one log holding the edits.
    # (Issue 45: the page reads the edits from score metadata, so a new log may need no full read at all.)
    assert set(full_reads) <= css_logs and len(full_reads) == len(set(full_reads))
    assert (tmp_path / "out" / "side_by_side.html").exists() and (tmp_path / "r.jsonl").read_text().count("\n") > 0
    # Against north alone, the gate names the failing model and family.
    assert "mockllm/south" in (tmp_path / "out" / "gate.csv").read_text()

    # A second report over the same logs parses nothing: rows and page records come from the cache.
    full_reads.clear()
    summary_reads.clear()
    assert main(["report", str(folder), "--out", str(tmp_path / "again")]) == 0
    assert summary_reads == [] and full_reads == []
    assert (tmp_path / "again" / "report.md").read_text().count("tuples:") == (tmp_path / "out" / "report.md").read_text().count("tuples:")
