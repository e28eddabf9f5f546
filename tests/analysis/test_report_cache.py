"""The report's row cache can only cost speed: columnar, never executable, keyed by content, and a damaged
entry is rebuilt with a warning (oracle MedPIC and CSS logs)."""

import pickle
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import clinical_cf.analysis.sections as sections
from clinical_cf.analysis.logs import CACHE_VERSION, RowCache, read_logs
from clinical_cf.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cachelogs")
    return oracle.medpic_logs(folder)


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {p.name: pd.read_csv(p) for p in sorted(out.glob("*.csv"))}


def test_the_cache_is_parquet_with_no_pickle_and_a_warm_report_equals_the_cold_one(logs, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(cache))
    assert main(["report", *logs.values(), "--out", str(tmp_path / "cold")]) == 0
    files = sorted(f for f in cache.rglob("*") if f.is_file())
    assert len([f for f in files if f.suffix == ".parquet" and f.parent == cache]) == len(logs)  # one row entry per log
    assert not [f for f in files if f.read_bytes()[:1] == b"\x80"]  # no pickle (protocol 2+ starts with 0x80)
    assert main(["report", *logs.values(), "--out", str(tmp_path / "warm")]) == 0
    cold, warm = _tables(tmp_path / "cold"), _tables(tmp_path / "warm")
    assert cold.keys() == warm.keys()
    for name in cold:
        pd.testing.assert_frame_equal(cold[name], warm[name], obj=name)
    # Rows read back from the cache are the rows read from the log, value for value (dicts, lists, None).
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", "off")
    fresh = read_logs(list(logs.values()), mode="summaries").samples
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(cache))
    cached = read_logs(list(logs.values()), mode="summaries").samples
    assert list(fresh.columns) == list(cached.columns)
    for col in fresh.columns:
        assert [repr(v) for v in fresh[col]] == [repr(v) for v in cached[col]], col


@pytest.mark.parametrize("damage", ["truncated", "foreign", "pickle", "empty"])
def test_a_damaged_entry_is_rebuilt_with_a_warning_never_fatal(logs, tmp_path, monkeypatch, capsys, damage):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(cache))
    assert main(["report", *logs.values(), "--out", str(tmp_path / "first")]) == 0
    capsys.readouterr()
    entry = RowCache.for_log(logs["gf_only"]).file
    assert entry.is_file() and entry.name.endswith(f"{CACHE_VERSION}.parquet")
    body = entry.read_bytes()
    for report_entry in [p for p in cache.iterdir() if p.is_dir()]:  # the whole-report cache would answer first

        shutil.rmtree(report_entry)
    entry.write_bytes({"truncated": body[: len(body) // 2], "foreign": b"PAR1 not a parquet file PAR1",
                       "pickle": pickle.dumps(("header", "frame")), "empty": b""}[damage])
    assert main(["report", *logs.values(), "--out", str(tmp_path / "second")]) == 0
    err = capsys.readouterr().err
    assert f"report cache entry {entry.name} is damaged" in err and "rebuilt from the log" in err and "Traceback" not in err
    assert "cannot be read" not in err  # the log itself is fine
    for name, table in _tables(tmp_path / "first").items():
        pd.testing.assert_frame_equal(table, pd.read_csv(tmp_path / "second" / name), obj=name)
    assert RowCache.for_log(logs["gf_only"]).load() is not None  # rebuilt


def test_ctrl_c_during_a_report_ends_with_one_line(logs, tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sections, "build_report", interrupted)
    assert main(["report", *logs.values(), "--out", str(tmp_path / "r")]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "clinical-cf report: interrupted"


def test_an_unchanged_report_is_reused_and_says_what_it_said_and_any_change_rebuilds_it(logs, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(cache))
    folder = tmp_path / "logs"
    shutil.copytree(Path(logs["right"]).parent, folder)
    assert main(["report", str(folder), "--out", str(tmp_path / "a")]) == 0
    first = capsys.readouterr()
    assert main(["report", str(folder), "--out", str(tmp_path / "b")]) == 0
    second = capsys.readouterr()
    assert "reused from the report cache" in second.out
    assert [line for line in first.err.splitlines() if line.startswith("report: ")] == second.err.splitlines()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
    for file in (tmp_path / "a").iterdir():
        assert file.read_bytes() == (tmp_path / "b" / file.name).read_bytes(), file.name
    # A damaged entry: named, rebuilt, same report.
    entry = next(p for p in cache.iterdir() if p.is_dir())
    (entry / "medpic.csv").write_text("model\nforged\n", encoding="utf-8")
    assert main(["report", str(folder), "--out", str(tmp_path / "c")]) == 0
    third = capsys.readouterr()
    assert "is damaged" in third.err and "reused" not in third.out
    assert (tmp_path / "c" / "medpic.csv").read_bytes() == (tmp_path / "a" / "medpic.csv").read_bytes()
    # A log removed from the folder: a different report, not the cached one.
    next(folder.glob("*.eval")).unlink()
    assert main(["report", str(folder), "--out", str(tmp_path / "d")]) == 0
    assert "reused" not in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "d" / "medpic.csv")) == 2
