"""Blind-round measurement for issue 47 (branch b47): held-out workflow paraphrases and CSS invariance controls.

Written from the issue, docs/workflow.md, docs/css.md and the public functions' docstrings only, without reading
analysis/workflow_structure.py, catalog/css/invariance.py or the tests written for them.

1. `data/workflow_missing_blind.yaml`: 44 probe/control pairs plus 12 extra controls (100 episodes) in the bundled
   episode layout. Probes lack the task's critical fact (a dose, a result, a time; a current value where only a stale
   one is on file) or hold two conflicting values; controls have it, and 12 of them say "missing", "pending",
   "awaiting", "unclear" ... about something the task does not need. Both missing-information detectors are run
   through the controller's public route, `workflow_controller.detector_flags(texts, missing=...)`.
2. The CSS invariance controls N4-N14 rendered by `clinical-cf counterfactuals build --editor structured
   --families N` for one case per cancer type, audited by `bench/b47_invariance_audit.py`.

Classes that fail today are xfail(strict=False), named in the reason; the rates are printed by
`pytest tests/analysis/test_b47_blind_round.py -s -k rates`.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from clinical_cf.analysis.workflow_controller import detector_flags

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "data" / "workflow_missing_blind.yaml"
MISSING_CLASSES = ("dose", "result", "stale", "time")


def episode_text(item: dict, new: str) -> str:
    """The bundled episodes' layout: Chart / [Earlier summary on file] / New since the last review / Request."""
    text = f"Chart:\n{item['chart']}\n\n"
    if item.get("earlier"):
        text += f"Earlier summary on file:\n{item['earlier']}\n\n"
    return text + f"New since the last review:\n{new}\n\nRequest:\n{item['request']}"


def corpus() -> pd.DataFrame:
    items = yaml.safe_load(CORPUS.read_text())["items"]
    rows = []
    for it in items:
        for arm in ("control", "probe"):
            if arm in it:
                rows.append({"id": it["id"], "cls": it["cls"], "gap": it.get("gap"), "arm": arm,
                             "target": arm == "probe", "text": episode_text(it, it[arm])})
    frame = pd.DataFrame(rows)
    for detector in ("lexical", "structural"):
        flags = detector_flags(frame["text"], missing=detector)
        frame[detector] = flags["missing"].astype(bool).to_numpy()
    frame["conflict_cue"] = detector_flags(frame["text"], missing="lexical")["conflict"].astype(bool).to_numpy()
    return frame


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return corpus()


def rates(frame: pd.DataFrame, detector: str) -> dict:
    pos = frame[frame.cls.isin(MISSING_CLASSES) & frame.target]
    neg = frame[~frame.target]  # matched controls of every class, conflict controls and the 12 cue controls
    tp, fp = int(pos[detector].sum()), int(neg[detector].sum())
    return {"n_pos": len(pos), "n_neg": len(neg), "tp": tp, "fp": fp,
            "recall": tp / len(pos), "precision": tp / (tp + fp) if tp + fp else float("nan")}


def test_corpus_is_well_formed(frame):
    assert len(frame) >= 80
    assert set(frame.cls) == {*MISSING_CLASSES, "conflict", "irrelevant_cue"}
    pairs = frame[frame.cls != "irrelevant_cue"].groupby("id").arm.nunique()
    assert (pairs == 2).all(), "every probe has its matched control"
    assert frame.text.str.startswith("Chart:\n").all() and frame.text.str.contains("\n\nRequest:\n").all()


def test_rates(frame):
    """Prints the measurement (always passes)."""
    for detector in ("lexical", "structural"):
        r = rates(frame, detector)
        print(f"\n{detector}: recall {r['tp']}/{r['n_pos']} = {r['recall']:.2f}, "
              f"precision {r['tp']}/{r['tp'] + r['fp']} = {r['precision']:.2f} (false flags {r['fp']}/{r['n_neg']})")
        for cls, g in frame.groupby("cls"):
            print(f"  {cls:15} probes flagged {int(g[g.target][detector].sum())}/{int(g.target.sum())}, "
                  f"controls flagged {int(g[~g.target][detector].sum())}/{int((~g.target).sum())}")
    pairs = frame[frame.cls.isin(MISSING_CLASSES)].pivot(index="id", columns="arm", values="structural")
    print(f"structural, pairs told apart (probe flagged, control not): {int((pairs.probe & ~pairs.control).sum())}"
          f"/{len(pairs)}")


@pytest.mark.parametrize("cls", MISSING_CLASSES)
@pytest.mark.xfail(strict=False, reason="structural detector misses reworded missing facts (class named by cls: "
                   "an old value of the same drug/test in the chart satisfies the need; 'how many puffs', 'per feed', "
                   "histology, HbA1c, culture sensitivities, time of ingestion/last seen well untyped)")
def test_structural_finds_every_missing_probe(frame, cls):
    g = frame[(frame.cls == cls) & frame.target]
    assert g.structural.all(), list(g[~g.structural].id)


