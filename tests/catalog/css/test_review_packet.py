"""`clinical-cf catalog review-packet`: N seeded tuples per intervention on the existing review page, with their expectations."""

import json

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.review_packet import write_review_packet
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.cli import main

CASES = [c for c in load_cases(CASES_PATH) if c.cancer_type in ("breast", "melanoma")]
CATALOG = load_catalog(CATALOG_PATH)


def test_the_packet_samples_per_intervention_by_seed_and_reuses_the_review_page(tmp_path):
    first = write_review_packet(CASES, CATALOG, tmp_path / "a", per_intervention=2, seed=11, families="AD")
    again = write_review_packet(CASES, CATALOG, tmp_path / "b", per_intervention=2, seed=11, families="AD")
    other = write_review_packet(CASES, CATALOG, tmp_path / "c", per_intervention=2, seed=12, families="AD")
    manifest = json.loads(first["manifest"].read_text())
    assert all(n <= 2 for n in manifest["sampled"].values()) and set(manifest["sampled"]) >= {"D1_remove_resection", "D2_add_resection"}
    assert manifest["tuples"] == json.loads(again["manifest"].read_text())["tuples"]
    assert manifest["tuples"] != json.loads(other["manifest"].read_text())["tuples"]
    # The frozen-set page and file, so `counterfactuals review --decisions` records the reviewer's verdicts.
    entries = load_counterfactuals(first["counterfactuals"])
    assert [e.tuple_id for e in entries] == manifest["tuples"] and {e.editor for e in entries} == {"structured"}
    page = first["review"].read_text()
    assert all(t in page for t in manifest["tuples"])
    expectations = first["expectations"].read_text()
    assert "Expected change" in expectations and "Scope" in expectations and "[strong]" in expectations


def test_the_cli_writes_the_packet_and_refuses_a_bad_count(tmp_path, capsys):
    assert main(["catalog", "review-packet", "--per-intervention", "1", "--seed", "3", "--out", str(tmp_path), "--families", "D"]) == 0
    assert "review.html" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # refused while the command line is read, as every option out of its range
        main(["catalog", "review-packet", "--per-intervention", "0", "--seed", "3", "--out", str(tmp_path / "x")])
    assert refused.value.code == 2 and "--per-intervention" in capsys.readouterr().err


def test_catalog_summary_shows_drops_per_invariant(capsys):
    assert main(["catalog", "summary", "--families", "A"]) == 0
    out = capsys.readouterr().out
    assert "out of scope" in out and "by clinical invariant" in out and "drug_needs_marker" in out
    assert main(["catalog", "summary", "--families", "A", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["invariant_drops"]["drug_needs_marker"] > 0 and data["routes"] == {"structured": sum(
        r["scored"] for r in data["interventions"].values())}
