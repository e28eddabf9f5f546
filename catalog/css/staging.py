"""AJCC 8th edition staging of the bundled cancer types, computed from the record's facts.

Why this module exists: the second clinical review found the stage group, the N category and the M
subcategory typed by hand next to the T, N, M, node counts and metastatic sites they follow from
("pT3N2 (1/28 LN)", gastric pT3N2 printed IIIB, melanoma brain metastases written M1b). A fact printed
twice without being derived is where a reader finds a contradiction; here each is computed from the facts
the edition uses, and the cohort, the renderer, the structured mutations and the invariants call it.

What it computes (AJCC Cancer Staging Manual, 8th edition, 2017; ovarian with FIGO 2014):
- `n_category`: N from the number of positive regional nodes and how they were found (clinical, pathologic,
  sentinel), where the edition counts nodes (breast, colorectal, gastric, pancreatic, melanoma, prostate,
  ovarian); NSCLC N is by nodal station, not count, so it takes the station.
- `m_category`: the M1 subcategory from the metastatic sites (melanoma M1a-d, NSCLC M1a-c, colorectal
  M1a-c, ovarian M1a/b, prostate M1a-c; M1 where the edition has no subcategory). A site is an organ; a site
  that says "multiple" (`liver (multiple lesions)`) is more than one metastasis, which NSCLC M1b/M1c counts.
- `stage_group`: the stage group from T, N, M (with Grade Group and PSA for prostate). Clinical (c) and
  pathological (p) groups differ where the edition says so (gastric, melanoma stage III); a post-neoadjuvant
  (yp) TNM is refused: it is the response to treatment, never the stage at diagnosis.

Breast: the *anatomic* stage group (AJCC 8, table "Anatomic Stage Groups"). The edition's prognostic stage
needs grade, ER, PR, HER2 and, for some, the 21-gene score; this benchmark flips HER2 and ER/PR in family A,
and a prognostic stage would then move with the marker, so the counterfactual would change two facts, not
one. The anatomic stage depends only on T, N and M; the markers are stated on their own lines.

Scope: invasive carcinoma / melanoma of the eight bundled types; T, N and M as the record writes them
(`cT2bN2M1c`, `pT3b cN1b M0`, `ypT1c ypN1a`). Unknown categories (TX, NX) raise `StagingError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Method = Literal["clinical", "pathologic", "sentinel"]


class StagingError(ValueError):
    """A stage that cannot be computed from the facts given (names what is missing)."""


# ----------------------------------------------------------------------------------------------- TNM text


@dataclass(frozen=True)
class TNM:
    """One TNM as written: the T, N and M categories with their prefixes (c, p, yp; '' when unstated)."""

    t_prefix: str
    t: str
    n_prefix: str
    n: str
    m: str

    @property
    def t_major(self) -> str:
        """'T2b' -> 'T2', 'Tis' -> 'Tis'."""
        return re.sub(r"^(T[0-4])(?:mi|[a-d]\d?)?$", r"\1", self.t)

    @property
    def n_major(self) -> str:
        return re.sub(r"^(N[0-3])[a-c]?(?:mi)?$", r"\1", self.n)

    @property
    def m_major(self) -> str:
        return self.m[:2]

    @property
    def post_neoadjuvant(self) -> bool:
        return self.t_prefix.startswith("y") or self.n_prefix.startswith("y")

    @property
    def pathologic(self) -> bool:
        return "p" in self.t_prefix or "p" in self.n_prefix

    def text(self, *, spaced: bool = False) -> str:
        """The TNM as a chart writes it: 'pT3N1aM0', or with `spaced` 'pT3 pN1a M0'."""
        n_prefix = self.n_prefix if self.n_prefix != self.t_prefix else ""
        if spaced:
            return f"{self.t_prefix}{self.t} {self.n_prefix}{self.n} {self.m}"
        return f"{self.t_prefix}{self.t}{' ' + n_prefix if n_prefix else ''}{self.n}{' ' if n_prefix else ''}{self.m}"


_TNM = re.compile(
    r"(?P<tp>y?[pc]?)(?P<t>T(?:is|[0-4x](?:mi|[a-d]\d?)?))\s*(?:(?P<np>y?[pc])?(?P<n>N[0-3x](?:mi|[a-c])?))?"
    r"(?:\s*(?:\([^)]*\))?)?\s*(?P<m>(?:c|p)?M[01x][a-d]?)?"
)


def parse_tnm(text: str) -> TNM:
    """The T, N and M of a TNM string; N and M default to the T's prefix and 'M0' when not written."""
    m = _TNM.search(text)
    if m is None:
        raise StagingError(f"no T category in {text!r}")
    t_prefix = m.group("tp") or ""
    n = m.group("n")
    if n is None:
        raise StagingError(f"no N category in {text!r}")
    n_prefix = m.group("np") if m.group("np") is not None else t_prefix
    mcat = re.sub(r"^[cp]", "", m.group("m") or "M0")
    return TNM(t_prefix, m.group("t"), n_prefix, n, mcat)


