import pytest


@pytest.fixture(autouse=True)
def isolated_inspect(tmp_path, monkeypatch):
    """Keep Inspect's generate cache and logs in the test's temp dir, and ignore a model set in .env."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("INSPECT_EVAL_MODEL", raising=False)
