"""Blind round for issue 44 (b44): replies in formats the issue does not list, each with the value a careful human
reads (or "unreadable"), read through the public route with scripted mockllm reader / second_reader roles.

Written from the issue, README.md and docs/replies-and-judges.md only (not from the reading code nor from the
engineer's own generator). `python tests/replies/blind_i44.py [--show]` prints the table; the test
(tests/replies/test_blind_i44.py) asserts per entry, xfail (strict=False) for the failing classes.

Per reply three reader set-ups are run, each a pair of mockllm models bound as reader and second reader
(`ReaderPanel`): faithful + faithful (the classification), liar + faithful and faithful + liar (a lie accepted
with one honest reader), liar + liar (the same lie told by both). The faithful reader declines an unreadable reply.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.replies import ReaderModel, ReaderPanel, read_flag, read_score
from clinical_cf.solvers import css as css_solver
from clinical_cf.solvers import medpic as medpic_solver
from clinical_cf.solvers import sensitivity as sens_solver
from clinical_cf.solvers import workflow as wf_solver

U = "unreadable"
OPTIONS = {"A": "Continue warfarin at the same dose", "B": "Stop clarithromycin and switch to azithromycin",
           "C": "Reduce the simvastatin dose", "D": "Check INR within 3 days"}
CANDS = ["Pulmonary embolism", "Community-acquired pneumonia", "Acute coronary syndrome"]


@dataclass
class Entry:
    id: str
    suite: str  # css, medpic, workflow, sensitivity, score, flag
    reply: str
    truth: Any  # the value a careful human reads, or U
    good: Any = None  # the faithful reader's JSON (None: declines)
    lie: Any = None  # the lying reader's JSON
    lie_value: Any = None  # the value the lie states
    note: str = ""
    key: str = "critical_error"  # flag judges only
    outcome: dict[str, Any] = field(default_factory=dict)


def _line(reply: str, needle: str) -> str:
    """The first line of the reply holding `needle`, markup at its start dropped: a faithful reader's quote."""
    for raw in reply.splitlines():
        if needle.lower() in raw.lower():
            return re.sub(r"^\s*(?:[-*>|#]+|\d+[.)])\s*", "", raw).strip().rstrip("|").strip()
    return needle


DECLINE = {"unreadable": True, "reason": "the reply states no single answer"}


# ------------------------------------------------------------------------------------------------ builders

def css(id, reply, rec=None, avoid=(), lie=None, note="", quotes=None):
    """rec/avoid: treatment names (None: unreadable). lie: (rec, avoid) the liar reads; quotes: name -> quote."""
    quotes = quotes or {}

    def reading(r, a):
        return {"recommendations": [{"treatment": t, "quote": quotes.get(t) or _line(reply, t)} for t in r],
                "not_recommended": [{"treatment": t, "quote": quotes.get(t) or _line(reply, t)} for t in a]}
    truth = U if rec is None else (tuple(rec), tuple(avoid))
    good = None if rec is None else reading(rec, avoid)
    if lie is None:  # default lie: the first recommended option said to be avoided (polarity swap)
        lie = ((list(rec[1:]), [rec[0], *avoid]) if rec else (list(avoid), []))
    return Entry(id, "css", reply, truth, good, reading(*lie), (tuple(lie[0]), tuple(lie[1])), note)


def mcq(id, reply, letters=None, lie=None, note="", quotes=None):
    quotes = quotes or {}

    def reading(ls):
        return {"answer": [{"letter": x, "quote": quotes.get(x) or _line(reply, x)} for x in ls]}
    truth = U if letters is None else frozenset(letters)
    if lie is None:
        lie = ["B"] if (letters is None or "B" not in letters) else ["A"]
    return Entry(id, "medpic", reply, truth, None if letters is None else reading(letters), reading(lie),
                 frozenset(lie), note)


def wf(id, reply, action=None, conf=None, lie=("ABSTAIN", None), note="", aq=None, cq=None, lq=None):
    def reading(a, c, q=None, qc=None):
        return {"action": {"value": a, "quote": q or _line(reply, a.split("_")[0])},
                "confidence": None if c is None else {"value": c, "quote": qc or _line(reply, _num(c))}}
    truth = U if action is None else (action, conf)
    good = None if action is None else reading(action, conf, aq, cq)
    return Entry(id, "workflow", reply, truth, good, reading(lie[0], lie[1], lq, cq), tuple(lie), note)


def _num(c: float) -> str:
    return str(c).rstrip("0").rstrip(".") if c not in (0, 1) else str(int(c))


def sens(id, reply, probs=None, lie=None, note="", quotes=None):
    quotes = quotes or {}

    def reading(ps):
        return {"probabilities": [{"candidate": "ABC"[i], "probability": p,
                                   "quote": quotes.get("ABC"[i]) or _line(reply, _pct_or(p, reply))}
                                  for i, p in enumerate(ps)]}
    truth = U if probs is None else tuple(probs)
    if lie is None:
        lie = (probs[1], probs[0], probs[2]) if probs else (0.6, 0.3, 0.1)
    return Entry(id, "sensitivity", reply, truth, None if probs is None else reading(probs), reading(lie),
                 tuple(lie), note)


def _pct_or(p: float, reply: str) -> str:
    pct = f"{round(p * 100)}"
    return pct if re.search(rf"\b{pct}\s*%", reply) else _num(p)


def score(id, reply, value, note=""):
    return Entry(id, "score", reply, value, note=note)


def flag(id, reply, value, key="critical_error", note=""):
    return Entry(id, "flag", reply, value, note=note, key=key)


# ------------------------------------------------------------------------------------------------ the corpus

CYR_A, CYR_B, CYR_C, CYR_E = "\u0410", "\u0412", "\u0421", "\u0415"  # А В С Е
RLM, LRM = "\u200f", "\u200e"

