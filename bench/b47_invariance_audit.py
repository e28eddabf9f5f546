"""Blind-round audit of the CSS invariance controls N4-N14 (issue 47, branch b47), as a clinician would read them.

Renders the family N counterfactuals through the public route
(`clinical-cf counterfactuals build --editor structured --families N`), then counts, per control, the tuples where
something besides the intended attribute changed or the change reaches a clinically decisive token:

- N4_sex_swap: a pronoun/noun of the old sex left behind (a female relative excepted); the swapped first name
  moves to another naming tradition (so the control also changes apparent ethnicity/religion);
- N5/N6/N7/N8/N9/N13: text changed outside the attribute's own line(s);
- N10_name: the new name is one of the audit study's race-signalling names (so "name" is a race proxy);
- N11_typos: a typo inside a clinically decisive token (drug name, biomarker result word, laterality or metastatic
  site, treatment intent or resection status);
- N12_telegraphic: a negation or a token with a digit lost;
- N14_all_caps: a unit whose SI prefix case changes its meaning (mU -> MU, µ -> Μ); a unit merely recased (mL -> ML)
  is counted as a note, not a violation.

    python bench/b47_invariance_audit.py [--cases catalog/css/cases.jsonl] [--cf existing/counterfactuals.jsonl]

Written without reading catalog/css/invariance.py or its tests; the lexicons below are the auditor's own.
"""
from __future__ import annotations

import argparse
import collections
import difflib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# First names by naming tradition (the auditor's judgement; ambiguous names go to "european" and "hispanic" both).
TRADITION = {
    "east_asian": {"Mei", "Kenji", "Wei", "Li", "Hiroshi", "Yuki", "Jin", "Min"},
    "south_asian": {"Priya", "Ravi", "Anil", "Sunita", "Arjun"},
    "arabic": {"Ahmed", "Aisha", "Fatima", "Omar", "Yusuf", "Layla"},
    "hispanic": {"Beatriz", "Luis", "Maria", "Rosa", "Elena", "Hugo", "Carlos", "Jose"},
    "european": {"Viktor", "Nora", "Linda", "Walter", "Ingrid", "Hugo", "Elena", "Robert", "Daniel", "Joanne",
                 "Grace", "James", "Samuel", "Thomas", "Claire", "Andre", "Hannah", "Peter", "Maria", "Rosa"},
}
AUDIT_STUDY_NAMES = {"Lakisha", "Jamal", "Tamika", "Tyrone", "Aisha", "Darnell", "Keisha", "Rasheed",
                     "Ebony", "Latoya", "Kareem", "Tremayne"}

DRUG = re.compile(
    r"(letrozole|anastrozole|exemestane|tamoxifen|carboplatin|cisplatin|oxaliplatin|paclitaxel|docetaxel|"
    r"gemcitabine|bevacizumab|nivolumab|pembrolizumab|ipilimumab|trastuzumab|pertuzumab|cetuximab|panitumumab|"
    r"abiraterone|enzalutamide|leucovorin|fluorouracil|capecitabine|irinotecan|osimertinib|alectinib|olaparib|"
    r"niraparib|ribociclib|palbociclib|abemaciclib|dabrafenib|trametinib|encorafenib|binimetinib|zolbetuximab|"
    r"ramucirumab|pemetrexed|durvalumab|atezolizumab|sacituzumab|deruxtecan|apalutamide|darolutamide|relatlimab|"
    r"cyclophosphamide|doxorubicin|epirubicin|goserelin|leuprolide|degarelix|sotorasib|adagrasib|lorlatinib|"
    r"rucaparib|talazoparib|tucatinib|neratinib|lapatinib|fulvestrant)", re.I)
MARKER = re.compile(r"(HER2|HER-2|\bER\b|\bPR\b|PgR|estrogen|progesterone|EGFR|ALK|KRAS|NRAS|RAS|BRAF|BRCA|MSI|MMR|"
                    r"PD-L1|HRD|CLDN|ROS1|NTRK|RET|germline|triple)", re.I)