# ----------------------------------------------------------------------------------------------- N category

_COUNTED: dict[str, tuple[tuple[int, str], ...]] = {
    # (lowest count, category), highest first. AJCC 8 regional lymph node definitions.
    "breast": ((10, "N3a"), (4, "N2a"), (1, "N1a"), (0, "N0")),  # pN by count of axillary nodes
    "colorectal": ((7, "N2b"), (4, "N2a"), (2, "N1b"), (1, "N1a"), (0, "N0")),
    "gastric": ((16, "N3b"), (7, "N3a"), (3, "N2"), (1, "N1"), (0, "N0")),
    "pancreatic": ((4, "N2"), (1, "N1"), (0, "N0")),
    "prostate": ((1, "N1"), (0, "N0")),
    "oesophageal": ((7, "N3"), (3, "N2"), (1, "N1"), (0, "N0")),  # also a junction tumour within 2 cm (`staging_table`)
    "ovarian": ((1, "N1"), (0, "N0")),  # N1a/N1b (10 mm) need the deposit size, which the record does not carry
}


def n_category(cancer_type: str, positive: int, method: Method = "pathologic", station: str | None = None) -> str:
    """The AJCC 8 N category of `positive` regional nodes found by `method`.

    Melanoma: nodes found by a sentinel-node biopsy are clinically occult (N1a 1, N2a 2-3, N3a 4+); nodes found
    clinically are N1b / N2b / N3b. Breast: clinical N has no count subcategory (cN1 = movable ipsilateral level
    I-II nodes). NSCLC: N is the nodal station ('hilar' N1, 'mediastinal' N2, 'contralateral' or
    'supraclavicular' N3), never a count.
    """
    if positive < 0:
        raise StagingError(f"negative node count {positive}")
    if positive == 0:
        return "N0"
    if cancer_type == "nsclc":
        stations = {"hilar": "N1", "peribronchial": "N1", "mediastinal": "N2", "subcarinal": "N2",
                    "contralateral": "N3", "supraclavicular": "N3"}
        if station not in stations:
            raise StagingError(f"NSCLC N category is by nodal station, not count: give one of {', '.join(stations)}")
        return stations[station]
    if cancer_type == "melanoma":
        occult = method == "sentinel"
        major = 1 if positive == 1 else 2 if positive <= 3 else 3
        return f"N{major}{'a' if occult else 'b'}"
    if cancer_type not in _COUNTED:
        raise StagingError(f"no node-count rule for {cancer_type!r}")
    category = next(cat for lowest, cat in _COUNTED[cancer_type] if positive >= lowest)
    if cancer_type == "breast" and method == "clinical":
        return category[:2]
    return category


