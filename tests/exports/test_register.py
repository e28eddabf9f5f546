"""inspect_evals Register entries: the Register's own model accepts them, they are current, and versions follow N-X."""

import dataclasses
import json
import shutil
import subprocess

import pytest
import yaml
from inspect_ai import eval
from inspect_evals.metadata import ExternalEvalMetadata

from clinical_cf.core.errors import CatalogError
from clinical_cf.exports.register import (
    PUBLISHED_PATH,
    REGISTER_DIR,
    PublishedSuite,
    build_entry,
    entry_path,
    export_register,
    load_entry,
    next_version,
    published_version,
    released_published,
)
from clinical_cf.registration import published_entry
from clinical_cf.suites import SUITES, create_task
from helpers import MockModel

TASKS = [(suite, task) for suite in SUITES for task in SUITES[suite].tasks]

# An entry as someone else might write one for another eval (none of our wording).
VALID = {
    "full_title": "Drug interaction recall under renamed brands",
    "common_title": "DIR",
    "description": "Asks for the interacting pair after brand names are swapped for generics.",
    "arxiv": "https://arxiv.org/abs/2608.03028",
    "contributors": ["someone"],
    "tasks": [{"name": "medpic_gf", "task_path": "tasks/medpic_gf/medpic_gf.py", "dataset_samples": 12}],
    "tags": ["Medical"],
    "source": {"repository_url": "https://github.com/example-org/dir-eval", "repository_commit": "0123abc"},
    "metadata": {"requires": {"internet": False}, "extras": {"suite": "medpic", "version": "2-C"}},
}


def write(tmp_path, entry, folder="medpic_gf"):
    path = tmp_path / folder / "eval.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entry), encoding="utf-8")
    return path


@pytest.mark.slow  # builds every task (~35 s in all)
@pytest.mark.parametrize("suite, task", TASKS, ids=[t for _, t in TASKS])
def test_checked_in_entries_are_valid_current_and_name_the_tasks_version(suite, task):
    path = entry_path(task)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    # The Register's own loader: the folder is the id; its model validates everything else.
    upstream = ExternalEvalMetadata.model_validate({**raw, "id": path.parent.name})
    assert [t.name for t in upstream.tasks] == [task]
    assert upstream.tasks[0].task_path == f"tasks/{task}/{task}.py"
    assert (REGISTER_DIR.parent / upstream.tasks[0].task_path).is_file()
    entry = load_entry(path)
    built = create_task(task)
    # The task's log names the version its Register entry publishes.
    assert built.version == entry.runtime_metadata.extras["version"] == published_version(suite)
    rebuilt = build_entry(
        SUITES[suite], task, published_version(suite), entry.source.repository_commit,
        list(entry.contributors), dataset_samples=len(built.dataset),
    )
    assert rebuilt == raw, (
        f"{path} is stale (catalog, data or task counts changed): run `clinical-cf export register`, "
        "which also bumps the version"
    )


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_published_record_is_current(suite):
    record = json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))[suite]
    assert record["fingerprint"] == SUITES[suite].fingerprint(), (
        f"{suite}'s catalogs or data changed since it was published: run `clinical-cf export register` (bumps N)"
    )
    # Every published file: the comparability files and the suite's other pre-registered files
    # (confirmatory predictions, judge probes, lexical audit), as `clinical_cf.registration` records them.
    assert record == published_entry(SUITES[suite], record["version"])
    assert set(SUITES[suite].file_hashes()) <= set(record["files"])


def test_one_entry_per_task_and_no_others():
    assert sorted(p.parent.name for p in REGISTER_DIR.glob("*/eval.yaml")) == sorted(t for _, t in TASKS)


def test_a_valid_entry_loads(tmp_path):
    entry = load_entry(write(tmp_path, VALID))
    assert entry.id == "medpic_gf" and entry.runtime_metadata.extras["version"] == "2-C"