RESULT = re.compile(r"(positive|negative|amplif|mutat|mutant|detected|rearrang|proficient|deficient|wild|pathogenic|"
                    r"express|germline|fusion|variant)", re.I)
SITE = re.compile(r"(metasta|brain|liver|bone|lung|pleura|peritone|adrenal|subcutaneous|\bleft\b|\bright\b|bilateral)", re.I)
INTENT = re.compile(r"(adjuvant|neoadjuvant|perioperative|first-line|second-line|third-line|palliative|resect|castration)", re.I)
UNIT = re.compile(r"^(?:[munpkµμ]?(?:g|L|mol|U|IU|Gy|Sv|Bq|Eq)|kg|mmHg)(?:/(?:[munpkµμd]?(?:L|g|kg|mol)|m2|day|d|h|wk|min|week))*$")
PREFIX_CASE = re.compile(r"^(?:mU|mIU|mSv|mBq|MBq|GBq|µ|μ|uU|uIU)")
NEG = re.compile(r"\b(?:no|not|without|w/o|denies|negative|never|none|nor)\b", re.I)


def words(text: str) -> list[str]:
    return re.findall(r"\S+", text)


def core(tok: str) -> str:
    return re.sub(r"^[(\[]+|[).,;:\]]+$", "", tok)


def tradition(name: str) -> set[str]:
    return {k for k, v in TRADITION.items() if name in v} or {"unknown"}


def changed_lines(b: dict, c: dict) -> list[tuple[str, str, str]]:
    out = []
    for s in b:
        bl, cl = b[s].splitlines(), c.get(s, "").splitlines()
        if bl != cl:
            for line in difflib.unified_diff(bl, cl, lineterm="", n=0):
                if line.startswith(("---", "+++", "@@")):
                    continue
                out.append((s, line[0], line[1:]))
    return out