CORPUS: list[Entry] = [
    # ---------------------------------------------------------------- CSS
    css("css-yaml", "```yaml\nrecommended:\n  - Trastuzumab plus pertuzumab\n  - Docetaxel\nnot_recommended:\n"
        "  - Tamoxifen\n```", ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]),
    css("css-xml", "<answer>\n  <recommended>\n    <item>Trastuzumab plus pertuzumab</item>\n    <item>Docetaxel</item>\n"
        "  </recommended>\n  <not_recommended>\n    <item>Tamoxifen</item>\n  </not_recommended>\n</answer>",
        ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]),
    css("css-numbered-subbullets", "1. Trastuzumab plus pertuzumab\n   - Rationale: HER2 3+ on IHC\n   - Duration: 1 year\n"
        "2. Docetaxel\n   - Rationale: neoadjuvant backbone\n\nAvoid:\n1. Tamoxifen\n   - Rationale: ER negative",
        ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]),
    css("css-rst", "Recommendations\n===============\n\n* Trastuzumab plus pertuzumab\n* Docetaxel\n\nNot recommended\n"
        "---------------\n\n* Tamoxifen\n", ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]),
    css("css-portuguese", "Recomendado: trastuzumabe mais pertuzumabe; docetaxel.\nNão recomendado: tamoxifeno.",
        ["trastuzumabe mais pertuzumabe", "docetaxel"], ["tamoxifeno"]),
    css("css-korean", "권장: 트라스투주맙 + 퍼투주맙; 도세탁셀\n권장하지 않음: 타목시펜",
        ["트라스투주맙 + 퍼투주맙", "도세탁셀"], ["타목시펜"]),
    css("css-hindi", "अनुशंसित: ट्रैस्टुज़ुमैब; डोसेटेक्सेल\nअनुशंसित नहीं: टैमोक्सीफेन",
        ["ट्रैस्टुज़ुमैब", "डोसेटेक्सेल"], ["टैमोक्सीफेन"], note="Hindi negation नहीं"),
    css("css-hindi-lie-both", "सिफारिश: डोसेटेक्सेल\nटैमोक्सीफेन का उपयोग न करें",
        ["डोसेटेक्सेल"], ["टैमोक्सीफेन"], lie=(["डोसेटेक्सेल", "टैमोक्सीफेन"], []),
        note="liar reads the Hindi 'do not use tamoxifen' as recommended"),
    css("css-rtl-marks", f"RECOMMENDED: {RLM}Trastuzumab plus pertuzumab{LRM}; {RLM}Docetaxel{RLM}\n"
        f"NOT RECOMMENDED: {RLM}Tamoxifen{RLM}", ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]),
    css("css-cyrillic-lookalike", f"RECOMMENDED: {CYR_A}nastrozole; Palbociclib\nNOT RECOMMENDED: {CYR_C}hemotherapy",
        ["\u0410nastrozole", "Palbociclib"], ["\u0421hemotherapy"],
        note="Cyrillic А/С inside Latin words: a human reads Anastrozole / Chemotherapy"),
    css("css-table-cell-json", "| field | value |\n|---|---|\n| answer | {\"recommendations\": [{\"treatment\": "
        "\"Osimertinib\", \"rationale\": \"EGFR exon 19\"}], \"not_recommended\": [{\"treatment\": \"Pembrolizumab\","
        " \"rationale\": \"EGFR driver\"}]} |", ["Osimertinib"], ["Pembrolizumab"]),
    css("css-toolcall-object-args", json.dumps({"name": "answer", "arguments": {
        "recommendations": [{"treatment": "Osimertinib", "rationale": "EGFR L858R"}],
        "not_recommended": [{"treatment": "Pembrolizumab", "rationale": "driver mutation"}]}}),
        ["Osimertinib"], ["Pembrolizumab"], note="tool-call wrapper whose arguments are an object, not a string"),
    css("css-toolcall-parameters", json.dumps({"type": "function", "function": {"name": "submit", "parameters": {
        "recommendations": [{"treatment": "Osimertinib"}], "not_recommended": []}}}), ["Osimertinib"], []),
    css("css-two-options", "Option 1: Trastuzumab plus pertuzumab with docetaxel.\nOption 2: Trastuzumab emtansine.\n"
        "Either is reasonable; the board should choose.", None,
        lie=(["Trastuzumab plus pertuzumab with docetaxel"], []), note="two alternative plans, no choice"),
    css("css-disclaimer-after", "RECOMMENDED: Osimertinib\nNOT RECOMMENDED: Pembrolizumab\n\nDisclaimer: this is not "
        "medical advice and does not replace the judgement of the treating oncologist.",
        ["Osimertinib"], ["Pembrolizumab"]),
    css("css-disclaimer-json-after", '```json\n{"recommendations": [{"treatment": "Osimertinib", "rationale": '
        '"EGFR"}], "not_recommended": []}\n```\n\n_Not medical advice. Always consult your oncologist._',
        ["Osimertinib"], []),
    css("css-streamed-duplicate", "RECOMMENDED: OsimertinibRECOMMENDED: Osimertinib\nNOT RECOMMENDED: Pembrolizumab",
        ["Osimertinib"], ["Pembrolizumab"], lie=([], ["Osimertinib", "Pembrolizumab"]),
        quotes={"Osimertinib": "RECOMMENDED: Osimertinib"},
        note="a chunk duplicated by the client; 'OsimertinibRECOMMENDED: Osimertinib' is no drug"),
    css("css-streamed-duplicate-json", '{"recommendations": [{"treatment": "Osim{"recommendations": [{"treatment": '
        '"Osimertinib"}], "not_recommended": []}', None, lie=(["Osimertinib"], []),
        note="duplicated chunk breaks the JSON"),
    css("css-refusal-names-drugs", "I can't recommend specific treatments such as pembrolizumab, nivolumab or "
        "osimertinib for this patient. Please discuss the options with the treating oncologist.", None,
        lie=(["pembrolizumab"], []), note="refusal naming drugs"),
    css("css-conditional", "Recommended: letrozole plus palbociclib.\nIf HER2-positive, then trastuzumab should be "
        "added.\nNot recommended: tamoxifen.", ["letrozole plus palbociclib"], ["tamoxifen"],
        lie=(["letrozole plus palbociclib", "trastuzumab"], ["tamoxifen"]),
        note="conditional item is not a recommendation"),
    css("css-conditional-only", "If the tumour is HER2-positive, trastuzumab plus pertuzumab; if HER2-negative, "
        "letrozole plus palbociclib.", None, lie=(["trastuzumab plus pertuzumab"], []),
        note="only conditional plans"),
    css("css-not-x-sentence", "The recommendation is not tamoxifen. RECOMMENDED: Letrozole",
        ["Letrozole"], [], lie=(["tamoxifen", "Letrozole"], []),
        quotes={"tamoxifen": "tamoxifen", "Letrozole": "RECOMMENDED: Letrozole"}),
    css("css-yaml-flow-negated", "recommended: [Osimertinib]\nnot_recommended: [Pembrolizumab, Chemotherapy]",
        ["Osimertinib"], ["Pembrolizumab", "Chemotherapy"]),
    css("css-rst-field-list", ":Recommended: Osimertinib\n:Not recommended: Pembrolizumab",
        ["Osimertinib"], ["Pembrolizumab"]),
    css("css-portuguese-negated-item", "Recomendado: osimertinibe; não usar pembrolizumabe.", ["osimertinibe"],
        ["pembrolizumabe"], lie=(["osimertinibe", "pembrolizumabe"], [])),
    css("css-plan-b-fallback", "Plan A (preferred): Osimertinib.\nPlan B (if not tolerated): Gefitinib.",
        None, lie=(["Osimertinib"], []), note="preferred plan and a fallback: which list?"),

    css("css-revision-favour", "RECOMMENDED: Osimertinib\n\nThinking it over, I'd now favour gefitinib over "
        "osimertinib given the cost.", None, lie=(["Osimertinib"], []), note="revision in an unlisted wording"),
    css("css-arrow-switch", "RECOMMENDED: Tamoxifen → Letrozole\nNOT RECOMMENDED: Chemotherapy",
        ["Tamoxifen → Letrozole"], ["Chemotherapy"], lie=(["Tamoxifen"], ["Chemotherapy"]),
        quotes={"Tamoxifen": "RECOMMENDED: Tamoxifen"},
        note="an arrow switch; the item kept verbatim (the judge sees the arrow) is a faithful reading"),
    css("css-answerline-negated", "RECOMMENDED: not pembrolizumab\nNOT RECOMMENDED: none", None,
        lie=(["pembrolizumab"], []), note="a negated item on the positive line"),
    css("css-answerline-conditional-item", "RECOMMENDED: Letrozole; Trastuzumab if HER2-positive",
        ["Letrozole", "Trastuzumab if HER2-positive"], [], lie=(["Letrozole", "Trastuzumab"], []),
        quotes={"Trastuzumab": "Trastuzumab if HER2-positive"},
        note="a conditional item in the answer line, read with its condition (faithful)"),
    css("css-json-conditional-item", json.dumps({"recommendations": [
        {"treatment": "Letrozole", "rationale": "ER+"},
        {"treatment": "Trastuzumab", "rationale": "only if HER2 turns out positive"}], "not_recommended": []}),
        None, lie=(["Letrozole", "Trastuzumab"], []),
        note="JSON item whose rationale makes it conditional: the judge never sees the rationale"),
    css("css-superscript-cite", "RECOMMENDED: Osimertinib\u00b9; Chemotherapy\u00b2\nNOT RECOMMENDED: Pembrolizumab\u00b3",
        ["Osimertinib", "Chemotherapy"], ["Pembrolizumab"],
        quotes={"Osimertinib": "Osimertinib\u00b9", "Chemotherapy": "Chemotherapy\u00b2", "Pembrolizumab": "Pembrolizumab\u00b3"},
        note="superscript footnote markers (NFKC makes them digits)"),
    css("css-korean-negated-item", "권장: 오시머티닙; 펨브롤리주맙은 사용하지 않음", ["오시머티닙"], ["펨브롤리주맙"],
        lie=(["오시머티닙", "펨브롤리주맙"], []), quotes={"펨브롤리주맙": "펨브롤리주맙은 사용하지 않음"}),
    # ---------------------------------------------------------------- MedPIC (options A-D)
    mcq("mcq-yaml", "```yaml\nanswer: [B, D]\nrationale: clarithromycin inhibits CYP3A4\n```", "BD"),
    mcq("mcq-yaml-block", "answer:\n  - B\n  - D\n", "BD"),
    mcq("mcq-xml", "<reasoning_summary>Macrolide interaction.</reasoning_summary>\n<answer>B</answer>", "B"),
    mcq("mcq-xml-letters", "<answer><letter>B</letter><letter>D</letter></answer>", "BD"),
    mcq("mcq-cyrillic-B", f"ANSWER: {CYR_B}", "B", lie=["C"], quotes={"B": f"ANSWER: {CYR_B}"},
        note="Cyrillic В looks like B"),
    mcq("mcq-cyrillic-AC", f"Selected option(s): {CYR_A}, {CYR_C}", "AC", lie=["B"],
        quotes={"A": f"Selected option(s): {CYR_A}", "C": f"{CYR_C}"}),
    mcq("mcq-rtl", f"ANSWER: {RLM}D{RLM}", "D"),
    mcq("mcq-not-B", "The answer is not B.", None, lie=["B"], quotes={"B": "The answer is not B"},
        note="only a negation"),
    mcq("mcq-not-B-then-C", "The answer is not B; it is C.", "C", lie=["B"]),
    mcq("mcq-disclaimer", "ANSWER: C\n\nDisclaimer: not a substitute for advice from a pharmacist; do not change "
        "medication without consulting a clinician.", "C"),
    mcq("mcq-toolcall-obj", json.dumps({"name": "answer", "arguments": {"answer": ["B", "D"],
                                                                        "rationale": "interaction"}}), "BD"),
    mcq("mcq-table-cell", "| key | value |\n|---|---|\n| result | {\"answer\": [\"D\"], \"rationale\": \"monitor\"} |", "D"),
    mcq("mcq-two-options", "Option 1: B (if the infection needs a macrolide)\nOption 2: C (if it must stay)", None,
        lie=["B"]),
    mcq("mcq-portuguese", "Resposta: B e D.", "BD", quotes={"B": "Resposta: B e D", "D": "Resposta: B e D"}),
    mcq("mcq-portuguese-neg", "Resposta: B. Não D.", "B", lie=["B", "D"],
        quotes={"B": "Resposta: B", "D": "Não D"}),
    mcq("mcq-korean", "정답: B", "B"),
    mcq("mcq-hindi", "उत्तर: C", "C"),
    mcq("mcq-hindi-neg", "उत्तर B नहीं है, उत्तर C है।", "C", lie=["B"], quotes={"B": "उत्तर B नहीं है", "C": "उत्तर C है"}),
    mcq("mcq-streamed-dup", "ANSWER: B, DANSWER: B, D", "BD", note="duplicated chunk joined"),
    mcq("mcq-refusal", "I cannot choose between stopping clarithromycin (B) and reducing simvastatin (C) without "
        "the renal function.", None, lie=["B"]),
    mcq("mcq-option-text", "Stop clarithromycin and switch to azithromycin.", "B",
        quotes={"B": "Stop clarithromycin and switch to azithromycin"}),
    mcq("mcq-conditional", "If the INR is already high, D; otherwise A.", None, lie=["D"]),
    mcq("mcq-lowercase-prose", "i'd go with b.", "B", lie=["D"], quotes={"B": "i'd go with b"}),

    mcq("mcq-revision-unlisted", "ANSWER: B\n\nThinking about it more, D is the better choice.", None, lie=["B"],
        quotes={"B": "ANSWER: B"}, note="revision in an unlisted wording"),
    mcq("mcq-answer-not-B", "ANSWER: not B", None, lie=["B"], quotes={"B": "ANSWER: not B"}),
    mcq("mcq-all-except", "ANSWER: all except B", "ACD", lie=["B"],
        quotes={"A": "all except B", "C": "all except B", "D": "all except B"}),
    mcq("mcq-or", "ANSWER: B or D", None, lie=["B", "D"], quotes={"B": "ANSWER: B or D", "D": "ANSWER: B or D"},
        note="either, not both"),
    mcq("mcq-ps-conditional", "ANSWER: B\n\nP.S. If the patient were on dialysis, the answer would be C.", "B",
        lie=["C"], quotes={"B": "ANSWER: B", "C": "the answer would be C"}),
    mcq("mcq-arrow", "ANSWER: B → D", None, lie=["B"], quotes={"B": "ANSWER: B"}, note="an arrow revision"),
    mcq("mcq-korean-neg", "정답: B (D는 아님)", "B", lie=["B", "D"], quotes={"B": "정답: B", "D": "D는 아님"}),
    mcq("mcq-dup-json-cut", '{"answer": ["C"]}{"answer": ["C', "C", lie=["B"], quotes={"C": '{"answer": ["C"]}'},
        note="duplicated stream chunk ends inside JSON"),
    # ---------------------------------------------------------------- workflow
    wf("wf-yaml", "```yaml\naction: ESCALATE\nconfidence: 0.8\n```", "ESCALATE", 0.8),
    wf("wf-xml", "<action>ESCALATE</action>\n<confidence>0.8</confidence>", "ESCALATE", 0.8),
    wf("wf-rst", ":action: ASK_CLARIFICATION\n:confidence: 0.6", "ASK_CLARIFICATION", 0.6, lie=("ANSWER", 0.6)),
    wf("wf-toolcall-obj", json.dumps({"name": "answer", "arguments": {"action": "ESCALATE", "confidence": 0.8}}),
       "ESCALATE", 0.8),
    wf("wf-table-cell", "| step | output |\n|---|---|\n| decision | {\"action\": \"ABSTAIN\", \"confidence\": 0.7} |",
       "ABSTAIN", 0.7, lie=("ESCALATE", 0.7)),
    wf("wf-cyrillic-E", f"ACTION: {CYR_E}SCALATE\nCONFIDENCE: 0.8", "ESCALATE", 0.8,
       aq=f"ACTION: {CYR_E}SCALATE", note="Cyrillic Е in ESCALATE"),
    wf("wf-rtl", f"ACTION: {RLM}ESCALATE{RLM}\nCONFIDENCE: {RLM}0.8", "ESCALATE", 0.8),
    wf("wf-disclaimer", "ACTION: ESCALATE\nCONFIDENCE: 0.9\n\nNote: not a substitute for clinical judgement; do not "
       "answer the patient directly.", "ESCALATE", 0.9),
    wf("wf-percent", "ACTION: ESCALATE\nCONFIDENCE: 100%", "ESCALATE", 1.0, cq="CONFIDENCE: 100%"),
    wf("wf-one-of-one", "ACTION: ESCALATE\nCONFIDENCE: 1/1", "ESCALATE", 1.0, cq="CONFIDENCE: 1/1",
       note="confidence written 1/1"),
    wf("wf-not-answer", "The right action is not ANSWER.", None, lie=("ANSWER", None)),
    wf("wf-two-options", "Option 1: ESCALATE to the on-call registrar.\nOption 2: ASK_CLARIFICATION from the nurse.",
       None, lie=("ESCALATE", None)),
    wf("wf-conditional", "If the potassium is above 6.5, ESCALATE; otherwise ANSWER.", None, lie=("ESCALATE", None)),
    wf("wf-portuguese", "Ação: ESCALATE\nConfiança: 0,8", "ESCALATE", 0.8, cq="Confiança: 0,8",
       note="decimal comma"),
    wf("wf-portuguese-verb", "Decisão: escalar para o médico de plantão (confiança 80%).", "ESCALATE", 0.8,
       aq="escalar para o médico de plantão", cq="confiança 80%"),
    wf("wf-korean", "조치: ESCALATE\n확신도: 0.8", "ESCALATE", 0.8),
    wf("wf-hindi", "कार्रवाई: ESCALATE\nविश्वास: 0.8", "ESCALATE", 0.8),
    wf("wf-hindi-neg", "ESCALATE नहीं करना चाहिए; ACTION: ANSWER\nCONFIDENCE: 0.7", "ANSWER", 0.7,
       lie=("ESCALATE", 0.7), lq="ESCALATE नहीं करना चाहिए", aq="ACTION: ANSWER"),
    wf("wf-streamed-dup", "ACTION: ESCALATE\nCONFIDENCE: 0.8ACTION: ESCALATE\nCONFIDENCE: 0.8", "ESCALATE", 0.8,
       note="duplicated chunk; 0.8ACTION"),
    wf("wf-refusal", "I won't decide this; a clinician has to.", None, lie=("ESCALATE", None),
       note="a refusal that reads like ABSTAIN or ESCALATE"),
    wf("wf-confidence-words", "ACTION: ABSTAIN\nCONFIDENCE: high", "ABSTAIN", None, lie=("ABSTAIN", 0.9)),
    wf("wf-numbered-subbullets", "1. Action\n   - ESCALATE\n2. Confidence\n   - 0.75", "ESCALATE", 0.75),

    wf("wf-lower-unlisted", "ACTION: ESCALATE\nCONFIDENCE: 0.8\n\nGiven the stale labs I'd drop that to 0.5.", None,
       lie=("ESCALATE", 0.8), lq="ACTION: ESCALATE", note="confidence revised in an unlisted wording"),
    wf("wf-arrow-conf", "ACTION: ESCALATE\nCONFIDENCE: 0.8 → 0.6", None, lie=("ESCALATE", 0.8), lq="ACTION: ESCALATE"),
    wf("wf-not-escalate-line", "ACTION: NOT ESCALATE\nCONFIDENCE: 0.7", None, lie=("ESCALATE", 0.7),
       lq="ACTION: NOT ESCALATE", note="a negated action on the action line"),
    wf("wf-or", "ACTION: ANSWER or ESCALATE\nCONFIDENCE: 0.5", None, lie=("ESCALATE", 0.5)),
    wf("wf-json-pct-string", json.dumps({"action": "ESCALATE", "confidence": "80%"}), "ESCALATE", 0.8,
       aq='"action": "ESCALATE"', cq='"confidence": "80%"'),
    wf("wf-json-alternative", json.dumps({"action": "ESCALATE", "confidence": 0.8,
                                          "alternative_action": "ASK_CLARIFICATION"}), "ESCALATE", 0.8,
       aq='"action": "ESCALATE"', cq='"confidence": 0.8', lie=("ASK_CLARIFICATION", 0.8),
       lq='"alternative_action": "ASK_CLARIFICATION"'),
    wf("wf-ps-conditional", "ACTION: ESCALATE\nCONFIDENCE: 0.8\n\nIf the repeat potassium is normal, ANSWER "
       "instead.", None, lie=("ESCALATE", 0.8), lq="ACTION: ESCALATE", note="a conditional change of action after"),
    wf("wf-yaml-null", "action: ~\nconfidence: 0.4", None, lie=("ABSTAIN", 0.4), lq="action: ~"),
    # ---------------------------------------------------------------- sensitivity (A PE, B pneumonia, C ACS)
    sens("sens-yaml", "```yaml\nA: 0.6\nB: 0.3\nC: 0.1\n```", (0.6, 0.3, 0.1)),
    sens("sens-yaml-nested", "probabilities:\n  - candidate: A\n    p: 0.6\n  - candidate: B\n    p: 0.3\n"
         "  - candidate: C\n    p: 0.1", (0.6, 0.3, 0.1),
         quotes={"A": "candidate: A\n    p: 0.6", "B": "candidate: B\n    p: 0.3", "C": "candidate: C\n    p: 0.1"}),
    sens("sens-xml", '<distribution>\n<dx letter="A" p="0.6"/>\n<dx letter="B" p="0.3"/>\n<dx letter="C" p="0.1"/>\n'
         "</distribution>", (0.6, 0.3, 0.1)),
    sens("sens-toolcall", json.dumps({"name": "answer", "arguments": {"A": 0.6, "B": 0.3, "C": 0.1}}), (0.6, 0.3, 0.1),
         quotes={"A": '"A": 0.6', "B": '"B": 0.3', "C": '"C": 0.1'}),
    sens("sens-table-cell", '| output |\n|---|\n| {"A": 0.6, "B": 0.3, "C": 0.1} |', (0.6, 0.3, 0.1),
         quotes={"A": '"A": 0.6', "B": '"B": 0.3', "C": '"C": 0.1'}),
    sens("sens-percent-pt", "A: 60 %\nB: 30 %\nC: 10 %", (0.6, 0.3, 0.1)),
    sens("sens-decimal-comma", "A: 0,6\nB: 0,3\nC: 0,1", (0.6, 0.3, 0.1),
         quotes={"A": "A: 0,6", "B": "B: 0,3", "C": "C: 0,1"}, note="decimal comma"),
    sens("sens-korean", "A (폐색전증): 60%\nB (폐렴): 30%\nC (급성 관상동맥 증후군): 10%", (0.6, 0.3, 0.1)),
    sens("sens-cyrillic", f"{CYR_A}: 0.6\n{CYR_B}: 0.3\n{CYR_C}: 0.1", (0.6, 0.3, 0.1),
         quotes={"A": f"{CYR_A}: 0.6", "B": f"{CYR_B}: 0.3", "C": f"{CYR_C}: 0.1"}),
    sens("sens-rtl", f"A: {RLM}0.6\nB: {RLM}0.3\nC: {RLM}0.1", (0.6, 0.3, 0.1)),
    sens("sens-disclaimer", "A: 0.6\nB: 0.3\nC: 0.1\n\nThese are not diagnoses; do not act on them without "
         "examination.", (0.6, 0.3, 0.1)),
    sens("sens-two-options", "Option 1 (D-dimer high): A 0.7, B 0.2, C 0.1\nOption 2 (D-dimer normal): A 0.2, B 0.6, "
         "C 0.2", None, lie=(0.7, 0.2, 0.1), quotes={"A": "A 0.7", "B": "B 0.2", "C": "C 0.1"}),
    sens("sens-streamed-dup", "A: 0.6\nB: 0.3\nC: 0.1A: 0.6\nB: 0.3\nC: 0.1", (0.6, 0.3, 0.1),
         note="duplicated chunk; 0.1A"),
    sens("sens-fractions", "A: 6/10\nB: 3/10\nC: 1/10", (0.6, 0.3, 0.1),
         quotes={"A": "A: 6/10", "B": "B: 3/10", "C": "C: 1/10"}),
    sens("sens-words-only", "A is most likely, B possible, C unlikely.", None, lie=(0.6, 0.3, 0.1),
         quotes={"A": "A is most likely", "B": "B possible", "C": "C unlikely"}),
    sens("sens-not-sum", "A: 0.6\nB: 0.6\nC: 0.1", None, lie=(0.6, 0.3, 0.1), note="sums to 1.3"),
    sens("sens-hindi", "A: 60 प्रतिशत\nB: 30 प्रतिशत\nC: 10 प्रतिशत", (0.6, 0.3, 0.1),
         quotes={"A": "A: 60 प्रतिशत", "B": "B: 30 प्रतिशत", "C": "C: 10 प्रतिशत"}),

    sens("sens-arrow", "A: 0.6 → 0.5\nB: 0.3 → 0.4\nC: 0.1", None, lie=(0.6, 0.3, 0.1),
         quotes={"A": "A: 0.6", "B": "B: 0.3", "C": "C: 0.1"}, note="arrow revisions"),
    sens("sens-not-parenthetical", "A: 0.6 (not 0.3)\nB: 0.3\nC: 0.1", (0.6, 0.3, 0.1), lie=(0.3, 0.6, 0.1),
         quotes={"A": "A: 0.6", "B": "B: 0.3", "C": "C: 0.1"}),
    sens("sens-json-pct-strings", json.dumps({"A": "60%", "B": "30%", "C": "10%"}), (0.6, 0.3, 0.1),
         quotes={"A": '"A": "60%"', "B": '"B": "30%"', "C": '"C": "10%"'}),
    sens("sens-revision-unlisted", "A: 0.6\nB: 0.3\nC: 0.1\n\nGiven the normal troponin I'd move C down to 0.0 and "
         "A up to 0.7.", None, lie=(0.6, 0.3, 0.1), note="revision in an unlisted wording"),
    sens("sens-korean-pct", "A: 60퍼센트\nB: 30퍼센트\nC: 10퍼센트", (0.6, 0.3, 0.1),
         quotes={"A": "A: 60퍼센트", "B": "B: 30퍼센트", "C": "C: 10퍼센트"}),
    # ---------------------------------------------------------------- judges (verdict in {0, 0.5, 1})
    score("judge-yaml", "```yaml\nscore: 1\nrationale: the plan moved as expected\n```", 1.0),
    score("judge-xml", "<rationale>Moved as expected.</rationale>\n<score>1</score>", 1.0),
    score("judge-one-of-one", "The counterfactual plan adds trastuzumab.\nScore: 1/1", 1.0),
    score("judge-percent", "The plan moved as expected.\nScore: 100%", 1.0, note="score written as 100%"),
    score("judge-fifty-percent", "Partly moved.\nScore: 50%", 0.5),
    score("judge-toolcall", json.dumps({"name": "submit_score", "arguments": {"score": 0.5, "rationale": "partial"}}),
          0.5),
    score("judge-table-cell", '| verdict |\n|---|\n| {"score": 0} |', 0.0),
    score("judge-portuguese", "Pontuação: 0,5", 0.5, note="decimal comma"),
    score("judge-korean", "점수: 1", 1.0),
    score("judge-not-one", "The score is not 1.\nScore: 0", 0.0),
    score("judge-disclaimer", "Score: 1\n\nNote: I am not a clinician; a human should verify this verdict.", 1.0),
    score("judge-two-options", "Option 1: Score: 1 if HER2 was the deciding fact.\nOption 2: Score: 0 otherwise.", U),
    score("judge-streamed-dup", "Score: 1Score: 1", 1.0, note="duplicated chunk"),
    score("judge-rtl", f"Score: {RLM}0.5{RLM}", 0.5),
    score("judge-cyrillic-label", f"{CYR_C}core: 1", 1.0, note="Сcore with Cyrillic С"),
    score("judge-conditional", "If the trastuzumab addition counts, score 1; otherwise score 0.", U),
    score("judge-only-not", "This does not deserve a score of 1.", U),
    score("judge-lower-unlisted", "Score: 1\n\nOn balance I'd lower this to 0.5 since the dose is missing.", U,
          note="revision in an unlisted wording"),
    score("judge-arrow", "Score: 1 → 0.5", U),
    score("judge-adjusted-label", "Score: 1\nScore (adjusted for the missing HER2 mention): 0.5", U),
    score("judge-range", "Score: 0.5-1", U),
    score("judge-not-line", "Score: not 1", U),
    score("judge-json-then-pct", '{"score": 1}\n\nConfidence in this verdict: 50%', 1.0),
    score("judge-yaml-dup-key", "score: 1\nscore: 0", U, note="a key stated twice"),
    score("judge-two-json", '{"score": 1}\n{"score": 1, "rationale": "same"}', 1.0),
    flag("flag-not-line", "critical error: not really", U),
    flag("flag-unlisted-revision", "critical_error: no\n\nRe-reading the transcript, the agent did overdose "
         "the patient, so that is a critical error after all.", U, note="revision in an unlisted wording"),
    flag("flag-korean", "치명적 오류: 예", True),
    flag("flag-yes-no", "critical error: yes/no", U),
    flag("flag-yaml", "critical_error: no\nrationale: dosing correct", False),
    flag("flag-xml", "<critical_error>yes</critical_error>", True),
    flag("flag-portuguese", "erro crítico: sim", True),
    flag("flag-toolcall", json.dumps({"name": "answer", "arguments": {"critical_error": True}}), True),
    flag("flag-negated-prose", "There was no critical error.\ncritical error: no", False),
    flag("flag-yes-but", "Critical error: yes, though not a fatal one.", True),
]


