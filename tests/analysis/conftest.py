import pytest


@pytest.fixture(autouse=True)
def isolated_report_cache(tmp_path, monkeypatch):
    """Each test's report-row cache lives in its temp dir, never in the user's cache folder."""
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(tmp_path / "report-cache"))