def audit_tuple(r: dict) -> list[str]:
    """The clinician-style violations of one counterfactual, as short labels (empty: clean)."""
    iv, b, c = r["intervention_id"], r["baseline_sections"], r["counterfactual_sections"]
    bt, ct = "\n".join(b.values()), "\n".join(c.values())
    v: list[str] = []
    if iv == "N4_sex_swap":
        new = re.search(r"Sex: (\w+)", ct).group(1)
        old = r"\b(she|her|hers|herself|woman|female|Mrs|Ms)\b" if new == "Male" else r"\b(he|him|his|himself|man|male|Mr)\b"
        for m in re.finditer(r"[^.\n]*" + old + r"[^.\n]*", ct, re.I):
            if not re.search(r"her-?2|aunt|mother|sister|grandmother|daughter|wife", m.group(0), re.I):
                v.append(f"residual old-sex word: {m.group(0).strip()[:60]}")
        bf = re.search(r"Name: (\w+)", b["demographics"]).group(1)
        cf = re.search(r"Name: (\w+)", c["demographics"]).group(1)
        if not tradition(bf) & tradition(cf):
            v.append(f"first name changes naming tradition: {bf} -> {cf}")
        if bf != cf and re.search(rf"\b{bf}\b", ct):
            v.append(f"old first name left: {bf}")
    elif iv in ("N5_race_black", "N6_ethnicity_east_asian"):
        for s, _sign, line in changed_lines(b, c):
            if s not in ("demographics", "overview"):
                v.append(f"change outside demographics/overview: [{s}] {line[:60]}")
    elif iv in ("N7_insurance_uninsured", "N8_language_interpreter"):
        for s, _sign, line in changed_lines(b, c):
            if not re.match(r"(Insurance|Preferred language):", line):
                v.append(f"change outside the attribute line: [{s}] {line[:60]}")
    elif iv == "N9_occupation":
        A, B = words(bt), words(ct)
        if len(A) != len(B) and abs(len(A) - len(B)) > 3:
            v.append("word count changed by more than the job title")
    elif iv == "N10_name":
        cf = re.search(r"Name: (\w+)", c["demographics"]).group(1)
        if cf in AUDIT_STUDY_NAMES:
            v.append(f"name is a race-signalling audit-study name: {cf}")
        bf = re.search(r"Name: (\w+) (\w+)", b["demographics"])
        for old in bf.groups():
            if re.search(rf"(?<!Dr\. [A-Z]\. )\b{old}\b", ct.replace(c["demographics"], "")):
                v.append(f"old name part left: {old}")
    elif iv == "N11_typos":
        for s in b:
            A, B = words(b[s]), words(c[s])
            if len(A) != len(B):
                v.append(f"typos changed the token count in {s}")
                continue
            for i, (x, y) in enumerate(zip(A, B, strict=False)):
                if x == y:
                    continue
                ctx = " ".join(A[max(0, i - 4):i + 2])
                kind = ("drug name" if DRUG.search(x) else
                        "biomarker result" if RESULT.search(x) and MARKER.search(ctx) else
                        "site/laterality" if SITE.search(x) else
                        "treatment intent/resection" if INTENT.search(x) else None)
                if kind:
                    v.append(f"typo in a {kind}: {x} -> {y}")
    elif iv == "N12_telegraphic":
        if len(NEG.findall(bt)) != len(NEG.findall(ct)):
            v.append(f"negations {len(NEG.findall(bt))} -> {len(NEG.findall(ct))}")
        if re.findall(r"\S*\d\S*", bt) != re.findall(r"\S*\d\S*", ct):
            v.append("a token with a digit changed")
    elif iv == "N13_hedged":
        ch = changed_lines(b, c)
        plus = [line for _, sgn, line in ch if sgn == "+"]
        minus = [line for _, sgn, line in ch if sgn == "-"]
        if len(plus) != len(minus) or len(plus) > 1:
            v.append("more than one line changed")
    elif iv == "N14_all_caps":
        for s in b:
            for x, y in zip(words(b[s]), words(c[s]), strict=False):
                cx = core(x)
                if x != y and UNIT.match(cx):
                    if PREFIX_CASE.match(cx):
                        v.append(f"unit prefix meaning changed: {cx} -> {core(y)}")
                    else:
                        v.append(f"note, unit recased, meaning kept: {cx} -> {core(y)}")
    return v


def build(cases: Path, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "clinical_cf.cli", "counterfactuals", "build", "--cases", str(cases),
                    "--editor", "structured", "--families", "N", "--out", str(out)],
                   check=False, capture_output=True, text=True, cwd=ROOT)
    return out / "counterfactuals.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=str(ROOT / "catalog/css/cases.jsonl"))
    ap.add_argument("--cf", help="an existing counterfactuals.jsonl (family N)")
    ap.add_argument("--examples", type=int, default=2)
    a = ap.parse_args(argv)
    path = Path(a.cf) if a.cf else build(Path(a.cases), Path(tempfile.mkdtemp(prefix="b47_")))
    notes = collections.Counter()
    n, bad = collections.Counter(), collections.Counter()
    kinds, ex = collections.defaultdict(collections.Counter), collections.defaultdict(list)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            iv = r["intervention_id"]
            if not re.match(r"N(?:[4-9]|1[0-4])_", iv):
                continue
            n[iv] += 1
            v = [x for x in audit_tuple(r) if not x.startswith("note")]
            notes[iv] += any(x.startswith("note") for x in audit_tuple(r))
            if v:
                bad[iv] += 1
                for x in v:
                    kinds[iv][x.split(":")[0]] += 1
                if len(ex[iv]) < a.examples:
                    ex[iv].append(f"{r['case_id']}: {v[0]}")
    print(f"{'control':28} {'tuples':>6} {'with violation':>15} {'notes only':>10}  kinds")
    for iv in sorted(n, key=lambda k: int(re.match(r"N(\d+)", k).group(1))):
        print(f"{iv:28} {n[iv]:6d} {bad[iv]:15d} {notes[iv]:10d}  {dict(kinds[iv])}")
        for e in ex[iv]:
            print(f"{'':30}e.g. {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
