"""Report outputs a spreadsheet opens safely, and run labels that cannot silently mislabel (oracle logs)."""

import sys
from pathlib import Path

import pandas as pd
import pytest

from clinical_cf.analysis.tables import neutralised, safe_for_spreadsheets
from clinical_cf.cli import main
from clinical_cf.core.outputs import refuse_bundled
from clinical_cf.suites import CATALOG_DIR
from helpers import HANDWRITTEN_CASES

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402
from hostile_logs import one_css_log, with_setting  # noqa: E402

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


# ---------------------------------------------------------------- nothing outside --out (issue 38, item 6)

@pytest.fixture(scope="module")
def css_log(tmp_path_factory):
    return one_css_log(tmp_path_factory.mktemp("css"))


def _files_under(folder: Path) -> set[Path]:
    """Every file under `folder` but the report's own cache (CLINICAL_CF_CACHE_DIR, set by conftest.py)."""
    cache = folder / "report-cache"
    return {p for p in folder.rglob("*") if p.is_file() and cache not in p.parents}


@pytest.mark.parametrize("setting", ["../escaped", "../../escaped", "sub/dir", "..", "a\\..\\b", "x\x00y", "", " ", "." * 300],
                         ids=["parent", "grandparent", "subfolder", "dotdot", "backslashes", "nul", "empty", "blank", "long"])