def n_agrees_with_count(cancer_type: str, n: str, positive: int, method: Method = "pathologic") -> bool:
    """Whether an N category agrees with a positive-node count (NSCLC: only N0 <-> 0 is checkable)."""
    if n.startswith("Nx") or n.startswith("NX"):
        return True
    if (positive == 0) != (n == "N0"):
        return False
    if positive == 0 or cancer_type == "nsclc":
        return True
    expected = n_category(cancer_type, positive, method)
    if cancer_type == "breast" and len(n) == 2:  # clinical N, or a pN written without its subcategory
        return expected[:2] == n
    if cancer_type == "colorectal" and n in ("N1", "N2"):
        return expected[:2] == n
    return expected == n


# ----------------------------------------------------------------------------------------------- M category

CNS = ("brain", "leptomeningeal", "spinal cord", "cns")
_SKIN_NODES = ("skin", "subcutaneous", "soft tissue", "distant lymph", "non-regional lymph", "nonregional lymph", "muscle")


_OVARIAN_T3 = re.compile(r"(?i)peritone|omentum|omental|surface|capsul|serosa|pelvic (?:side )?wall|mesenter")


def _has(sites: list[str], words: tuple[str, ...]) -> bool:
    return any(any(w in s.lower() for w in words) for s in sites)


def m_category(cancer_type: str, sites: list[str]) -> str:
    """The AJCC 8 M category of distant metastases at `sites` ('M0' when there are none).

    Melanoma: CNS M1d > other visceral M1c > lung M1b > skin, soft tissue or distant nodes M1a (the LDH suffix
    (0)/(1) is not written). NSCLC: lung (a contralateral nodule), pleura or pericardium M1a; a single
    extrathoracic metastasis M1b (an organ site is one metastasis unless it says "multiple"); more M1c. Colorectal:
    peritoneum M1c; two or more organs M1b; one organ M1a. Ovarian: pleural effusion (pleura) M1a; parenchymal or
    extra-abdominal M1b. Prostate: non-regional nodes M1a; bone M1b; other sites M1c. Breast, gastric and
    pancreatic have no M1 subcategory.
    """
    if not sites:
        return "M0"
    if cancer_type == "melanoma":
        if _has(sites, CNS):
            return "M1d"
        if any(not any(w in s.lower() for w in ("lung", *_SKIN_NODES)) for s in sites):
            return "M1c"
        return "M1b" if _has(sites, ("lung",)) else "M1a"
    if cancer_type == "nsclc":
        intrathoracic = ("lung", "pleura", "pericard")
        lesions = sum(2 if "multiple" in s.lower() else 1 for s in sites if not any(w in s.lower() for w in intrathoracic))
        if lesions >= 2:
            return "M1c"
        return "M1b" if lesions else "M1a"
    if cancer_type == "colorectal":
        if _has(sites, ("peritone",)):
            return "M1c"
        return "M1b" if len(sites) >= 2 else "M1a"
    if cancer_type == "ovarian":
        # FIGO 2014 / AJCC 8: peritoneal spread beyond the pelvis, the omentum and the liver or spleen capsule (surface)
        # are T3, not distant metastases; a pleural effusion is M1a; parenchymal and extra-abdominal disease M1b.
        distant = [s for s in sites if not _OVARIAN_T3.search(s)]
        if not distant:
            return "M0"
        return "M1b" if any("pleura" not in s.lower() for s in distant) else "M1a"
    if cancer_type == "prostate":
        if any(not any(w in s.lower() for w in ("bone", "lymph")) for s in sites):
            return "M1c"
        return "M1b" if _has(sites, ("bone",)) else "M1a"
    return "M1"


# ----------------------------------------------------------------------------------------------- stage groups


def _breast(t: TNM) -> str:
    """AJCC 8 breast, anatomic stage groups."""
    if t.m_major == "M1":
        return "IV"
    tm, nm = t.t_major, t.n_major
    if t.n == "N1mi" and tm in ("T0", "T1"):
        return "IB"
    if nm == "N3":
        return "IIIC"
    if tm == "T4":
        return "IIIB"
    if tm == "Tis" and nm == "N0":
        return "0"
    table = {("T1", "N0"): "IA", ("T0", "N1"): "IIA", ("T1", "N1"): "IIA", ("T2", "N0"): "IIA", ("T2", "N1"): "IIB", ("T3", "N0"): "IIB"}
    if (tm, nm) in table:
        return table[(tm, nm)]
    if nm == "N2" or (tm == "T3" and nm == "N1"):
        return "IIIA"
    raise StagingError(f"breast {t.text()}: no stage group")