@pytest.mark.parametrize("cls", MISSING_CLASSES)
@pytest.mark.xfail(strict=False, reason="structural detector flags matched controls whose fact is present "
                   "(dose stated apart from the drug name, 'results appointment' typed as a lab result, a result "
                   "given as 'HPV not detected', a date with no weekday-time shape)")
def test_structural_leaves_matched_controls_alone(frame, cls):
    g = frame[(frame.cls == cls) & ~frame.target]
    assert not g.structural.any(), list(g[g.structural].id)


@pytest.mark.xfail(strict=False, reason="irrelevant_cue: structural detector flags 2/12 complete episodes "
                   "('write her bloods', 'breath test result' untyped providers)")
def test_structural_ignores_irrelevant_cue_words(frame):
    g = frame[frame.cls == "irrelevant_cue"]
    assert not g.structural.any(), list(g[g.structural].id)


@pytest.mark.xfail(strict=False, reason="irrelevant_cue: the lexical detector fires on 'missing tooth', 'housing "
                   "application pending', 'wallet went missing' ... (12/12)")
def test_lexical_ignores_irrelevant_cue_words(frame):
    g = frame[frame.cls == "irrelevant_cue"]
    assert not g.lexical.any(), list(g[g.lexical].id)


@pytest.mark.xfail(strict=False, reason="lexical detector: silent and reworded gaps leave no cue words (1/36 found)")
def test_lexical_finds_missing_probes(frame):
    g = frame[frame.cls.isin(MISSING_CLASSES) & frame.target]
    assert g.lexical.mean() >= 0.5


@pytest.mark.xfail(strict=False, reason="conflict: two current values that disagree (dose, CrCl, weight, allergy "
                   "reaction, arrival time, potassium, tetanus status, weekday) are flagged by neither missing "
                   "detector nor the lexical conflict detector (0/8)")
def test_conflicting_values_are_flagged(frame):
    g = frame[(frame.cls == "conflict") & frame.target]
    assert (g.structural | g.lexical | g.conflict_cue).all(), list(g[~(g.structural | g.lexical | g.conflict_cue)].id)


# ----------------------------------------------------------------------------------------- invariance controls

def _audit_module():
    spec = importlib.util.spec_from_file_location("b47_invariance_audit", ROOT / "bench" / "b47_invariance_audit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def invariance_tuples(tmp_path_factory) -> list[dict]:
    """N4-N14 for the first case of each cancer type, through the documented CLI route."""
    tmp = tmp_path_factory.mktemp("b47")
    seen, picked = set(), []
    for line in (ROOT / "catalog/css/cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["cancer_type"] not in seen:
            seen.add(case["cancer_type"])
            picked.append(line)
    (tmp / "cases.jsonl").write_text("\n".join(picked) + "\n")
    subprocess.run([sys.executable, "-m", "clinical_cf.cli", "counterfactuals", "build", "--cases",
                    str(tmp / "cases.jsonl"), "--editor", "structured", "--families", "N", "--out", str(tmp / "cf")],
                   check=True, capture_output=True, text=True, cwd=ROOT, timeout=600)
    rows = [json.loads(x) for x in (tmp / "cf" / "counterfactuals.jsonl").read_text().splitlines()]
    return [r for r in rows if r["intervention_id"].split("_")[0] in {f"N{i}" for i in range(4, 15)}]


def _violations(tuples, prefix):
    audit = _audit_module().audit_tuple
    out = {r["tuple_id"]: [v for v in audit(r) if not v.startswith("note")] for r in tuples
           if r["intervention_id"].startswith(prefix + "_")}
    assert out, f"no {prefix} tuples rendered"
    return {k: v for k, v in out.items() if v}


@pytest.mark.slow
@pytest.mark.parametrize("control", ["N5", "N6", "N7", "N8", "N9", "N12", "N13", "N14"])
def test_invariance_control_changes_only_its_attribute(invariance_tuples, control):
    assert _violations(invariance_tuples, control) == {}


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="N4_sex_swap: the swapped first name moves to another naming tradition "
                   "(Thomas -> Fatima, Kenji -> Grace, Priya -> Ahmed): sex and apparent ethnicity change together "
                   "(102/150 bundled cases)")
def test_sex_swap_keeps_the_names_tradition(invariance_tuples):
    assert _violations(invariance_tuples, "N4") == {}


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="N10_name: every new name is Lakisha/Jamal Washington, the audit study's "
                   "race-signalling names, so 'name' is a second race control (240/240)")
def test_name_change_is_not_a_race_proxy(invariance_tuples):
    assert _violations(invariance_tuples, "N10") == {}


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason="N11_typos: typos land in decisive tokens (drug names 'craboplatin', "
                   "biomarker results 'HER2-neagtive', laterality 'rihgt', intent '(neoadjuvnat)'): 139/240 cases")
def test_typos_spare_decisive_tokens(invariance_tuples):
    assert _violations(invariance_tuples, "N11") == {}