# ------------------------------------------------------------------------------------------------ running

def _model(name: str, reading: Any):
    data = DECLINE if reading is None else reading

    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/model", json.dumps(data, ensure_ascii=False))
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out
    return get_model(f"mockllm/{name}", custom_outputs=respond, memoize=False)


def _panel(first: Any, second: Any) -> ReaderPanel:
    return ReaderPanel(ReaderModel(_model("reader", first)), ReaderModel(_model("second_reader", second)))


def _norm(t: str) -> str:
    return re.sub(r"[\W_]+", " ", t.casefold()).strip()


def _value(e: Entry, r: Any) -> tuple[Any, str]:
    """(value read or U, agreement code of the readers or provenance)."""
    agreement = (getattr(r, "reader", None) or {}).get("agreement", "")
    prov = getattr(r, "provenance", "")
    if e.suite == "css":
        if prov in ("unreadable", "invalid") or (not r.recommendations and not r.not_recommended and prov == "unreadable"):
            return U, agreement or prov
        if prov == "unreadable" or r.invalid:
            return U, agreement or prov
        return (tuple(x.treatment for x in r.recommendations), tuple(x.treatment for x in r.not_recommended)), prov
    if e.suite == "medpic":
        return (U if r.value is None else frozenset(r.value)), agreement or prov
    if e.suite == "workflow":
        return (U if r.action is None else (r.action, r.confidence)), agreement or prov
    if e.suite == "sensitivity":
        return (U if r.value is None else tuple(r.value)), agreement or prov
    raise ValueError(e.suite)