def _nsclc(t: TNM) -> str:
    """AJCC 8 lung."""
    if t.m in ("M1a", "M1b"):
        return "IVA"
    if t.m == "M1c":
        return "IVB"
    if t.m_major == "M1":
        raise StagingError(f"NSCLC {t.text()}: M1 needs its subcategory (a-c)")
    tm, nm = t.t_major, t.n_major
    if t.t == "Tis" and nm == "N0":
        return "0"
    if nm == "N0":
        by_t = {"T1a": "IA1", "T1mi": "IA1", "T1b": "IA2", "T1c": "IA3", "T2a": "IB", "T2b": "IIA", "T3": "IIB", "T4": "IIIA"}
        if t.t == "T2":
            raise StagingError(f"NSCLC {t.text()}: T2 needs its subcategory (a/b)")
        return by_t.get(t.t) or by_t[tm]
    early = tm in ("T1", "T2")
    if nm == "N1":
        return "IIB" if early else "IIIA"
    if nm == "N2":
        return "IIIA" if early else "IIIB"
    return "IIIB" if early else "IIIC"


def _colorectal(t: TNM) -> str:
    """AJCC 8 colon and rectum."""
    if t.m_major == "M1":
        return {"M1a": "IVA", "M1b": "IVB", "M1c": "IVC"}.get(t.m) or "IV"
    tt, n = t.t, t.n
    if n == "N0":
        return {"Tis": "0", "T1": "I", "T2": "I", "T3": "IIA", "T4a": "IIB", "T4b": "IIC"}[tt]
    if tt == "T4b":
        return "IIIC"
    n1 = n in ("N1", "N1a", "N1b", "N1c")
    if n1:
        return "IIIA" if tt in ("T1", "T2") else "IIIB"
    if n == "N2a":
        return "IIIA" if tt == "T1" else "IIIB" if tt in ("T2", "T3") else "IIIC"
    if n == "N2b":
        return "IIIB" if tt in ("T1", "T2") else "IIIC"
    raise StagingError(f"colorectal {t.text()}: N2 needs its subcategory (a/b)")


def _pancreatic(t: TNM) -> str:
    """AJCC 8 exocrine pancreas."""
    if t.m_major == "M1":
        return "IV"
    if t.t_major == "T4" or t.n == "N2":
        return "III"
    if t.n == "N1":
        return "IIB"
    return {"Tis": "0", "T1": "IA", "T2": "IB", "T3": "IIA"}[t.t_major]


_GASTRIC_P: dict[str, tuple[str, ...]] = {
    # AJCC 8 stomach, pathological (pTNM) prognostic groups: T -> groups for N0, N1, N2, N3a, N3b.
    "T1": ("IA", "IB", "IIA", "IIB", "IIIB"),
    "T2": ("IB", "IIA", "IIB", "IIIA", "IIIB"),
    "T3": ("IIA", "IIB", "IIIA", "IIIB", "IIIC"),
    "T4a": ("IIB", "IIIA", "IIIA", "IIIB", "IIIC"),
    "T4b": ("IIIA", "IIIB", "IIIB", "IIIC", "IIIC"),
}
_GASTRIC_N = ("N0", "N1", "N2", "N3a", "N3b")