def test_a_setting_from_log_metadata_never_writes_outside_out(css_log, tmp_path, setting, capsys):
    logs = tmp_path / "area" / "logs"
    log = with_setting(css_log, setting, logs / "hostile.eval")
    out = tmp_path / "area" / "deep" / "report"
    before = _files_under(tmp_path)
    code = main(["report", log, "--out", str(out), "--no-cache"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    written = _files_under(tmp_path) - before
    outside = [p for p in written if out.resolve() not in p.resolve().parents]
    assert not outside, outside
    assert code == 0 and (out / "report.md").is_file()
    # Every table of the setting is still written, under a name that stays in --out.
    assert any(p.name.endswith("_cms_css.csv") for p in written), sorted(p.name for p in written)


def test_an_absolute_setting_writes_inside_out(css_log, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = with_setting(css_log, str(elsewhere / "owned"), tmp_path / "logs" / "abs.eval")
    out = tmp_path / "report"
    assert main(["report", log, "--out", str(out), "--no-cache"]) == 0
    assert not list(elsewhere.iterdir()), list(elsewhere.iterdir())
    assert any(p.name.endswith("_cms_css.csv") for p in out.iterdir())


def test_two_settings_that_clean_to_one_name_do_not_overwrite_each_other(css_log, tmp_path, capsys):
    a = with_setting(css_log, "agent/x", tmp_path / "logs" / "a.eval")
    b = with_setting(css_log, "agent_x", tmp_path / "logs" / "b.eval")
    out = tmp_path / "report"
    assert main(["report", a, b, "--out", str(out), "--no-cache"]) == 0
    assert len(list(out.glob("*_cms_css.csv"))) == 2, sorted(p.name for p in out.iterdir())


# ---------------------------------------------------------------- an --out into the bundled data is refused

def _bundled(*parts: str) -> Path:
    return CATALOG_DIR.joinpath(*parts)


def _snapshot(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def bundled_unchanged():
    """The bundled catalog, byte for byte, before and after (no file added, none changed)."""
    folder = _bundled()
    before = _snapshot(folder)
    yield
    after = _snapshot(folder)
    added = sorted(str(p) for p in after.keys() - before.keys())
    changed = sorted(str(p) for p in before if before[p] != after.get(p))
    # Put the checkout back first, whatever the verdict (the probe ran before the guard existed too).
    for path in map(Path, added):
        path.unlink()
    for path in map(Path, changed):
        path.write_bytes(before[path])
    for folder_ in sorted({p.parent for p in map(Path, added)}, key=lambda p: -len(p.parts)):
        while folder_ != folder and folder_.is_dir() and not any(folder_.iterdir()):
            folder_.rmdir()
            folder_ = folder_.parent
    assert not added and not changed, (added, changed)


def _refused(capsys, argv: list[str], argument: str) -> str:
    try:
        code = main(argv)
    except SystemExit as ex:
        code = ex.code
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err
    assert argument in err and "bundled" in err, err
    return err


@pytest.mark.writes_checkout  # would write into the checkout's catalog/ if the guard failed
@pytest.mark.parametrize("via", ["symlink", "direct", "dotdot"])
def test_export_dataset_into_the_bundled_data_is_refused_before_writing(tmp_path, capsys, bundled_unchanged, via):
    target = _bundled("css")
    if via == "symlink":
        out = tmp_path / "looks-harmless"
        out.symlink_to(target, target_is_directory=True)
    elif via == "dotdot":
        out = target / ".." / "css"
    else:
        out = target
    _refused(capsys, ["export", "dataset", "--suite", "css", "--out", str(out)], "--out")


@pytest.mark.writes_checkout
def test_cases_answer_through_a_symlink_to_the_bundled_cohort_is_refused(tmp_path, capsys, bundled_unchanged):
    link = tmp_path / "mine.jsonl"
    link.symlink_to(_bundled("css", "cases.jsonl"))
    questions = tmp_path / "mine.questions.jsonl"
    questions.write_text("")
    _refused(capsys, ["cases", "answer", str(questions), "--out", str(link), "--confirm", "x"], "--out")


@pytest.mark.writes_checkout
@pytest.mark.parametrize("command", [
    ["report", "LOGS", "--out", "{out}"],
    ["annotate", "export", "LOGS", "--out", "{out}"],
    ["counterfactuals", "build", "--cases", "CASES", "--editor", "regex", "--out", "{out}"],
    ["catalog", "review-packet", "--per-intervention", "1", "--seed", "0", "--out", "{out}"],
    ["export", "lm-eval", "--out", "{out}"],
    ["cases", "import", "PACKET", "--out", "{out}/new.jsonl"],
    ["workflow-controller", "LOGS", "--out", "{out}"],
], ids=["report", "annotate", "build", "review-packet", "lm-eval", "import", "workflow-controller"])
def test_every_out_into_the_bundled_data_is_refused(tmp_path, capsys, bundled_unchanged, command):
    link = tmp_path / "out-link"
    link.symlink_to(_bundled("medpic"), target_is_directory=True)
    packet = tmp_path / "p.txt"
    packet.write_text("Tumour board 2026-01-14. 61-year-old woman, colon cancer.")
    values = {"LOGS": str(tmp_path), "CASES": str(HANDWRITTEN_CASES), "PACKET": str(packet)}
    argv = [values.get(a, a).replace("{out}", str(link)) for a in command]
    _refused(capsys, argv, "--out")


@pytest.mark.writes_checkout
def test_report_rewards_file_into_the_bundled_data_is_refused(css_log, tmp_path, capsys, bundled_unchanged):
    _refused(capsys, ["report", css_log, "--out", str(tmp_path / "r"), "--rewards", str(_bundled("css", "cases.jsonl"))], "--rewards")


# ---------------------------------------------------------------- nothing echoed

SECRET = "sk-proj-Zq8vN3xR7tLw2Y9bK4mP6sD1fH5jG0cA"


@pytest.mark.parametrize("value", [SECRET, f"4{SECRET}", f" {SECRET} ", f"-{SECRET}"])
def test_a_secret_in_the_workers_variable_is_not_echoed(css_log, tmp_path, capsys, monkeypatch, value):
    monkeypatch.setenv("CLINICAL_CF_WORKERS", value)
    other = tmp_path / "copy.eval"  # two logs: the report reads them in workers
    other.write_bytes(Path(css_log).read_bytes())
    code = main(["report", css_log, str(other), "--out", str(tmp_path / "r"), "--no-cache"])
    captured = capsys.readouterr()
    text = captured.err + captured.out
    assert code == 2 and "CLINICAL_CF_WORKERS" in text, text
    assert SECRET not in text and SECRET[:16] not in text, text


@pytest.mark.parametrize("argv", [
    ["annotate", "export", "LOGS", "--out", "O", "--n", SECRET],
    ["annotate", "export", "LOGS", "--out", "O", "--seed", SECRET],
    ["report", "LOGS", "--out", "O", "--gate", "--baseline", "LOGS", "--margin", SECRET],
    ["counterfactuals", "build", "--cases", "C", "--editor", "regex", "--out", "O", "--limit", SECRET],
    ["workflow-controller", "LOGS", "--cost-ratio", SECRET],
    ["catalog", "summary", "--families", SECRET],
], ids=["n", "seed", "margin", "limit", "cost-ratio", "families"])
def test_a_value_that_fails_validation_is_not_echoed_in_full(tmp_path, capsys, argv, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [str(tmp_path) if a in ("LOGS", "C") else str(tmp_path / "o") if a == "O" else a for a in argv]
    try:
        code = main(argv)
    except SystemExit as ex:
        code = ex.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert SECRET not in err and SECRET[:16] not in err, err


@pytest.mark.writes_checkout
def test_an_out_folder_holding_a_link_into_the_bundled_data_is_refused(tmp_path, capsys, bundled_unchanged):
    """`export dataset` writes OUT/cases.jsonl: a link planted there would be followed into the bundled cohort."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "cases.jsonl").symlink_to(_bundled("css", "cases.jsonl"))
    _refused(capsys, ["export", "dataset", "--suite", "css", "--out", str(out)], "--out")


def test_an_out_beside_the_bundled_data_is_not_refused(tmp_path):
    """The guard is about the bundled folder itself: a sibling whose name starts the same is an ordinary folder."""

    sibling = _bundled().parent / (_bundled().name + "-exports")
    assert refuse_bundled(sibling) == sibling
    assert refuse_bundled(tmp_path / "out") == tmp_path / "out"
