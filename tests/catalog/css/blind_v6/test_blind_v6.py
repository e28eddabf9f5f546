"""Blind round v6 (issue 43): the corpus's packets through the documented route, one test per failure class.

The route runs once per session (CLI subprocesses: about a minute on two cores), so every test here but the
corpus check is slow. Classes that fail today are xfail(strict=False), each naming its class and an example;
see README.md in this folder for the measured totals.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_blind  # noqa: E402

CORPUS = yaml.safe_load((HERE / "corpus.yaml").read_text(encoding="utf-8"))
REVIEW = yaml.safe_load((HERE / "review.yaml").read_text(encoding="utf-8"))["drafts"]


def test_corpus_is_complete():
    pkts = CORPUS["packets"]
    assert len(pkts) >= 10
    assert len({p["id"] for p in pkts}) == len(pkts)
    for p in pkts:
        e = p["expected"]
        for f in ("cancer_type", "sex", "age", "stage", "metastatic", "resected", "prior_lines", "board_date", "biomarkers"):
            assert f in e, (p["id"], f)
        assert p["structure"] in run_blind.EXT
        assert p["text"].strip()


@pytest.fixture(scope="module")
def blind(tmp_path_factory):
    return run_blind.run(tmp_path_factory.mktemp("blind_v6"))


def _all(blind, cls):
    return [f"{pid}: {x}" for pid, r in blind["per_packet"].items() for x in r[cls]]


slow = pytest.mark.slow
timeout = pytest.mark.timeout(900)


@slow
@timeout
def test_route_runs(blind):
    names = [c[0] for c in blind["log"]["commands"]]
    assert "import" in names and "build" in names
    assert blind["log"]["user_catalog_ok"], "the template's catalog, its <TODO>s filled, does not check"


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="silent wrong pre-fills (6 on v6): negation in Dutch ('HER2: negatief' read positive) and German "
    "('BRAF V600E: kein Nachweis' affirmed), a lung biopsy of a metastasis naming nsclc for a tongue SCC, "
    "'Ingen resektion'/'appendectomie 1998' as the resection, AJCC IIIA M1a testis pre-filled IV",
)
def test_no_silent_wrong_prefill(blind):
    assert _all(blind, "silent_wrong") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="wrong pre-fills marked weak (3 on v6): the 'next MDO' date as the board date, a radical vulvar "
    "excision called diagnostic, AJCC IIIA read as III",
)
def test_no_weak_wrong_prefill(blind):
    assert _all(blind, "weak_wrong") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="deciding markers never asked (12 on v6): MGMT/1p19q/ATRX/CDKN2A in an HL7 OBX extract, "
    "HRD in a CSV, BAP1/MTAP in a Swedish table, AFP/hCG (S stage), CD20/MYC, BRCA1 'nog niet bekend'",
)
def test_every_reported_marker_asked(blind):
    assert _all(blind, "never_asked") == []


@slow
@timeout
def test_no_marker_dropped(blind):
    assert _all(blind, "markers_dropped") == []


@slow
@timeout
def test_no_truthful_answer_refused(blind):
    assert _all(blind, "answer_refused") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="the schema refuses AJCC stage IIIA (M1a) with metastatic true for a testicular germ-cell tumour "
    "(only accepted after switching the staging system)",
)
def test_true_stage_accepted_first_time(blind):
    assert _all(blind, "answered_on_retry") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="stated outcome not read (7 on v6): 'Besluit:', 'Decisão:', 'Decyzja konsylium:', '## Beslut', "
    "'Conclusie:', 'P:' and a FHIR CarePlan left as consensus 'unknown'",
)
def test_stated_outcome_read(blind):
    assert _all(blind, "outcome_not_read") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="drafts that break the packet (10 on v6): E1/D2 events dated before a later scan or the diagnostic "
    "biopsy, a FGFR2 strip deleting the IDH1 and BRAF lines, statements cut into fragments ('.5 mg', "
    "'geen amplificatie)'), a FHIR observation joined into the procedure",
)
def test_no_draft_breaks_the_packet(blind):
    assert _all(blind, "broken_drafts") == []


@slow
@timeout
def test_no_must_not_apply_applied(blind):
    assert _all(blind, "must_not_applied") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="must-apply not produced (2 on v6): E1 on a Masaoka III thymoma dropped as incoherent (its scan "
    "dated 20 days before the board, before the biopsy), E1 not eligible for a FIGO IIIC ovarian cancer",
)
def test_every_must_apply_produced(blind):
    assert _all(blind, "must_apply_missed") == []


@slow
@timeout
@pytest.mark.xfail(
    strict=False,
    reason="drafts accepted without edits: 0 of 13 on v6 (goal 8 in 10); see review.yaml",
)
def test_drafts_accepted_without_edits(blind, tmp_path):
    cf = None
    for c in blind["log"]["commands"]:
        if c[0] == "build":
            cf = c
    assert cf is not None
    accepted = total = 0
    for ent in blind.get("entries", []):
        if ent["intervention_id"].startswith("N"):
            continue
        total += 1
        sha16 = hashlib.sha256(json.dumps(ent["counterfactual_sections"], sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
        g = REVIEW.get(ent["tuple_id"])
        if g and g["sha16"] == sha16 and g["verdict"] == "accept":
            accepted += 1
    assert total and accepted / total >= 0.8, f"{accepted}/{total} accepted without edits"