def _gastric(t: TNM) -> str:
    """AJCC 8 stomach: pathological groups for pTNM, clinical groups for cTNM (they differ)."""
    tt = t.t if t.t in ("T4a", "T4b") else t.t_major
    if tt == "Tis" and t.n_major == "N0" and t.m_major == "M0":
        return "0"
    if not t.pathologic:
        if t.m_major == "M1":
            return "IVB"
        if tt == "T4b":
            return "IVA"
        node_positive = t.n_major != "N0"
        if tt in ("T1", "T2"):
            return "IIA" if node_positive else "I"
        return "III" if node_positive else "IIB"
    if t.m_major == "M1":
        return "IV"
    if t.n == "N3":
        raise StagingError(f"gastric {t.text()}: pN3 needs its subcategory (a/b)")
    return _GASTRIC_P[tt][_GASTRIC_N.index(t.n)]


_OESOPHAGEAL_P: dict[tuple[str, str], str] = {
    # AJCC 8 oesophagus and EGJ, adenocarcinoma, pathological (pTNM) groups with N0 (T1-T2 N0 need the grade).
    ("T1", "N1"): "IIB", ("T3", "N0"): "IIB", ("T1", "N2"): "IIIA", ("T2", "N1"): "IIIA", ("T2", "N2"): "IIIB",
    ("T3", "N1"): "IIIB", ("T3", "N2"): "IIIB", ("T4a", "N0"): "IIIB", ("T4a", "N1"): "IIIB", ("T4a", "N2"): "IVA",
}
_OESOPHAGEAL_C: dict[tuple[str, str], str] = {
    # AJCC 8 oesophagus and EGJ, adenocarcinoma, clinical (cTNM) groups.
    ("T1", "N0"): "I", ("T1", "N1"): "IIA", ("T2", "N0"): "IIB", ("T2", "N1"): "III", ("T3", "N0"): "III", ("T3", "N1"): "III",
    ("T4a", "N0"): "III", ("T4a", "N1"): "III",
}


def _grade(histology: str | None) -> int | None:
    """G1-G3 from 'grade 2' or the differentiation the histology states."""
    text = (histology or "").lower()
    m = re.search(r"\bgrade ([1-3])\b|\bg([1-3])\b", text)
    if m:
        return int(m.group(1) or m.group(2))
    for word, g in (("poorly", 3), ("signet", 3), ("diffuse", 3), ("moderately", 2), ("well", 1)):
        if word in text:
            return g
    return None


def _oesophageal(t: TNM, histology: str | None = None) -> str:
    """AJCC 8 oesophagus and oesophagogastric junction, adenocarcinoma: pathological groups for pTNM, clinical for cTNM."""
    if t.m_major == "M1":
        return "IVB"
    tt = t.t if t.t in ("T4a", "T4b") else t.t_major
    nm = t.n_major
    if tt == "Tis" and nm == "N0":
        return "0"
    if tt == "T4b" or nm == "N3":
        return "IVA"
    if tt == "T4" or (not t.pathologic and t.t == "T4"):
        raise StagingError(f"oesophageal {t.text()}: T4 needs its subcategory (a/b)")
    if not t.pathologic:
        return "IVA" if nm == "N2" else _OESOPHAGEAL_C[(tt, nm)]
    if nm == "N0" and tt in ("T1", "T2"):
        g = _grade(histology)
        if g is None:
            raise StagingError(f"oesophageal {t.text()}: pT1-2 N0 adenocarcinoma needs the grade")
        if tt == "T2":
            return "IIA" if g == 3 else "IC"
        if g == 3:
            return "IC"
        return "IA" if t.t == "T1a" and g == 1 else "IB"
    return _OESOPHAGEAL_P[(tt, nm)]


_JUNCTION = re.compile(r"(?i)gastro-?o?esophageal junction|o?esophagogastric junction|\b(?:GEJ|EGJ|OGJ)\b|\bcardia\b")
_EPICENTRE_CM = re.compile(r"(?i)epicent(?:re|er)\D{0,20}?(\d+(?:\.\d+)?)\s*cm")


