"""`clinical-cf`: catalog lock/check/summary, case validation, schema; errors name file, entry and field."""

import json
import shutil

import pytest

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.observations import OBSERVATIONS_PATH
from clinical_cf.catalog.css.predictions import PREDICTIONS_PATH
from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH
from clinical_cf.cli import main
from helpers import HANDWRITTEN_CASES


def test_summary_prints_counts_per_intervention(capsys):
    assert main(["catalog", "summary", "--cases", str(HANDWRITTEN_CASES), "--families", "D"]) == 0
    out = capsys.readouterr().out
    assert "D1_remove_resection" in out and "eligible" in out and "no-op" in out


def test_summary_json_and_mode_comparison(capsys):
    assert main(["catalog", "summary", "--cases", str(HANDWRITTEN_CASES), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # Catalog v2 rewrites US-form dates too: the date control is no longer a no-op on them.
    assert data["interventions"]["N1_date_format"]["noop"] == 0
    assert data["interventions"]["N1_date_format"]["scored"] == 4
    assert data["residue"] == "drop" and "residue" in data["interventions"]["A1_her2_positive_to_negative"]


def test_lock_then_check(tmp_path, capsys):
    catalog = tmp_path / "interventions.yaml"
    shutil.copy(CATALOG_PATH, catalog)
    assert main(["catalog", "check", str(catalog)]) == 1
    assert main(["catalog", "lock", str(catalog)]) == 0
    assert main(["catalog", "check", str(catalog)]) == 0
    assert "matches its lock" in capsys.readouterr().out


def test_lock_refuses_an_invalid_catalog(tmp_path, capsys):
    catalog = tmp_path / "bad.yaml"
    catalog.write_text(CATALOG_PATH.read_text().replace("family: D", "family: Q", 1))
    assert main(["catalog", "lock", str(catalog)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "D1_remove_resection" in err and "family" in err
    assert not catalog.with_suffix(".lock").exists()


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda c: c.pop("consensus"), ["fx-breast-1", "consensus", "Field required"]),
        (lambda c: c.update(stage="stage 2"), ["fx-breast-1", "stage", "stage 2"]),
        (lambda c: c["sections"].pop("labs"), ["fx-breast-1", "sections missing: labs"]),
        (lambda c: c.update(cancer_type="prostate"), ["case 'fx-breast-1', field 'sex': prostate cancer needs sex M"]),
        (lambda c: c["consensus"][0].update(label="preferred"), ["fx-breast-1", "consensus.0.label", "preferred"]),
    ],
)
def test_invalid_cases_name_file_case_and_field(tmp_path, capsys, mutate, words):
    rows = [json.loads(line) for line in HANDWRITTEN_CASES.read_text().splitlines()]
    mutate(rows[0])
    path = tmp_path / "my_cases.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["cases", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "my_cases.jsonl" in err
    for word in words:
        assert word in err


def test_schema_is_printed(capsys):
    assert main(["schema", "css-case"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "sections" in schema["properties"] and "consensus" in schema["required"]


def test_observation_catalog_checks_against_its_lock(capsys):
    assert main(["catalog", "check", str(OBSERVATIONS_PATH)]) == 0
    assert "4 entries, valid" in capsys.readouterr().out


def test_sensitivity_and_prediction_catalogs_check_against_their_locks(capsys):
    assert main(["catalog", "check", str(PERTURBATIONS_PATH)]) == 0
    assert main(["catalog", "check", str(PREDICTIONS_PATH)]) == 0
    out = capsys.readouterr().out
    assert "10 entries, valid" in out and "3 entries, valid" in out


# ---------------------------------------------------------------- a bad command line


@pytest.mark.parametrize(
    "argv, named",
    [
        (["catalog", "summary", "--mode", "fuzzy"], "--mode"),
        (["catalog", "summary", "--no-such-flag"], "--no-such-flag"),
        (["report", "logs", "--out", "o", "--margin", "lots"], "--margin"),
        (["annotate", "export", "logs", "--out", "o", "--n", "0"], "--n"),
        (["counterfactuals", "build", "--cases", "c.jsonl"], "--editor"),
        (["validate"], "path"),
        (["validate", "x.yaml", "--kind", "recipes"], "--kind"),
        (["catalogue"], "catalogue"),
        ([], "command"),
    ],
    ids=["bad-choice", "unknown-flag", "bad-number", "below-range", "missing-required", "missing-path", "bad-kind",
         "unknown-command", "no-command"],
)
def test_a_bad_command_line_is_one_or_two_lines_naming_the_argument(argv, named, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert 1 <= len(err.strip().splitlines()) <= 2 and "usage:" not in err, err
    assert named in err and "--help" in err, err


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["catalog", "summary", "--help"])
    assert info.value.code == 0 and "usage:" in capsys.readouterr().out


# ---------------------------------------------------------------- every numeric option has its range (issue 38)

BUILD = ["counterfactuals", "build", "--cases", "c.jsonl", "--editor", "regex", "--out", "o"]
RANGE_PROBES = [
    ([*BUILD, "--limit", "-1"], "--limit"),
    ([*BUILD, "--limit", "0"], "--limit"),
    ([*BUILD, "--retries", "-1"], "--retries"),
    ([*BUILD, "--retries", "1000000"], "--retries"),
    ([*BUILD, "--max-retries", "-1"], "--max-retries"),
    ([*BUILD, "--timeout", "0"], "--timeout"),
    ([*BUILD, "--timeout", "-5"], "--timeout"),
    ([*BUILD, "--max-tokens", "0"], "--max-tokens"),
    ([*BUILD, "--max-tokens", "10000000000"], "--max-tokens"),
    ([*BUILD, "--limit", "1.5"], "--limit"),
    (["report", "logs", "--out", "o", "--gate", "--baseline", "b", "--margin", "5"], "--margin"),
    (["report", "logs", "--out", "o", "--gate", "--baseline", "b", "--margin", "1.01"], "--margin"),
    (["annotate", "export", "logs", "--out", "o", "--n", "1e9"], "--n"),
    (["annotate", "export", "logs", "--out", "o", "--n", "10000000000"], "--n"),
    (["annotate", "export", "logs", "--out", "o", "--seed", "-1"], "--seed"),
    (["catalog", "review-packet", "--per-intervention", "1", "--seed", "-3", "--out", "o"], "--seed"),
    (["catalog", "review-packet", "--per-intervention", "-1", "--seed", "3", "--out", "o"], "--per-intervention"),
    (["workflow-controller", "logs", "--resamples", "0"], "--resamples"),
    (["workflow-controller", "logs", "--resamples", "-10"], "--resamples"),
    (["workflow-controller", "logs", "--cost-ratio", "nan"], "--cost-ratio"),
    (["workflow-controller", "logs", "--cost-ratio", "inf"], "--cost-ratio"),
    (["workflow-controller", "logs", "--cost-ratio", "-5"], "--cost-ratio"),
    (["workflow-controller", "logs", "--cost-ratio", "0"], "--cost-ratio"),
    (["workflow-controller", "logs", "--cost-ratio", "1e400"], "--cost-ratio"),
]


@pytest.mark.parametrize("argv, named", RANGE_PROBES, ids=[f"{n}={a[-1]}-{i}" for i, (a, n) in enumerate(RANGE_PROBES)])
def test_a_number_out_of_its_range_is_refused_in_one_line(argv, named, capsys, tmp_path, monkeypatch):
    """Refused while the command line is read: nothing runs, nothing is written (the relative paths land in tmp_path if
    a range were missing, never in the checkout)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "usage:" not in err, err
    assert named in err, err


def test_the_workflow_controller_names_its_own_range_on_the_range_error(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["workflow-controller", "logs", "--cost-ratio", "0.5"])
    err = capsys.readouterr().err
    assert "--cost-ratio" in err and "1" in err and "1000" in err, err
