"""Dataset export round trip: export, reload through our schema and Inspect, identical samples."""

import hashlib
import json

import datasets
import pytest
from inspect_ai.dataset import json_dataset

from clinical_cf.cli import main
from clinical_cf.exports.datasets import export_dataset, sample_record
from clinical_cf.registration import SAMPLE_KEYS
from clinical_cf.suites import SUITES, create_task

# Which file was the pre-registered catalog differs when the task reads the exported records.
PROVENANCE = {"catalog_sha256", "catalog_registered", *SAMPLE_KEYS}


def comparable(sample, provenance=True):
    record = sample_record(sample)
    metadata = {k: v for k, v in record["metadata"].items() if provenance or k not in PROVENANCE}
    return record["id"], json.dumps(record["input"]), record["target"], json.dumps(metadata, sort_keys=True)


@pytest.mark.slow  # rebuilds each suite's default task from its export (css: ~35 s)
@pytest.mark.parametrize("name", sorted(SUITES))
def test_export_round_trip(tmp_path, name, monkeypatch):
    suite = SUITES[name]
    files = export_dataset(suite, tmp_path)

    # Records reload through the suite's validator unchanged.
    bundled = suite.loader(suite.data)
    exported = suite.loader(files["records"])
    assert exported == bundled

    # The samples file reads back as the same Inspect samples.
    original = [comparable(s) for s in create_task(suite.main_task).dataset]
    assert [comparable(s) for s in json_dataset(str(files["samples"]))] == original

    # Feeding the exported records back to the task gives identical samples.
    rebuilt = create_task(suite.main_task, **{suite.data_arg: str(files["records"])})
    assert [comparable(s, provenance=False) for s in rebuilt.dataset] == [
        comparable(s, provenance=False) for s in create_task(suite.main_task).dataset
    ]

    # A lab's own loader: Hugging Face datasets reads both files (no network: the json builder is local).
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")

    for path, rows in ((files["samples"], len(original)), (files["records"], len(bundled))):
        loaded = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
        assert loaded.num_rows == rows

    manifest = json.loads(files["manifest"].read_text())
    assert manifest["fingerprint"] == suite.fingerprint()
    for file, sha in manifest["files"].items():
        assert hashlib.sha256((tmp_path / file).read_bytes()).hexdigest() == sha

    card = files["card"].read_text()
    assert card.startswith("---\nlicense: apache-2.0\n")
    # Every table row has as many cells as its header (a "|" inside a cell would break it).
    for block in card.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        assert len({line.count("|") for line in lines}) <= 1, block
    for needed in ("## Fields", "## Intended use", "## Limitations", "not clinically validated",
                   suite.fingerprint(), f"| `{suite.records}.jsonl` | {len(bundled)} |", f"| `samples.jsonl` | {len(original)} |"):
        assert needed in card


def test_cli_names_an_unknown_suite(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:  # `--suite` takes the suites as argparse choices (issue 46)
        main(["export", "dataset", "--suite", "oncology", "--out", str(tmp_path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--suite" in err and "'oncology'" in err and "css" in err