def staging_table(cancer_type: str, site: str | None) -> str:
    """The AJCC 8 chapter a primary is staged by: a gastric primary involving the junction with its epicentre no more
    than 2 cm into the stomach (Siewert I-II; a 'junction' primary with no distance stated) is staged as an oesophageal
    adenocarcinoma, one more than 2 cm (Siewert III) as a stomach cancer (AJCC 8, chapter 16 'Anatomy')."""
    if cancer_type != "gastric" or not site or not _JUNCTION.search(site):
        return cancer_type
    if re.search(r"(?i)siewert (?:type )?(?:III|3)\b", site):
        return "gastric"
    cm = _EPICENTRE_CM.search(site)
    if cm is not None:
        return "oesophageal" if float(cm.group(1)) <= 2.0 else "gastric"
    junction = re.search(r"(?i)junction|\b(?:GEJ|EGJ|OGJ)\b", site) is not None
    return "oesophageal" if junction else "gastric"


_MELANOMA_N0_P = {"T1a": "IA", "T1b": "IA", "T2a": "IB", "T2b": "IIA", "T3a": "IIA", "T3b": "IIB", "T4a": "IIB", "T4b": "IIC"}
_MELANOMA_N0_C = {**_MELANOMA_N0_P, "T1b": "IB"}


def _melanoma(t: TNM) -> str:
    """AJCC 8 cutaneous melanoma. Clinical staging has one stage III (no subgroups); pathological stage III by T and N."""
    if t.m_major == "M1":
        return "IV"
    pathologic = "p" in t.n_prefix
    if t.n == "N0":
        return (_MELANOMA_N0_P if pathologic or "p" in t.t_prefix else _MELANOMA_N0_C)[t.t]
    if not pathologic:
        return "III"
    low = ("N1a", "N2a")
    mid = ("N1a", "N1b", "N1c", "N2a", "N2b")
    if t.t == "T0":
        return "IIIB" if t.n in ("N1b", "N1c") else "IIIC"
    if t.t in ("T1a", "T1b", "T2a"):
        return "IIIA" if t.n in low else "IIIB" if t.n in mid else "IIIC"
    if t.t in ("T2b", "T3a"):
        return "IIIB" if t.n in mid else "IIIC"
    if t.t in ("T3b", "T4a"):
        return "IIIC"
    return "IIID" if t.n_major == "N3" else "IIIC"  # T4b


def _ovarian(t: TNM) -> str:
    """AJCC 8 / FIGO 2014 ovary, fallopian tube and primary peritoneal carcinoma."""
    if t.m_major == "M1":
        return {"M1a": "IVA", "M1b": "IVB"}.get(t.m) or "IV"
    if t.t.startswith("T3"):
        return {"T3": "III", "T3a": "IIIA2", "T3b": "IIIB", "T3c": "IIIC"}[t.t]
    if t.n_major == "N1":
        return "IIIA1"
    return {"T1": "I", "T1a": "IA", "T1b": "IB", "T1c": "IC", "T2": "II", "T2a": "IIA", "T2b": "IIB"}.get(t.t) or t.t.replace("T1c", "IC")


def _prostate(t: TNM, grade_group: int | None, psa: float | None) -> str:
    """AJCC 8 prostate: T, N, M, PSA (ng/mL, pretreatment) and Grade Group."""
    if t.m_major == "M1":
        return "IVB"
    if t.n_major == "N1":
        return "IVA"
    if grade_group is None:
        raise StagingError("prostate stage needs the Grade Group")
    if grade_group == 5:
        return "IIIC"
    if t.t_major in ("T3", "T4"):
        return "IIIB"
    if psa is None:
        raise StagingError("prostate stage of T1-2 disease needs the pretreatment PSA")
    if psa >= 20:
        return "IIIA"
    if grade_group in (3, 4):
        return "IIC"
    if grade_group == 2:
        return "IIB"
    early = "p" in t.t_prefix or t.t in ("T1", "T1a", "T1b", "T1c", "T2a")
    return "I" if early and psa < 10 else "IIA"


