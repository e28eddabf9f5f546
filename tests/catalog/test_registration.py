"""Registration: every file a task reads is hashed, checked against its lock and the published hash, and recorded.

Tampering with any bundled file is refused; tamper-then-re-lock is visible as "not published" in the
log and in the report's banners; a log extended with samples of other inputs is refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from inspect_ai import Task, eval, eval_retry
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import UnregisteredCatalogError, read_lock, write_lock
from clinical_cf.registration import (
    PUBLISHED_PATH,
    SAMPLE_FINGERPRINT,
    published,
    published_entry,
    register_file,
    registration_check,
    write_published,
)
from clinical_cf.suites import CATALOG_DIR, SUITES, create_task
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import FIXTURES, MockModel, output

BUNDLED_DATA_AND_CATALOGS = sorted(
    p for p in CATALOG_DIR.rglob("*") if p.suffix in (".yaml", ".jsonl") and p.is_file()
)


@pytest.mark.parametrize("path", BUNDLED_DATA_AND_CATALOGS, ids=lambda p: p.relative_to(CATALOG_DIR).as_posix())
def test_every_bundled_file_is_locked_and_published(path):
    status = read_lock(path)
    assert status.registered, f"{path} does not match its lock {status.lock_path}"
    assert register_file(path, "data").published, f"{path} is not in catalog/published.json"


def test_published_json_matches_the_register_entries():
    released = published()
    assert set(released) == set(SUITES)
    register = Path(__file__).parents[2] / "register"
    for name, suite in SUITES.items():
        # Every task's Register entry names its suite's published version (one entry per task).
        for task in suite.tasks:
            entry = yaml.safe_load((register / task / "eval.yaml").read_text(encoding="utf-8"))
            assert entry["metadata"]["extras"] == {"suite": name, "version": released[name]["version"]}
        assert released[name]["fingerprint"] == suite.fingerprint()
        assert released[name] == published_entry(suite, released[name]["version"])


def test_write_published_keeps_other_suites(tmp_path):
    path = tmp_path / "published.json"
    shutil.copy(PUBLISHED_PATH, path)
    write_published({"sensitivity": "7-C"}, path)
    out = json.loads(path.read_text())
    assert out["sensitivity"]["version"] == "7-C" and out["css"] == published()["css"]


@pytest.mark.slow  # builds css_family_d on the bundled cohort
def test_task_records_every_file_with_hash_registered_published():
    task = create_task("css_family_d")
    record = task.metadata["registration"]
    paths = {f["path"]: f for f in record["files"]}
    assert set(paths) == {"catalog/css/interventions.yaml", "catalog/css/lexicon.yaml", "catalog/css/cases.jsonl"}
    assert all(f["registered"] and f["published"] and len(f["sha256"]) == 64 for f in paths.values())
    assert {s.metadata[SAMPLE_FINGERPRINT] for s in task.dataset} == {record["fingerprint"]}
    assert task.config.max_retries == 2 and task.config.timeout == 600


def _copy_with_lock(source: Path, target: Path) -> Path:
    shutil.copy(source, target)
    write_lock(target)
    return target


def test_user_data_file_is_hashed_and_marked_unregistered_never_refused(tmp_path):
    cases = tmp_path / "mine.jsonl"
    shutil.copy(FIXTURES / "css_cases_handwritten.jsonl", cases)
    task = create_task("css_family_d", cases=str(cases), unreviewed="allow")
    files = {f["path"]: f for f in task.metadata["registration"]["files"]}
    mine = files[str(cases)]
    assert mine["role"] == "data" and not mine["registered"] and not mine["published"]
    assert mine["sha256"] == read_lock(cases).catalog_sha256
    assert task.metadata["registration"]["registered"] is False
    write_lock(cases)
    files = {f["path"]: f for f in create_task("css_family_d", cases=str(cases), unreviewed="allow").metadata["registration"]["files"]}
    assert files[str(cases)]["registered"] and not files[str(cases)]["published"]


def test_relocked_catalog_is_registered_but_not_published(tmp_path):
    catalog = tmp_path / "perturbations.yaml"
    catalog.write_text((CATALOG_DIR / "sensitivity" / "perturbations.yaml").read_text() + "\n# changed after release\n")
    with pytest.raises(UnregisteredCatalogError):
        create_task("sensitivity", perturbations=str(catalog))
    write_lock(catalog)
    record = create_task("sensitivity", perturbations=str(catalog)).metadata["registration"]
    assert record["registered"] is True and record["published"] is False


def test_malformed_published_file_is_a_clean_error(tmp_path):
    path = tmp_path / "published.json"
    path.write_text("{not json")
    with pytest.raises(CatalogError, match="published.json"):
        published(path)


FAILURES_LEFT = [0]


class FlakyProvider(ModelAPI):
    """A provider `eval_retry` can rebuild from the log by name; fails `FAILURES_LEFT` calls, then answers."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
        if FAILURES_LEFT[0] > 0:
            FAILURES_LEFT[0] -= 1
            raise RuntimeError("provider went away")
        return output(self.model_name, '{"action": "ANSWER", "confidence": 0.8, "reason": "routine"}')