@pytest.mark.parametrize(
    "change, field",
    [
        ({"common_title": None}, "common_title"),
        ({"source": None}, "source"),
        ({"source": {"repository_url": "not a url", "repository_commit": "0123abc"}}, "source.repository_url"),
        ({"arxiv": "arxiv 2608.03028"}, "arxiv"),
        ({"group": "Knowledge"}, "group"),  # an internal-eval key the Register refuses here
        ({"tasks": [{"name": "medpic_gf", "dataset_samples": 0, "samples": 3}]}, "tasks.0.samples"),
        # Our own keys are refused beside upstream's runtime keys; they belong in metadata.extras.
        ({"metadata": {"comparability_fingerprint": "ab" * 32}}, "metadata.comparability_fingerprint"),
        ({"metadata": {"extras": {"suite": "medpic", "version": "v2"}}}, "metadata.extras.version"),
        ({"metadata": {"extras": {"suite": "oncology", "version": "1-A"}}}, "metadata.extras.suite"),
        ({"metadata": None}, "metadata.extras.suite"),
    ],
)
def test_invalid_entries_name_the_file_and_field(tmp_path, change, field):
    entry = {k: v for k, v in {**VALID, **change}.items() if v is not None}
    path = write(tmp_path, entry)
    with pytest.raises(CatalogError) as info:
        load_entry(path)
    assert info.value.file == str(path)
    assert info.value.field == field


def test_a_task_without_its_path_is_refused(tmp_path):
    tasks = [{"name": "medpic_gf", "dataset_samples": 12}]
    with pytest.raises(CatalogError, match="task_path"):
        load_entry(write(tmp_path, {**VALID, "tasks": tasks}))


def test_an_entry_with_two_tasks_is_refused(tmp_path):
    second = {"name": "medpic_cf", "task_path": "tasks/medpic_cf/medpic_cf.py"}
    with pytest.raises(CatalogError, match="one task per Register entry") as info:
        load_entry(write(tmp_path, {**VALID, "tasks": [VALID["tasks"][0], second]}))
    assert info.value.field == "tasks"


def test_a_broken_published_record_names_the_file_and_suite(tmp_path):
    path = tmp_path / "published.json"
    path.write_text(json.dumps({"workflow": {"version": "2", "fingerprint": "0" * 64, "files": {}}}), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        published_version("workflow", path)
    assert (info.value.file, info.value.entry, info.value.field) == (str(path), "workflow", "version")
    with pytest.raises(CatalogError, match="no published version"):
        published_version("workflow", tmp_path / "missing.json")


def test_version_rule():
    previous = PublishedSuite(version="3-C", fingerprint="a" * 64, files={})
    assert next_version(None, "a" * 64) == "1-A"
    assert next_version(previous, "a" * 64) == "3-C"
    assert next_version(previous, "a" * 64, interface_change=True) == "3-D"
    assert next_version(previous, "b" * 64) == "4-A"
    assert next_version(previous, "b" * 64, interface_change=True) == "4-A"
    with pytest.raises(ValueError, match="past Z"):
        next_version(PublishedSuite(version="1-Z", fingerprint="a" * 64, files={}), "a" * 64, interface_change=True)


def test_a_fingerprint_that_moved_only_because_parts_left_the_contract_keeps_the_version():
    previous = PublishedSuite(version="3-C", fingerprint="a" * 64, files={"f": "1"}, scoring={"p": "1", "unused": "2"})
    assert next_version(previous, "b" * 64, False, {"f": "1"}, {"p": "1"}) == "3-C"  # `unused` left: no score moved
    assert next_version(previous, "b" * 64, False, {"f": "1"}, {"p": "9"}) == "4-A"  # a part changed
    assert next_version(previous, "b" * 64, False, {"f": "1"}, {"p": "1", "new": "3"}) == "4-A"  # a part came in
    assert next_version(previous, "b" * 64, False, {"f": "2"}, {"p": "1"}) == "4-A"  # a file changed


def _git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True)


