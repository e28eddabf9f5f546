"""Bad input to `clinical-cf report` and `annotate`: one clear line naming the file and field, exit 2."""

from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample

from clinical_cf.cli import main
from helpers import MockModel


@pytest.fixture
def other_task_log(tmp_path):
    """A real Inspect log of a task that is no clinical_cf suite."""
    log = eval(Task(dataset=[Sample(input="x")]), model=MockModel("mockllm/other", lambda p: "x").model,
               display="none", log_dir=str(tmp_path / "other"))[0]
    return log.location


def _fails(capsys, *args):
    assert main(["report", *map(str, args), "--out", "unused-out"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


def test_missing_path_empty_folder_and_empty_file(tmp_path, capsys):
    assert "nowhere: does not exist" in _fails(capsys, tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    assert "empty: holds no Inspect logs" in _fails(capsys, tmp_path / "empty")
    (tmp_path / "zero.eval").write_bytes(b"")
    assert "zero.eval: is empty (0 bytes)" in _fails(capsys, tmp_path / "zero.eval")


def test_truncated_log_and_another_tasks_log_named_explicitly(tmp_path, capsys, other_task_log):
    err = _fails(capsys, other_task_log)
    assert other_task_log in err and "records no `suite`" in err
    with open(other_task_log, "rb") as handle:
        data = handle.read()
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(data[: len(data) // 2])
    assert "truncated.eval: cannot be read" in _fails(capsys, truncated)


def test_a_folder_with_no_usable_log_is_an_error(tmp_path, capsys, other_task_log):
    err = _fails(capsys, Path(other_task_log).parent)
    assert "no usable clinical_cf log" in err and "records no `suite`" in err


@pytest.mark.parametrize("margin", ["nan", "inf", "-0.1", "abc"])
def test_a_non_finite_or_negative_margin_is_refused(tmp_path, capsys, margin):
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(tmp_path), "--out", str(tmp_path / "o"), "--gate", "--baseline", str(tmp_path), "--margin", margin])
    assert exit_.value.code == 2 and "--margin" in capsys.readouterr().err


def test_a_malformed_label_is_refused(tmp_path, capsys):
    (tmp_path / "x.eval").write_bytes(b"x")
    assert "--label: 'rerun' is not NAME=LOG_OR_DIR" in _fails(capsys, tmp_path, "--label", "rerun")


@pytest.mark.parametrize("n", ["0", "-3"])
def test_annotate_export_needs_at_least_one_row(tmp_path, capsys, n):
    with pytest.raises(SystemExit) as exit_:
        main(["annotate", "export", str(tmp_path), "--out", str(tmp_path / "o"), "--n", n])
    assert exit_.value.code == 2 and "--n: must be a whole number from 1" in capsys.readouterr().err


def test_annotation_sheets_without_their_columns_or_with_one_rater_name_twice(tmp_path, capsys):
    key = tmp_path / "key.csv"
    key.write_text("row_id,family,llm_score\nr1,D,1\nr2,D,0\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    good = "row_id,score,coherent\nr1,1,yes\nr2,0,yes\n"
    (tmp_path / "a" / "alice.csv").write_text(good)
    (tmp_path / "b" / "alice.csv").write_text(good)
    (tmp_path / "bob.csv").write_text("row_id,verdict\nr1,1\n")

    def imports(*raters):
        code = main(["annotate", "import", *map(str, raters), "--key", str(key), "--out", str(tmp_path / "o")])
        return code, capsys.readouterr().err

    code, err = imports(tmp_path / "a" / "alice.csv", tmp_path / "b" / "alice.csv")
    assert code == 2 and "b/alice.csv: rater name 'alice' is also the name of" in err
    code, err = imports(tmp_path / "a" / "alice.csv", tmp_path / "bob.csv")
    assert code == 2 and "bob.csv" in err and "has no column 'score', 'coherent'" in err and "field 'score'" in err
    key.write_text("row_id,llm_score\nr1,1\n")
    code, err = imports(tmp_path / "a" / "alice.csv", tmp_path / "b" / "alice.csv")
    assert code == 2 and "key.csv" in err and "has no column 'family'" in err