def stage_group(cancer_type: str, tnm: TNM | str, *, grade_group: int | None = None, psa: float | None = None,
                site: str | None = None, histology: str | None = None) -> str:
    """The AJCC 8 stage group of `tnm` (a TNM or its text). A yp TNM is refused: see the module docstring. `site` (the
    primary site) picks the chapter where the edition says so (`staging_table`: junction tumours); `histology` gives
    the grade the oesophageal pT1-2 N0 groups need."""
    t = parse_tnm(tnm) if isinstance(tnm, str) else tnm
    if t.post_neoadjuvant:
        raise StagingError(f"{t.text()} is a post-neoadjuvant (yp) stage, not the stage at diagnosis")
    if "x" in t.t.lower()[1:2] or t.n.lower().startswith("nx") or t.m.lower() == "mx":
        raise StagingError(f"{t.text()}: a category is unknown (X)")
    if cancer_type == "prostate":
        return _prostate(t, grade_group, psa)
    if staging_table(cancer_type, site) == "oesophageal" or cancer_type == "oesophageal":
        return _oesophageal(t, histology)
    staging = {"breast": _breast, "nsclc": _nsclc, "colorectal": _colorectal, "pancreatic": _pancreatic,
               "gastric": _gastric, "melanoma": _melanoma, "ovarian": _ovarian}.get(cancer_type)
    if staging is None:
        raise StagingError(f"no AJCC 8 staging rule for {cancer_type!r}")
    try:
        return staging(t)
    except KeyError as ex:
        raise StagingError(f"{cancer_type} {t.text()}: category {ex.args[0]} has no stage group") from None


def with_m(tnm: str, m: str) -> str:
    """The TNM text with its M category replaced by `m` (written after the N)."""
    pattern = re.compile(r"(?:(?<=[0-9a-dsx])|(?<![A-Za-z]))[cp]?M[01x][a-d]?(?![a-z])")
    return pattern.sub(m, tnm, count=1) if pattern.search(tnm) else f"{tnm}{m}"


# ----------------------------------------------------------------------------------------------- record facts


def grade_group(histology: str) -> int | None:
    """The ISUP Grade Group the histology states ('Gleason 4+3=7 (Grade Group 3)'), from the Gleason pattern if not."""
    m = re.search(r"Grade Group (\d)", histology)
    if m:
        return int(m.group(1))
    g = re.search(r"Gleason (\d)\+(\d)", histology)
    if g is None:
        return None
    a, b = int(g.group(1)), int(g.group(2))
    total = a + b
    return 1 if total <= 6 else (2 if a == 3 else 3) if total == 7 else 4 if total == 8 else 5


def pretreatment_psa(record) -> float | None:  # noqa: ANN001 - a PatientRecord (schema is not imported: staging is a leaf)
    """The PSA of the diagnostic work-up: the first PSA before any resection or systemic therapy, else the first one."""
    psas = sorted((lab for lab in record.labs if lab.name == "PSA"), key=lambda lab: lab.date)
    if not psas:
        return None
    starts = [ln.start for ln in record.treatment_lines] + ([record.resection.date] if record.resection else [])
    first_treatment = min(starts) if starts else None
    before = [lab for lab in psas if first_treatment is None or lab.date <= first_treatment]
    return (before or psas)[0].value


def diagnostic_stage(cancer_type: str, record) -> str:  # noqa: ANN001
    """The stage group at diagnosis computed from the record: `record.tnm` (M0 when the metastases came later),
    the histology's Grade Group and the pretreatment PSA."""
    if record.metastasis_date is None:
        return current_stage(cancer_type, record)
    return stage_group(cancer_type, with_m(record.tnm, "M0"), grade_group=grade_group(record.histology), psa=pretreatment_psa(record),
                       site=record.primary_site, histology=record.histology)


def current_stage(cancer_type: str, record) -> str:  # noqa: ANN001
    """The stage group now: the diagnostic T and N with the M category of the record's metastatic sites."""
    tnm = with_m(record.tnm, m_category(cancer_type, list(record.metastatic_sites)))
    return stage_group(cancer_type, tnm, grade_group=grade_group(record.histology), psa=pretreatment_psa(record),
                       site=record.primary_site, histology=record.histology)