def test_an_unreleased_version_moves_once_not_on_every_export(tmp_path):
    """Versions count from the record committed at HEAD: a second export of an edited suite, or of a suite never
    committed, does not move its version again (a new suite once went 1-A -> 2-A after one edit)."""
    record = tmp_path / "catalog" / "published.json"
    record.parent.mkdir()
    committed = {"css": {"version": "7-A", "fingerprint": "a" * 64, "files": {}}}
    record.write_text(json.dumps(committed), encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "release")
    # Exported once after an edit (css 8-A) and once for a new suite (1-A), nothing committed since.
    exported = {**committed, "css": {**committed["css"], "version": "8-A", "fingerprint": "b" * 64},
                "labunits": {"version": "1-A", "fingerprint": "c" * 64, "files": {}}}
    record.write_text(json.dumps(exported), encoding="utf-8")
    released = released_published(record, root=tmp_path)
    assert {name: r.version for name, r in released.items()} == {"css": "7-A"}
    assert next_version(released.get("css"), "b" * 64) == "8-A"  # the same edit: still 8-A
    assert next_version(released.get("css"), "d" * 64) == "8-A"  # a second edit before committing: still 8-A
    assert next_version(released.get("labunits"), "d" * 64) == "1-A"  # never committed: 1-A through every edit
    _git(tmp_path, "commit", "-qam", "release 8-A")
    assert next_version(released_published(record, root=tmp_path).get("css"), "d" * 64) == "9-A"
    # Outside a git checkout the record itself is the release.
    outside = tmp_path.parent / f"{tmp_path.name}-copy.json"
    outside.write_text(json.dumps(exported), encoding="utf-8")
    assert released_published(outside, root=tmp_path)["labunits"].version == "1-A"


def test_re_registering_a_catalog_bumps_n_in_entries_and_published_record(tmp_path, monkeypatch):
    suite = SUITES["sensitivity"]
    catalog = tmp_path / "perturbations.yaml"
    shutil.copy(suite.catalogs[0], catalog)
    register, published = tmp_path / "register", tmp_path / "published.json"
    shutil.copytree(REGISTER_DIR / "sensitivity", register / "sensitivity")
    before = published_version("sensitivity")
    n, x = before.split("-")

    # Nothing changed: exporting keeps the version and the pinned commit; an interface change moves X only.
    [path] = export_register(register, ["sensitivity"], published_path=published)
    assert load_entry(path).runtime_metadata.extras["version"] == before
    assert load_entry(path).source.repository_commit == load_entry(entry_path("sensitivity")).source.repository_commit
    [path] = export_register(register, ["sensitivity"], interface_change=True, published_path=published)
    assert load_entry(path).runtime_metadata.extras["version"] == f"{n}-{chr(ord(x) + 1)}"

    edited = dataclasses.replace(suite, catalogs=(catalog,))
    catalog.write_text(catalog.read_text(encoding="utf-8") + "\n# a re-registered edit\n", encoding="utf-8")
    monkeypatch.setitem(SUITES, "sensitivity", edited)
    [path] = export_register(register, ["sensitivity"], commit="feedbeef", published_path=published)
    entry = load_entry(path)
    assert entry.runtime_metadata.extras["version"] == f"{int(n) + 1}-A"
    assert entry.source.repository_commit == "feedbeef"
    record = json.loads(published.read_text(encoding="utf-8"))["sensitivity"]
    assert record["version"] == f"{int(n) + 1}-A" and record["fingerprint"] == edited.fingerprint()


def test_a_log_names_the_version_it_ran():
    reply = MockModel("mockllm/model", lambda prompt: "Reasoning first.\nANSWER: A")
    log = eval(create_task("medpic_gf"), model=reply.model, limit=2, display="none")[0]
    assert log.status == "success", log.error
    assert log.eval.task_version == published_version("medpic")
