"""Report outputs a spreadsheet opens safely, and run labels that cannot silently mislabel (oracle logs)."""

import sys
from pathlib import Path

import pandas as pd
import pytest

from clinical_cf.analysis.tables import neutralised, safe_for_spreadsheets
from clinical_cf.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402

FORMULA = '=HYPERLINK("http://example.invalid","x")'


@pytest.fixture(scope="module")
def medpic_logs(tmp_path_factory):
    return oracle.medpic_logs(tmp_path_factory.mktemp("medpic"))


def test_text_cells_that_start_a_formula_are_quoted_and_numbers_are_not():
    for text in ("=1+1", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"):
        assert neutralised(text) == "'" + text
    assert neutralised("mockllm/a") == "mockllm/a" and neutralised(-0.5) == -0.5
    table = safe_for_spreadsheets(pd.DataFrame({"run": [FORMULA], "css": [-0.25]}))
    assert table.loc[0, "run"] == "'" + FORMULA and table.loc[0, "css"] == -0.25


def test_a_formula_label_lands_as_text_in_every_csv_and_the_parquet(medpic_logs, tmp_path, capsys):
    out = tmp_path / "report"
    log = medpic_logs["right"]
    assert main(["report", *medpic_logs.values(), "--out", str(out), "--label", f"{FORMULA}={log}"]) == 0
    samples = pd.read_csv(out / "samples.csv")
    assert set(samples.loc[samples["log"] == log, "run"]) == {"'" + FORMULA}
    assert set(pd.read_parquet(out / "samples.parquet").query("log == @log")["run"]) == {"'" + FORMULA}
    for csv in out.glob("*.csv"):
        text = csv.read_text(encoding="utf-8")
        assert "\n=" not in text and ",=" not in text and not text.startswith("="), csv.name


def test_two_labels_for_one_log_are_an_error_naming_both(medpic_logs, tmp_path, capsys):
    log = medpic_logs["right"]
    code = main(["report", *medpic_logs.values(), "--out", str(tmp_path / "r"), "--label", f"first={log}", "--label", f"second={log}"])
    err = capsys.readouterr().err
    assert code == 2 and "two labels" in err and "'first'" in err and "'second'" in err and "Traceback" not in err


def test_a_label_naming_no_log_read_is_an_error_naming_it(medpic_logs, tmp_path, capsys):
    other = oracle.medpic_logs(tmp_path / "other")["wrong"]
    logs = [medpic_logs["right"]]
    code = main(["report", *logs, "--out", str(tmp_path / "r"), "--label", f"stray={other}"])
    err = capsys.readouterr().err
    assert code == 2 and "'stray'" in err and "names no log the report reads" in err


def test_two_labelled_runs_of_one_model_are_two_medpic_rows_never_pooled(medpic_logs, tmp_path):
    second = oracle.medpic_logs(tmp_path / "again")
    first_dir, second_dir = Path(medpic_logs["right"]).parent, Path(second["right"]).parent
    out = tmp_path / "report"
    assert main(["report", str(first_dir), str(second_dir), "--out", str(out),
                 "--label", f"r1={first_dir}", "--label", f"r2={second_dir}"]) == 0
    table = pd.read_csv(out / "medpic.csv").set_index("model")
    n = oracle.GF_N + 2 * oracle.PAIRS
    for behaviour in oracle.MEDPIC_MODELS:
        for run in ("r1", "r2"):
            assert table.loc[f"mockllm/{behaviour} · run {run}", "questions"] == n  # not 2n pooled, not replaced
    assert len(table) == 6
