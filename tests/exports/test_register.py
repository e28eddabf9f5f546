"""inspect_evals Register entries: the checked-in eval.yaml files are valid, current and versioned by the N-X rule."""

import dataclasses
import shutil

import pytest
import yaml

from clinical_cf.catalog.errors import CatalogError
from clinical_cf.exports.register import (
    REGISTER_DIR,
    RegisterEntry,
    build_entry,
    entry_path,
    export_register,
    load_entry,
    next_version,
)
from clinical_cf.suites import SUITES

VALID = {
    "title": "A suite",
    "description": "What it measures.",
    "arxiv": "https://arxiv.org/abs/2608.03028",
    "group": "Knowledge",
    "contributors": ["someone"],
    "version": "1-A",
    "tasks": [{"name": "medpic", "dataset_samples": 400}],
    "tags": ["Medical"],
    "metadata": {"requires_internet": False},
}


def write(tmp_path, entry):
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(entry))
    return path


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_checked_in_entries_are_valid_and_current(suite):
    path = entry_path(suite)
    entry = load_entry(path)
    assert {t.name for t in entry.tasks} == set(SUITES[suite].tasks)
    rebuilt = build_entry(SUITES[suite], entry)
    assert rebuilt == yaml.safe_load(path.read_text()), (
        f"{path} is stale (catalog, data or task counts changed): run `clinical-cf export register`, "
        "which also bumps the version"
    )


def test_every_suite_has_an_entry():
    assert sorted(p.parent.name for p in REGISTER_DIR.glob("*/eval.yaml")) == sorted(SUITES)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"title": None}, "title"),
        ({"version": "1.0"}, "version"),
        ({"group": "Medicine"}, "group"),
        ({"arxiv": "arxiv 2608.03028"}, "arxiv"),
        ({"contributors": []}, "contributors"),
        ({"tasks": [{"name": "medpic", "dataset_samples": 0}]}, "tasks.0.dataset_samples"),
        ({"tasks": [{"name": "medpic"}]}, "tasks.0.dataset_samples"),
        ({"homepage": "https://example.org"}, "homepage"),
    ],
)
def test_invalid_entries_name_the_file_and_field(tmp_path, change, field):
    entry = {**VALID, **change}
    entry = {k: v for k, v in entry.items() if v is not None}
    path = write(tmp_path, entry)
    with pytest.raises(CatalogError) as info:
        load_entry(path)
    assert info.value.file == str(path)
    assert info.value.field == field


def test_duplicate_task_names_are_refused(tmp_path):
    tasks = [{"name": "medpic", "dataset_samples": 1}, {"name": "medpic", "dataset_samples": 2}]
    with pytest.raises(CatalogError, match="duplicate task names"):
        load_entry(write(tmp_path, {**VALID, "tasks": tasks}))


def test_version_rule():
    previous = RegisterEntry.model_validate({**VALID, "version": "3-C", "metadata": {"comparability_fingerprint": "abc"}})
    assert next_version(None, "abc") == "1-A"
    assert next_version(previous, "abc") == "3-C"
    assert next_version(previous, "abc", interface_change=True) == "3-D"
    assert next_version(previous, "def") == "4-A"
    assert next_version(previous, "def", interface_change=True) == "4-A"


def test_re_registering_a_catalog_bumps_n(tmp_path):
    suite = SUITES["sensitivity"]
    catalog = tmp_path / "perturbations.yaml"
    shutil.copy(suite.catalogs[0], catalog)
    register = tmp_path / "register"
    (register / "sensitivity").mkdir(parents=True)
    shutil.copy(entry_path("sensitivity"), register / "sensitivity" / "eval.yaml")
    before = load_entry(register / "sensitivity" / "eval.yaml").version

    edited = dataclasses.replace(suite, catalogs=(catalog,))
    catalog.write_text(catalog.read_text() + "\n# a re-registered edit\n")
    entry = build_entry(edited, load_entry(register / "sensitivity" / "eval.yaml"))
    n = int(before.split("-")[0])
    assert entry["version"] == f"{n + 1}-A"

    # Nothing changed: exporting again keeps the version; an interface change moves X only.
    [path] = export_register(register, ["sensitivity"])
    assert load_entry(path).version == before
    [path] = export_register(register, ["sensitivity"], interface_change=True)
    assert load_entry(path).version == f"{n}-{chr(ord(before[-1]) + 1)}"