@modelapi(name="cf_flaky")
def cf_flaky():
    return FlakyProvider


def test_extending_a_log_after_a_relock_is_refused(tmp_path):
    """eval-retry after the episodes changed and were re-locked: the mixed log is refused, not reported."""
    episodes = _copy_with_lock(FIXTURES / "workflow_episodes_user.jsonl", tmp_path / "episodes.jsonl")
    FAILURES_LEFT[0] = 1  # one sample errors (no retries), the others are scored
    log = eval(
        workflow(episodes=str(episodes)), model="cf_flaky/model", display="none", max_retries=0,
        fail_on_error=False, log_dir=str(tmp_path / "logs"),
    )[0]
    assert sum(1 for s in log.samples if s.error) == 1
    assert log.results.scores[-1].metrics["inputs_consistent"].value == 1.0

    # Same inputs: the retry completes the log.
    same = eval_retry(log, display="none", log_dir=str(tmp_path / "same"))[0]
    assert same.status == "success" and not any(s.error for s in same.samples)

    # Inputs changed and re-locked: the retry is refused with a message naming both fingerprints.
    lines = episodes.read_text().splitlines()
    lines[-1] = lines[-1].replace("the", "teh", 1)
    episodes.write_text("\n".join(lines) + "\n")
    write_lock(episodes)
    mixed = eval_retry(log, display="none", log_dir=str(tmp_path / "mixed"))[0]
    assert mixed.status == "error"
    assert "refusing to extend this log" in mixed.error.message and "2 different sets" in mixed.error.message


def test_registration_check_scores_each_sample_by_its_input_fingerprint(tmp_path):
    stamped = [Sample(id=i, input="x", metadata={SAMPLE_FINGERPRINT: "f" * 64}) for i in (1, 2)]
    log = eval(
        Task(dataset=[*stamped, Sample(id=3, input="x")], scorer=registration_check()),
        model=MockModel("mockllm/model", lambda p: "ok").model,
        display="none",
        log_dir=str(tmp_path),
    )[0]
    scores = {s.id: s.scores["registration_check"] for s in log.samples}
    assert [scores[i].metadata["input_fingerprint"] for i in (1, 2)] == ["f" * 64] * 2 and scores[3].value == 0
    # In metadata, not as the answer: the viewer shows no score column of hashes.
    assert all(scores[i].answer is None for i in (1, 2))
    assert "carries no input fingerprint" in scores[3].explanation
    # A sample without a fingerprint next to stamped ones is a mixed log: the metric refuses it.
    assert log.status == "error" and "refusing to extend this log" in str(log.error.message)
