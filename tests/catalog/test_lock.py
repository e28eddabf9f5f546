"""Pre-registration lock: a changed catalog is refused unless explicitly allowed."""

import shutil

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.core.locking import UnregisteredCatalogError, check_lock, read_lock, write_lock
from clinical_cf.tasks.css_task import build_css_task
from helpers import HANDWRITTEN_CASES


def test_bundled_catalog_matches_its_lock():
    assert read_lock(CATALOG_PATH).registered


def test_edited_catalog_is_refused_then_relocked(tmp_path):
    catalog = tmp_path / "interventions.yaml"
    shutil.copy(CATALOG_PATH, catalog)
    write_lock(catalog)
    assert check_lock(catalog).registered

    catalog.write_text(catalog.read_text().replace("\nversion: ", "\nversion: 9", 1))  # any version bump
    with pytest.raises(UnregisteredCatalogError, match="no longer matches its lock") as info:
        check_lock(catalog)
    assert "allow_unregistered" in str(info.value)
    assert not check_lock(catalog, allow_unregistered=True).registered

    write_lock(catalog)
    assert check_lock(catalog).registered


def test_catalog_without_lock_is_refused(tmp_path):
    catalog = tmp_path / "mine.yaml"
    shutil.copy(CATALOG_PATH, catalog)
    with pytest.raises(UnregisteredCatalogError, match="has no lock file"):
        check_lock(catalog)


def test_task_refuses_unregistered_catalog_and_records_hash_when_allowed(tmp_path):
    catalog = tmp_path / "interventions.yaml"
    catalog.write_text(CATALOG_PATH.read_text() + "\n# edited after registration\n")
    with pytest.raises(UnregisteredCatalogError):
        build_css_task(families="D", cases=str(HANDWRITTEN_CASES), catalog=str(catalog))
    task = build_css_task(families="D", cases=str(HANDWRITTEN_CASES), catalog=str(catalog), allow_unregistered=True, unreviewed="allow")
    assert task.metadata["catalog_registered"] is False
    sha = read_lock(catalog).catalog_sha256
    assert task.metadata["catalog_sha256"] == sha
    assert all(s.metadata["catalog_sha256"] == sha for s in task.dataset)
