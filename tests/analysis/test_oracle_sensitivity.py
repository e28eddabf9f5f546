"""The sensitivity section against the oracle: a model whose distribution never moves is consistent exactly on
the pairs pre-registered as invariant, never flips, and moves by 0 in every measure (closed form from the
catalog's expected directions, never from the analysis code)."""

import sys
from pathlib import Path

import pytest

from clinical_cf.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402
from test_oracle import check_table, html_tables, md_tables  # noqa: E402


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("oracle_sensitivity")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(folder / "cache"))
        oracle.sensitivity_logs(folder / "logs")
        out = folder / "report"
        assert main(["report", str(folder / "logs"), "--out", str(out)]) == 0
    return {"out": out, "rendered": (md_tables(out / "report.md"), html_tables(out / "report.html"))}


def test_sensitivity_profile_every_cell(sweep):
    chosen = [s.metadata for s in oracle.sensitivity_selection()]
    expected = []
    for kind in sorted({m["type"] for m in chosen}):
        mine = [m for m in chosen if m["type"] == kind]
        consistency = sum(m["expected"] == "invariant" for m in mine) / len(mine)
        row = {"model": "mockllm/steady", "type": kind, "consistency": consistency, "flip_rate": 0.0, "js": 0.0,
               "relative_change": 0.0, "entropy_change": 0.0, "pairs": len(mine)}
        if consistency in (0.0, 1.0):  # every pair of the type agrees: every resample gives the same mean
            row |= {"ci_low": consistency, "ci_high": consistency}
        expected.append(row)
    check_table(sweep, sweep["rendered"], "sensitivity_profile.csv", "Sensitivity suite", expected, ["model", "type"])


def test_sensitivity_parse_quality(sweep):
    n = len(oracle.sensitivity_selection())
    expected = [{"model": "mockllm/steady", "judge": "", "run": "", "samples": n, "replies": 2 * n, "json": 1.0}]
    check_table(sweep, sweep["rendered"], "sensitivity_parse_table.csv", "Parse quality", expected, ["model", "run"])
