"""A clinician's own cancer type, from packet to scored counterfactual set, by the commands of the docs alone (issue 35).

docs/counterfactual-sets.md, "Interventions for your own cancer types": a cholangiocarcinoma packet whose board turns
on an FGFR2 fusion; the bundled catalog has no intervention for the type. The clinician writes one from the template,
fills its TODOs, checks (schema + scope audit) and locks it, imports and answers the packet, builds the drafts, reviews
them, and evaluates with mockllm roles. Each refusal on the way (an unfilled template, an unlocked catalog, an
unreviewed draft) is a step a user would hit.
"""

from __future__ import annotations

import json
import re

import pytest
from inspect_ai import eval

from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.tasks.css.css import css
from helpers import MockModel, data_blocks, recommendations_json

PACKET = """HPB MDT - 14/04/2026 - slide deck (synthetic)
Slide 1 | Patient
- 59F, SYN-90412, ECOG 1
- PMH: laparoscopic cholecystectomy 2014 (gallstones)
Slide 2 | Diagnosis
- Intrahepatic cholangiocarcinoma, segment VIII, biopsy 02/11/2025
- Satellite liver lesions and peritoneal deposits: stage IV (T2 N1 M1)
Slide 3 | Imaging 30/03/2026
- No evidence of thoracic metastatic disease.
- Liver and peritoneal disease: progression
Slide 4 | Molecular (NGS)
- FGFR2-BICC1 fusion detected
- IDH1 R132 mutation not detected
Slide 5 | Treatment so far
- Cisplatin + gemcitabine + durvalumab from 20/11/2025, progression on CT 30/03/2026
Slide 6 | Question for the board
- Second-line: futibatinib (FGFR2 fusion positive) vs FOLFOX?
"""

FILLED = {
    "holds": "Advanced intrahepatic cholangiocarcinoma after first-line gemcitabine-cisplatin, where an FGFR2 fusion makes an "
    "FGFR inhibitor the preferred second line.",
    "source": "NCCN Biliary Tract Cancers v.2026 (subsequent-line therapy); FIGHT-202 (Abou-Alfa, Lancet Oncol 2020).",
    "expected_change": "The FGFR inhibitor (futibatinib or pemigatinib) leaves the plan: second-line FOLFOX or a trial.",
    "rationale": "An FGFR2 fusion is the indication for futibatinib and pemigatinib after first line; without one, FOLFOX.",
}


def fill_todos(text: str) -> str:
    """What the clinician types in place of each <TODO ...> (the docs' step 2)."""
    def answer(match: re.Match) -> str:
        key = match.group(1)
        value = FILLED["holds"] if "setting" in match.group(2) else FILLED.get(key, FILLED["source"])
        return f"{match.group(1)}: {json.dumps(value)}"

    return re.sub(r"(\w+): '<TODO: ([^>]*)>'", answer, text)


def tumour_board(prompt: str) -> str:
    """The model under test: reads the FGFR2 result from the packet, then an FGFR inhibitor only for a detected fusion."""
    if "<packet>" in prompt:
        return "FGFR2=" + ("fusion" if re.search(r"FGFR2[-\w]* fusion detected", prompt) else "none")
    if "FGFR2=fusion" in prompt:
        return recommendations_json("futibatinib 20 mg daily")
    return recommendations_json("FOLFOX (modified) second line")


def judge(prompt: str) -> str:
    blocks = data_blocks(prompt)
    changed = blocks.get("BASELINE", "").strip() != blocks.get("COUNTERFACTUAL", "").strip()
    return json.dumps({"score": 1 if changed else 0, "rationale": "the FGFR inhibitor left the plan" if changed else "same"})