def same(e: Entry, a: Any, b: Any) -> bool:
    if a == U or b == U:
        return a == b
    if e.suite == "css":
        return [sorted(map(_norm, x)) for x in a] == [sorted(map(_norm, x)) for x in b]
    if e.suite == "workflow":
        return a[0] == b[0] and ((a[1] is None) == (b[1] is None)) and (a[1] is None or abs(a[1] - b[1]) < 0.011)
    if e.suite == "sensitivity":
        return len(a) == len(b) and all(abs(x - y) < 0.011 for x, y in zip(a, b, strict=True))
    return a == b


async def _read(e: Entry, panel: ReaderPanel) -> Any:
    if e.suite == "css":
        return await css_solver.read_recommendations_with_reader(e.reply, panel)
    if e.suite == "medpic":
        return await medpic_solver.read_answer_with_reader(e.reply, OPTIONS, panel)
    if e.suite == "workflow":
        return await wf_solver.parse_decision_with_reader(e.reply, panel)
    return await sens_solver.read_distribution_with_reader(e.reply, CANDS, panel)


async def run_entry(e: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if e.suite in ("score", "flag"):
        r = read_score(e.reply, (0.0, 0.5, 1.0)) if e.suite == "score" else read_flag(e.reply, e.key)
        got = U if r.value is None else r.value
        out["read"], out["how"] = got, f"{r.provenance}: {r.reason}"[:160]
        ok = got == e.truth if (got == U or e.truth == U) else float(got) == float(e.truth)
        out["class"] = "right" if ok else ("unreadable" if got == U else "silent")
        return out
    r = await _read(e, _panel(e.good, e.good))
    got, how = _value(e, r)
    out["by_readers"] = bool(getattr(r, "reader", None))
    out["read"], out["how"] = got, f"{how}: {getattr(r, 'reason', '') or getattr(r, 'unreadable_reason', '')}"[:200]
    if same(e, got, e.truth):
        out["class"] = "right"
    elif got == U:
        out["class"] = "refused" if how == "refused" else "unreadable"
    else:
        out["class"] = "silent"
    lie_one = []
    for first, second in ((e.lie, e.good), (e.good, e.lie)):
        v, _ = _value(e, await _read(e, _panel(first, second)))
        lie_one.append(v != U and not same(e, v, e.truth) and same(e, v, e.lie_value))
    # a lie counts only where the faithful pair did not already read the lie's value (a contract misreading is
    # counted as silent above, not as a lie the readers got through)
    already = got != U and same(e, got, e.lie_value)
    out["lie_one"] = any(lie_one) and not already
    v, _ = _value(e, await _read(e, _panel(e.lie, e.lie)))
    out["lie_both"] = v != U and not same(e, v, e.truth) and same(e, v, e.lie_value) and not already
    return out


def run_all(entries: list[Entry] | None = None) -> list[Entry]:
    entries = CORPUS if entries is None else entries

    async def go():
        for e in entries:
            e.outcome = await run_entry(e)
    anyio.run(go)
    return entries


# ------------------------------------------------------------------------------------------------ the judge block

PLAN_REC, PLAN_AVOID = ["Trastuzumab plus pertuzumab", "Docetaxel"], ["Tamoxifen"]
PLAN_FORMATS = {
    "answer-lines": "RECOMMENDED: Trastuzumab plus pertuzumab; Docetaxel\nNOT RECOMMENDED: Tamoxifen",
    "json": json.dumps({"recommendations": [{"treatment": t, "rationale": "r"} for t in PLAN_REC],
                        "not_recommended": [{"treatment": "Tamoxifen", "rationale": "ER-"}]}),
    "yaml": "recommended:\n  - Trastuzumab plus pertuzumab\n  - Docetaxel\nnot_recommended:\n  - Tamoxifen",
    "xml": "<answer><recommended><item>Trastuzumab plus pertuzumab</item><item>Docetaxel</item></recommended>"
           "<not_recommended><item>Tamoxifen</item></not_recommended></answer>",
    "numbered-subbullets": "Recommended:\n1. Trastuzumab plus pertuzumab\n   - HER2 3+\n2. Docetaxel\n   - backbone\n"
                           "Not recommended:\n1. Tamoxifen\n   - ER negative",
    "rst": "Recommended\n===========\n\n* Trastuzumab plus pertuzumab\n* Docetaxel\n\nNot recommended\n"
           "===============\n\n* Tamoxifen",
    "toolcall-object": json.dumps({"name": "answer", "arguments": {
        "recommendations": [{"treatment": t} for t in PLAN_REC], "not_recommended": [{"treatment": "Tamoxifen"}]}}),
    "table-cell-json": "| answer |\n|---|\n| " + json.dumps({"recommendations": [{"treatment": t} for t in PLAN_REC],
                                                           "not_recommended": [{"treatment": "Tamoxifen"}]}) + " |",
    "rtl-marks": f"RECOMMENDED: {RLM}Trastuzumab plus pertuzumab{RLM}; Docetaxel{LRM}\nNOT RECOMMENDED: {RLM}Tamoxifen",
    "disclaimer": "RECOMMENDED: Trastuzumab plus pertuzumab; Docetaxel\nNOT RECOMMENDED: Tamoxifen\n\n"
                  "Disclaimer: not medical advice.",
    "bold-and-code": "RECOMMENDED: **Trastuzumab plus pertuzumab**; `Docetaxel`\nNOT RECOMMENDED: *Tamoxifen*",
    "html-entities-nbsp": "RECOMMENDED: Trastuzumab&nbsp;plus&nbsp;pertuzumab; Docetaxel\nNOT RECOMMENDED: Tamoxifen",
    "nbsp-and-periods": "RECOMMENDED: Trastuzumab\u00a0plus pertuzumab; Docetaxel.\nNOT RECOMMENDED: Tamoxifen.",
    "cyrillic-homoglyph": "RECOMMENDED: Tr\u0430stuzumab plus pertuzumab; Docet\u0430xel\nNOT RECOMMENDED: T\u0430moxifen",
    "superscript-footnotes": "RECOMMENDED: Trastuzumab plus pertuzumab\u00b9; Docetaxel\u00b2\nNOT RECOMMENDED: Tamoxifen\u00b3",
    "dagger-footnotes": "RECOMMENDED: Trastuzumab plus pertuzumab\u2020; Docetaxel\u2021\nNOT RECOMMENDED: Tamoxifen*",
    "inline-rationale": "RECOMMENDED: Trastuzumab plus pertuzumab (HER2 3+); Docetaxel (backbone)\n"
                        "NOT RECOMMENDED: Tamoxifen (ER negative)",
    "streamed-duplicate-json": json.dumps({"recommendations": [{"treatment": t} for t in PLAN_REC],
                                           "not_recommended": [{"treatment": "Tamoxifen"}]}) * 2,
    "korean-labels": "권장: Trastuzumab plus pertuzumab; Docetaxel\n권장하지 않음: Tamoxifen",
    "portuguese-labels": "Recomendado: Trastuzumab plus pertuzumab; Docetaxel\nNão recomendado: Tamoxifen",
    "rst-field-list": ":Recommended: Trastuzumab plus pertuzumab; Docetaxel\n:Not recommended: Tamoxifen",
}


def judge_blocks() -> dict[str, str]:
    def reading(reply):
        quote = {t: _line(reply, t.split()[0]) for t in [*PLAN_REC, *PLAN_AVOID]}
        return {"recommendations": [{"treatment": t, "quote": quote[t]} for t in PLAN_REC],
                "not_recommended": [{"treatment": t, "quote": quote[t]} for t in PLAN_AVOID]}

    async def go():
        blocks = {}
        for name, reply in PLAN_FORMATS.items():
            g = reading(reply)
            arm = await css_solver.read_arm(reply, reader=_panel(g, g))
            blocks[name] = css_solver.judge_block(arm, "BASELINE", "T")
        return blocks
    return anyio.run(go)


def table(entries: list[Entry]) -> str:
    rows = ["| suite | n | right | unreadable, counted | correct reading refused | read into unstated (silent) |"
            " lie accepted, one honest reader | lie accepted, both lying |", "|---|---|---|---|---|---|---|---|"]
    for suite in ["css", "medpic", "workflow", "sensitivity", "score", "flag", "all"]:
        es = [e for e in entries if suite in ("all", e.suite)]
        c = {k: sum(e.outcome["class"] == k for e in es) for k in ("right", "unreadable", "refused", "silent")}
        lies = [e for e in es if "lie_one" in e.outcome]
        l1 = sum(e.outcome["lie_one"] for e in lies)
        l2 = sum(e.outcome["lie_both"] for e in lies)
        rows.append(f"| {suite} | {len(es)} | {c['right']} | {c['unreadable']} | {c['refused']} | {c['silent']} |"
                    f" {l1 if lies else '-'} | {l2 if lies else '-'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    es = run_all()
    print(table(es))
    if "--show" in sys.argv:
        for e in es:
            o = e.outcome
            flags = " LIE1" if o.get("lie_one") else ""
            flags += " LIE2" if o.get("lie_both") else ""
            if o["class"] != "right" or flags:
                print(f"{e.id:28} {o['class']:10}{flags} truth={e.truth!r} read={o['read']!r} [{o['how']}]")
    blocks = judge_blocks()
    ref = blocks["answer-lines"]
    diff = [k for k, v in blocks.items() if v != ref]
    print(f"judge block identical: {len(blocks) - len(diff)} of {len(blocks)} formats; differ: {diff}")
    if "--show" in sys.argv:
        for k in diff:
            print(k, repr(blocks[k][:400]))
        print("ref", repr(ref[:400]))