def test_a_new_cancer_type_goes_from_import_to_a_reviewed_scored_counterfactual_set(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cholangio.txt").write_text(PACKET)

    # 1. The template: written, and refused by every loader until its TODOs are filled.
    assert main(["catalog", "template", "--cancer-type", "cholangiocarcinoma", "--marker", "FGFR2",
                 "--agent", "futibatinib", "--agent", "pemigatinib", "--families", "A", "--out", "mine.yaml"]) == 0
    assert main(["catalog", "check", "mine.yaml"]) == 2
    assert "template placeholder" in capsys.readouterr().err
    (tmp_path / "mine.yaml").write_text(fill_todos((tmp_path / "mine.yaml").read_text()))
    assert main(["catalog", "check", "mine.yaml"]) == 1  # valid, scope audit passed, not locked yet
    assert main(["catalog", "lock", "mine.yaml"]) == 0
    assert main(["catalog", "check", "mine.yaml"]) == 0

    # 2. Import and answer: FGFR2 is asked (the board turns on it) with its quote and status, never a wrong pre-fill.
    assert main(["cases", "import", "cholangio.txt", "--out", "cases.jsonl", "--catalog", "mine.yaml"]) == 1
    printed = capsys.readouterr().out
    assert 'cancer_type = "cholangiocarcinoma"' in printed
    assert 'biomarkers.FGFR2 = "positive"' in printed and "(affirmed" in printed
    assert "resected = true" not in printed  # the 2014 cholecystectomy is not the cancer's resection
    answers = ["--set", "cholangio:age=59", "--set", "cholangio:prior_lines=1", "--set", "cholangio:resected=false",
               "--set", "cholangio:operation=none", "--set", "cholangio:consensus=FOLFOX second line", "--confirm", "cholangio"]
    assert main(["cases", "answer", "cases.questions.jsonl", "--out", "cases.jsonl", "--catalog", "mine.yaml", *answers]) == 0
    capsys.readouterr()

    # 3. Why it applies, then the drafts: complete only when someone says so.
    assert main(["catalog", "summary", "--cases", "cases.jsonl", "--catalog", "mine.yaml", "--why", "cholangio"]) == 0
    assert "U_fgfr2_positive_to_negative_cholangiocarcinoma" in capsys.readouterr().out
    assert main(["counterfactuals", "build", "--cases", "cases.jsonl", "--catalog", "mine.yaml", "--editor", "regex",
                 "--out", "cf"]) == 0
    (entry,) = load_counterfactuals(tmp_path / "cf" / "counterfactuals.jsonl")
    assert entry.draft and entry.verdict == "unchecked"
    text = "\n".join(entry.counterfactual_sections.values())
    assert "FGFR2 fusion not detected" in text and "futibatinib" not in text
    page = (tmp_path / "cf" / "review.html").read_text()
    assert "verdict unchecked" in page

    # 4. Unreviewed drafts are refused by the task; the reviewer's decision (bound to the text shown) lets them in.
    with pytest.raises(CatalogError, match="not approved|unreviewed"):
        css(cases="cases.jsonl", catalog="mine.yaml", counterfactuals="cf/counterfactuals.jsonl", controls="none", families="A")
    (tmp_path / "decisions.jsonl").write_text(json.dumps(
        {"tuple_id": entry.tuple_id, "decision": "approved", "content_sha256": entry.content_sha256, "reviewer": "Dr K"}) + "\n")
    assert main(["counterfactuals", "review", "cf/counterfactuals.jsonl", "--decisions", "decisions.jsonl"]) == 0

    # 5. Evaluate with mockllm roles: scored, with the user's expected change and the clinician's approval on the sample.
    model, judge_model = MockModel("mockllm/model", tumour_board), MockModel("mockllm/judge", judge)
    log = eval(
        css(cases="cases.jsonl", catalog="mine.yaml", counterfactuals="cf/counterfactuals.jsonl", controls="none", families="A"),
        model=model.model, model_roles={"judge": judge_model.model}, display="none", log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    assert sample.metadata["counterfactual_review"] == "approved"
    assert "clinician (Dr K)" in sample.metadata["counterfactual_verification"]
    assert sample.scores["judge_direction"].value == 1
    assert "futibatinib" in sample.scores["judge_direction"].explanation  # the baseline arm kept the FGFR inhibitor
