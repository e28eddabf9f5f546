"""Schema of a CSS tumor-board case.

A case is what a user brings (or what `catalog.css.cohort` generates): the ten chart
sections of a packet, the key facts that intervention applicability filters read, and
the consensus treatments that CMS scores against. A structured `record` is optional;
when present, `mutation_mode=structured` applies interventions to it and re-renders the
packet, so the change reaches every section that states the fact.

Run `clinical-cf schema css-case` to print this schema as JSON Schema.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_json_line, load_jsonl, read_text_checked, split_records, validate_strict

SectionName = Literal[
    "demographics",
    "diagnoses",
    "biomarkers",
    "medications",
    "procedures",
    "encounters",
    "labs",
    "vitals",
    "allergies",
    "overview",
]

SECTIONS: tuple[str, ...] = get_args(SectionName)
"""The ten chart sections of the CSS paper's agent tool, in packet order (written once, as `SectionName`)."""

BUNDLED_CANCER_TYPES: tuple[str, ...] = (
    "breast",
    "nsclc",
    "colorectal",
    "pancreatic",
    "gastric",
    "melanoma",
    "ovarian",
    "prostate",
)
"""The cancer types of the bundled cohort (the generator's planners)."""

KNOWN_CANCER_TYPES: tuple[str, ...] = (
    *BUNDLED_CANCER_TYPES, "renal", "bladder", "head_and_neck", "endometrial", "cervical", "oesophageal",
    # Issue 43: every type the importer can pre-fill is a type the schema accepts, named the same in docs/inputs.md.
    "hepatocellular", "sarcoma", "mesothelioma", "thyroid", "sclc", "cholangiocarcinoma", "gist", "gallbladder",
    "glioblastoma", "merkel_cell_carcinoma", "neuroendocrine", "anal",
)
"""The canonical cancer types: the bundled eight, the others the intervention catalog names in its `applies_to`, and
those the importer reads (tests/catalog/css/test_schema.py keeps the three in step)."""

CANCER_TYPE_CODES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # type: (ICD-10 topography prefixes, ICD-O-3 morphology codes). Sources: WHO ICD-10 2019 chapter II; ICD-O-3.2 (2019).
    # A specific morphology (small cell 8041, Merkel 8247, neuroendocrine 8240, glioblastoma 9440) decides whatever the
    # site; a generic one (adenocarcinoma 8140, squamous 8070) leaves the site to decide.
    "breast": (("C50",), ("8520", "8522")),
    "nsclc": (("C34",), ("8250", "8252", "8253", "8254", "8012")),
    "sclc": ((), ("8041", "8042", "8043", "8044", "8045")),
    "colorectal": (("C18", "C19", "C20"), ()),
    "anal": (("C21",), ()),
    "pancreatic": (("C25",), ()),
    "gastric": (("C16",), ("8490",)),
    "melanoma": (("C43",), ("8720", "8721", "8742", "8743", "8744", "8745", "8771", "8772")),
    "ovarian": (("C56", "C57.0"), ("8441", "8461")),
    "prostate": (("C61",), ()),
    "renal": (("C64",), ("8310", "8312", "8260", "8317")),
    "bladder": (("C67",), ("8120",)),
    "head_and_neck": (("C0", "C10", "C11", "C12", "C13", "C14", "C30", "C31", "C32"), ()),
    "endometrial": (("C54", "C55"), ("8380",)),
    "cervical": (("C53",), ()),
    "oesophageal": (("C15",), ()),
    "hepatocellular": (("C22.0",), ("8170", "8171", "8172", "8173", "8174", "8175")),
    "cholangiocarcinoma": (("C22.1", "C24.0"), ("8160", "8161", "8162")),
    "gallbladder": (("C23",), ()),
    "thyroid": (("C73",), ("8330", "8335", "8345", "8510")),
    "mesothelioma": (("C45",), ("9050", "9051", "9052", "9053")),
    "sarcoma": (("C49", "C40", "C41"), ("8800", "8801", "8802", "8805", "8810", "8830", "8850", "8890", "8900", "9180", "9260")),
    "gist": ((), ("8936",)),
    "glioblastoma": ((), ("9440", "9441", "9442", "9445")),
    "merkel_cell_carcinoma": ((), ("8247",)),
    "neuroendocrine": ((), ("8240", "8241", "8242", "8249")),
}
"""Per type, the ICD-10 codes of its site and the ICD-O-3 codes of its histology: the importer reads a type from the codes a
packet carries before any word (a "C71.2" line does not make a lung cancer of "temporal lobe")."""

StagingSystem = Literal["ajcc", "figo", "who_cns", "masaoka_koga", "testicular_s", "none"]
STAGING_SYSTEMS: tuple[str, ...] = get_args(StagingSystem)
"""Staging systems a case may use (issue 43): AJCC/UICC TNM groups, FIGO (gynaecological), WHO CNS grade (gliomas are
graded, not staged), Masaoka-Koga (thymic), the testicular serum marker S category, or none."""
TYPE_STAGING: dict[str, str] = {"glioblastoma": "who_cns"}
UNSTAGED_SYSTEMS: tuple[str, ...] = ("who_cns", "none")
"""Systems with no distant-spread category: an intervention filter on `metastatic` or stage groups that names no type
does not apply to such a case (interventions.Applicability.matches)."""
STAGE_GROUP = r"(0|I|II|III|IV)[A-C]?[0-9]?"
"""An AJCC/FIGO stage group."""
"""Types whose tumours are not staged by AJCC groups: their stage question asks for the system's own value or 'none'."""

CANCER_TYPE_SYNONYMS: dict[str, str] = {
    # The anatomical site, the adjective, common abbreviations and "<type> cancer" of each canonical type.
    **dict.fromkeys(("colon", "colonic", "rectal", "rectum", "crc", "mcrc", "large_bowel", "bowel", "colon_cancer",
                     "rectal_cancer", "colorectal_cancer", "colorectal_adenocarcinoma"), "colorectal"),
    # Small-cell lung cancer is another disease and is not mapped: write 'sclc' for it.
    **dict.fromkeys(("lung", "lung_cancer", "non_small_cell_lung", "non_small_cell_lung_cancer", "nsclc_adenocarcinoma",
                     "lung_adenocarcinoma", "lung_squamous_cell_carcinoma", "mnsclc"), "nsclc"),
    **dict.fromkeys(("breast_cancer", "breast_carcinoma", "mbc"), "breast"),
    **dict.fromkeys(("pancreas", "pancreatic_cancer", "pdac", "pancreatic_adenocarcinoma"), "pancreatic"),
    **dict.fromkeys(("stomach", "stomach_cancer", "gastric_cancer", "gastric_adenocarcinoma"), "gastric"),
    **dict.fromkeys(("cutaneous_melanoma", "skin_melanoma", "melanoma_skin"), "melanoma"),
    **dict.fromkeys(("ovary", "ovarian_cancer", "hgsoc", "high_grade_serous_ovarian"), "ovarian"),
    **dict.fromkeys(("prostatic", "prostate_cancer", "prostate_adenocarcinoma"), "prostate"),
    **dict.fromkeys(("kidney", "rcc", "renal_cell", "renal_cell_carcinoma", "kidney_cancer"), "renal"),
    **dict.fromkeys(("urothelial", "urothelial_carcinoma", "bladder_cancer"), "bladder"),
    **dict.fromkeys(("head_neck", "hnscc", "scchn", "head_and_neck_cancer", "head_and_neck_squamous"), "head_and_neck"),
    **dict.fromkeys(("uterine", "endometrium", "endometrial_cancer", "uterine_cancer"), "endometrial"),
    **dict.fromkeys(("cervix", "cervical_cancer"), "cervical"),
    **dict.fromkeys(("esophageal", "oesophagus", "esophagus", "esophageal_cancer", "oesophageal_cancer"), "oesophageal"),
    **dict.fromkeys(("small_cell_lung", "small_cell_lung_cancer", "small_cell_lung_carcinoma", "small_cell"), "sclc"),
    **dict.fromkeys(("gbm", "glioblastoma_multiforme", "glioblastoma_idh_wildtype"), "glioblastoma"),
    **dict.fromkeys(("merkel", "merkel_cell", "mcc", "merkel_cell_cancer", "merkel_carcinoma"), "merkel_cell_carcinoma"),
    **dict.fromkeys(("net", "nen", "neuroendocrine_tumour", "neuroendocrine_tumor", "neuroendocrine_neoplasm",
                     "carcinoid", "gep_net", "neuroendocrine_carcinoma"), "neuroendocrine"),
    **dict.fromkeys(("anal_canal", "anal_cancer", "anal_scc", "anal_carcinoma", "anal_squamous_cell_carcinoma", "scc_anus",
                     "anus"), "anal"),
    **dict.fromkeys(("hcc", "liver_cancer", "hepatocellular_carcinoma"), "hepatocellular"),
    **dict.fromkeys(("thyroid_cancer", "thyroid_carcinoma"), "thyroid"),
}
"""Other names of the canonical types, by their normalised spelling (lower case, spaces and hyphens as '_')."""


def _normalised_type(value: str) -> str:
    return re.sub(r"[\s\-]+", "_", value.strip().lower())


def _swapped(a: str, b: str) -> bool:
    """Whether `a` is `b` with two adjacent letters swapped ('braest'): a typo difflib's ratio scores too low."""
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y] if len(a) == len(b) else []
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def _misspelt(key: str, name: str) -> bool:
    """Whether `key` is `name` with one word misspelt ('colorectl', 'braest'), not another word: 'merkel_cell_carcinoma'
    shares two words with 'renal_cell_carcinoma' and is another disease, so it is no near-miss (issue 43)."""
    a, b = key.split("_"), name.split("_")
    if len(a) != len(b):
        return False
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return len(differ) == 1 and (
        _swapped(*differ[0]) or difflib.SequenceMatcher(None, *differ[0]).ratio() >= 0.8 and len(differ[0][0]) >= 4
    )


def canonical_cancer_type(value: object) -> object:
    """The canonical type a synonym names ('colon' -> 'colorectal'); a type outside the list as given (open vocabulary).

    A spelling close to a known type or synonym (`colorectl`) is refused with it: accepted, it would silently make
    the case ineligible for every intervention that names the type.
    """
    if not isinstance(value, str):
        return value  # the str check reports it
    key = _normalised_type(value)
    if key in KNOWN_CANCER_TYPES:
        return key
    if key in CANCER_TYPE_SYNONYMS:
        return CANCER_TYPE_SYNONYMS[key]
    names = [*KNOWN_CANCER_TYPES, *CANCER_TYPE_SYNONYMS]
    near = [name for name in names if _misspelt(key, name)]
    if near:
        nearest = CANCER_TYPE_SYNONYMS.get(near[0], near[0])
        raise ValueError(
            f"unknown cancer type {value!r}; did you mean '{nearest}'? Known types: {', '.join(KNOWN_CANCER_TYPES)} "
            "(another type is accepted as a lower-case identifier; only interventions that name it will apply)"
        )
    return value


def cancer_type_note(value: object) -> str | None:
    """What validation says when it reads a cancer type as another ('colon' read as 'colorectal'), else None."""
    try:
        canonical = canonical_cancer_type(value)
    except ValueError:
        return None
    return f"{value!r} read as {canonical!r}" if canonical != value else None


CancerType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,39}$"), BeforeValidator(canonical_cancer_type)]
"""Open vocabulary (issue 22): a lower-case identifier, e.g. 'renal', 'bladder', 'head_and_neck',
'endometrial'. Applicability follows the facts a case carries (markers, stage, treatment state);
an intervention that needs a tumour type names it in `applies_to.cancer_types`. A synonym of a
known type is read as that type (`canonical_cancer_type`), so `colon` gets the colorectal interventions."""

STAGE_METASTATIC: dict[str, dict[str, bool | None]] = {
    # Stage groups whose M category is not "IV means M1, I-III mean M0": False = locoregional (M0), None = either.
    "head_and_neck": {"IVA": False, "IVB": None},  # AJCC 8th ed.: IVC is M1; nasopharynx IVB is M1, other sites' IVB is M0
    "cervical": {"IVA": False},  # FIGO 2018: IVA adjacent organs, IVB distant
    "thyroid": {"IVA": False, "IVB": None, "II": None},  # AJCC 8th ed.: anaplastic/medullary IVB M0, differentiated >= 55 IVB M1,
    # differentiated < 55 stage II is M1
    # AJCC 8th ed.: oesophageal IVA is T4b or N3 M0 and gastric clinical IVA T4b M0, but the groupings differ between
    # clinical, pathological and post-neoadjuvant staging and earlier editions: either, the packet decides.
    "oesophageal": {"IVA": None},
    "gastric": {"IVA": None},
    "bladder": {"IVA": None},  # AJCC 8th ed.: IVA is T4b N0 M0 or M1a (non-regional nodes)
    "hepatocellular": {"IVA": False},  # AJCC 8th ed.: IVA N1 M0
    "prostate": {"IVA": False},  # AJCC 8th ed.: IVA N1 M0
    "endometrial": {"IVA": False},  # FIGO: IVA bladder or bowel mucosa
    "gallbladder": {"IVA": False, "IVB": None},  # AJCC 8th ed.: IVB is N2 or M1
    "cholangiocarcinoma": {"IVA": False},  # AJCC 8th ed. perihilar: IVA N2 M0
}
"""Per cancer type, the stage groups whose metastatic status is not simply "stage IV" (AJCC 8th ed., FIGO 2018)."""


def stage_metastatic(cancer_type: str | None, stage: str) -> bool | None:
    """Whether a stage group means distant metastases for the type: True, False, or None (either: ask the packet)."""
    table = STAGE_METASTATIC.get(cancer_type or "", {})
    if stage in table:
        return table[stage]
    return stage.startswith("IV")


def stage_problem(case_id: str, cancer_type: str, stage: str, metastatic: bool) -> str | None:
    """One line naming the case, the field and the allowed values when `metastatic` disagrees with the stage, else None."""
    means = stage_metastatic(cancer_type, stage)
    if means is None or means == metastatic:
        return None
    allowed = sorted({g for g in ("0", "I", "II", "III", "IV", *STAGE_METASTATIC.get(cancer_type, {}))
                      if stage_metastatic(cancer_type, g) in (metastatic, None)})
    return (f"case '{case_id}', field 'metastatic': {str(metastatic).lower()} disagrees with stage {stage} of {cancer_type} "
            f"(stage {stage} means metastatic {str(means).lower()}); allowed: metastatic {str(means).lower()}, or a stage group "
            f"that fits metastatic {str(metastatic).lower()} ({', '.join(allowed)} and their A-C subgroups)")


KNOWN_MARKERS: tuple[str, ...] = (
    "HER2", "ER", "PR", "Ki-67", "AR", "ESR1", "PIK3CA", "BRCA1", "BRCA2", "PALB2", "ATM", "HRD",
    "EGFR", "ALK", "ROS1", "KRAS", "NRAS", "RAS", "BRAF", "MET", "RET", "NTRK", "HER2 mutation", "PD-L1",
    "MSI", "MMR", "TMB", "CLDN18.2", "FGFR2", "FGFR3", "IDH1", "IDH2", "KIT", "PDGFRA",
    # Issue 35: the endometrial molecular classification (POLE, p53 IHC) that the importer reads.
    "POLE", "p53",
    # Issue 43: markers boards outside the bundled types turn on (glioma, neuroendocrine, SCLC, Merkel cell, anal SCC).
    "MGMT", "SSTR", "DLL3", "HPV", "p16", "MCPyV", "H3K27M", "1p19q", "CDKN2A", "TERT",
)
"""Canonical biomarker names (the case schema's, as interventions' filters spell them; `catalog.validate` checks both).
The importer asks about any other marker a packet turns on and records the answer in the questions file; to filter on
it, add its name here."""

MARKER_ALIASES: dict[str, str] = {
    # Other names of a canonical marker (near in meaning, not in spelling): the gene for its protein, a clone, a synonym.
    "CD274": "PD-L1", "ERBB2": "HER2", "NEU": "HER2", "MIB1": "Ki-67", "MIB-1": "Ki-67", "TP53": "p53", "CD117": "KIT",
    "C-KIT": "KIT", "DMMR": "MMR", "PMMR": "MMR", "MSS": "MSI", "MSI-H": "MSI", "SSTR2": "SSTR", "SSTR2A": "SSTR",
    "SOMATOSTATIN RECEPTOR": "SSTR", "MERKEL CELL POLYOMAVIRUS": "MCPyV", "MCPYV": "MCPyV", "IDH": "IDH1",
    "ESTROGEN RECEPTOR": "ER", "OESTROGEN RECEPTOR": "ER", "PROGESTERONE RECEPTOR": "PR", "PGR": "PR",
}
"""Names of a canonical marker in other words: a case or catalog writing one is told the canonical name (issue 43)."""
MARKER_NAME = r"^[A-Za-z0-9][A-Za-z0-9.\-/ ]{0,39}$"
"""A marker outside KNOWN_MARKERS is accepted when it looks like a marker name (open vocabulary, issue 43): a user's
own catalog filters on it and their cases carry it, with no package edit."""

BiomarkerStatus = Literal["positive", "negative", "equivocal", "not_tested"]

PERCENT = r"^(?:<|>|<=|>=|≤|≥)?\s*\d{1,3}(?:\.\d+)?\s*%$"
"""A percent-valued marker as reported (Ki-67 45%, PD-L1 TPS 80%, ER <1%)."""

MarkerValue = BiomarkerStatus | Annotated[str, StringConstraints(pattern=PERCENT)]

# Percent cut-offs that give a percent-valued marker a status for applicability filters:
# ER/PR >= 1% positive (ASCO/CAP 2020); PD-L1 TPS >= 50% positive ("high", the catalog's A4
# and first-line monotherapy threshold), < 1% negative, 1-49% equivocal for the filters.
PERCENT_STATUS: dict[str, tuple[float, float]] = {"ER": (1, 1), "PR": (1, 1), "PD-L1": (50, 1)}

ConsensusLabel = Literal["strong", "tacit", "mixed", "refusal"]

DecisionDriver = Literal[
    "biomarker",
    "stage",
    "resection_status",
    "prior_line",
    "performance_status",
    "histology",
    "castration_status",
    "comorbidity",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Biomarker(_Strict):
    name: str = Field(
        description="Canonical marker name: HER2, ER, PR, EGFR, ALK, ROS1, KRAS, PD-L1, MSI, BRAF, BRCA1, BRCA2, HRD, NRAS, Ki-67 ..."
    )
    status: BiomarkerStatus
    result: str = Field(description="The result as reported, e.g. 'IHC 3+', 'exon 19 deletion', 'TPS 80%'.")
    method: str | None = Field(default=None, description="IHC, FISH, NGS, PCR ...")
    date: date


class Resection(_Strict):
    procedure: str = Field(description="e.g. 'pancreaticoduodenectomy (Whipple)', 'right hemicolectomy'.")
    date: date
    margin: str | None = Field(default=None, description="R0, R1, R2")
    pathology: str | None = Field(default=None, description="Pathologic stage and key findings, e.g. 'ypT2N1 (3/18 LN)'.")
    nodes_positive: int | None = Field(default=None, ge=0, description="Regional lymph nodes with metastasis (the pN is computed from it).")
    nodes_examined: int | None = Field(default=None, ge=0, description="Regional lymph nodes examined.")


class TreatmentLine(_Strict):
    regimen: str
    setting: str = Field(description="neoadjuvant, adjuvant, first-line metastatic, second-line ...")
    start: date
    end: date | None = None
    outcome: Literal["ongoing", "completed", "progression", "toxicity", "stopped"] = "completed"
    note: str | None = None


class Medication(_Strict):
    name: str
    dose: str
    start: date | None = None
    indication: str | None = None


class LabResult(_Strict):
    date: date
    name: str
    value: float
    unit: str
    flag: Literal["H", "L", ""] = ""


class Vitals(_Strict):
    date: date
    systolic: int
    diastolic: int
    heart_rate: int
    temperature_c: float
    weight_kg: float
    spo2: int


class Encounter(_Strict):
    date: date
    kind: str = Field(description="e.g. 'Medical oncology consult', 'Surgical oncology f/u', 'Radiology'.")
    author: str
    note: str


class PatientRecord(_Strict):
    """The structured chart a packet is rendered from."""

    name: str = Field(description="Synthetic name; never a real patient.")
    mrn: str = Field(description="Synthetic medical record number.")
    histology: str
    primary_site: str
    diagnosis_date: date
    tnm: str
    metastatic_sites: list[str] = Field(default_factory=list)
    metastasis_date: date | None = Field(
        default=None,
        description="When distant metastases were first documented, if after the diagnosis (a metastatic recurrence, or "
        "new metastases on a later scan); before it the disease was stage `initial_stage`. None: metastatic from the "
        "diagnosis, or never.",
    )
    initial_stage: str | None = Field(
        default=None,
        pattern=r"^(0|I|II|III)[A-C]?[0-9]?$",
        description="AJCC stage group at the first diagnosis when distant metastases came later (`metastasis_date`).",
    )
    ecog: int = Field(ge=0, le=4)
    castration_status: Literal["sensitive", "resistant"] | None = None
    menopausal_status: Literal["premenopausal", "postmenopausal"] | None = Field(
        default=None,
        description="Breast cancer: decides the endocrine therapy (an aromatase inhibitor before menopause needs ovarian suppression).",
    )
    biomarkers: list[Biomarker]
    resection: Resection | None = None
    treatment_lines: list[TreatmentLine] = Field(default_factory=list)
    medications: list[Medication] = Field(default_factory=list)
    allergies: list[str] = Field(default_factory=list)
    comorbidities: list[str] = Field(default_factory=list)
    labs: list[LabResult] = Field(default_factory=list)
    vitals: list[Vitals] = Field(default_factory=list)
    encounters: list[Encounter] = Field(default_factory=list)
    board_question: str


class ConsensusTreatment(_Strict):
    """A ground-truth tumor-board recommendation with its consensus label."""

    treatment: str = Field(description="As a tumor board would write it, e.g. 'adjuvant capecitabine'.")
    label: ConsensusLabel
    driver: DecisionDriver | None = Field(
        default=None, description="The decision driver the label follows (required for the bundled cohort; optional for user cases)."
    )
    rationale: str | None = Field(
        default=None, min_length=10, description="One line naming the guideline logic (optional for user cases)."
    )
    match: list[str] | None = Field(
        default=None,
        description="Lexicon concept ids that must all appear in one recommendation for CMS to count it as "
        "covered; derived from `treatment` through the lexicon when omitted.",
    )


class Case(_Strict):
    """One tumor-board case: key facts, the ten-section packet and its consensus treatments."""

    case_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    cancer_type: CancerType
    sex: Literal["F", "M"]
    age: int = Field(ge=18, le=100)
    staging_system: StagingSystem = Field(
        default="ajcc", description="ajcc (the default), figo, who_cns, masaoka_koga, testicular_s or none (issue 43)."
    )
    stage: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 .\-]{0,19}$",
        description="The stage in `staging_system`: an AJCC/FIGO group ('IIIA', 'IV'), a WHO CNS grade ('grade 4'), a "
        "Masaoka-Koga stage, or 'none' (a tumour that is graded, not staged).",
    )
    metastatic: bool
    resected: bool
    prior_lines: int = Field(ge=0, description="Lines of systemic therapy given for advanced/metastatic disease.")
    biomarkers: dict[str, MarkerValue] = Field(
        description="Canonical marker name -> status, or the percent as reported for percent-valued markers "
        "(Ki-67, PD-L1, ER, PR: '45%', '<1%')."
    )
    # The years the chart-date reader reads (catalog/css/dates.py: 19xx and 20xx): a board dated outside them would place
    # its dated insertions on dates no reader finds (or, near 0001 or 9999, outside the calendar).
    board_date: date = Field(ge=date(1900, 1, 1), le=date(2099, 12, 31),
                             description="Date of the tumor board; dated insertions are placed relative to it.")
    sections: dict[SectionName, str]
    consensus: list[ConsensusTreatment] = Field(min_length=1)
    record: PatientRecord | None = None
    source: str = Field(default="synthetic", description="Provenance; only synthetic data belongs in this repo.")

    @model_serializer(mode="wrap")
    def _default_system_unwritten(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The default (AJCC) is not written: cases files written before issue 43 and the bundled cohort stay byte-identical.
        data = handler(self)
        if data.get("staging_system") == "ajcc":
            del data["staging_system"]
        return data

    @field_validator("stage")
    @classmethod
    def _stage_in_its_system(cls, stage: str, info: ValidationInfo) -> str:
        system = info.data.get("staging_system", "ajcc")
        if system in ("ajcc", "figo") and not re.fullmatch(STAGE_GROUP, stage):
            raise ValueError(
                f"{stage!r} is not an {system.upper()} stage group (0, I-IV with A-C); for a tumour staged otherwise set "
                f"staging_system to one of {', '.join(STAGING_SYSTEMS)} ('none' with stage 'none' when it is not staged)"
            )
        return stage

    @model_validator(mode="after")
    def _coherent(self) -> Case:
        missing = [name for name in SECTIONS if name not in self.sections]
        if missing:
            raise ValueError(f"sections missing: {', '.join(missing)}")
        if self.cancer_type == "prostate" and self.sex != "M":
            raise ValueError(f"case '{self.case_id}', field 'sex': prostate cancer needs sex M (got {self.sex})")
        if self.cancer_type == "ovarian" and self.sex != "F":
            raise ValueError(f"case '{self.case_id}', field 'sex': ovarian cancer needs sex F (got {self.sex})")
        # Stage IVA head and neck, IVB anaplastic thyroid, IVA cervix ... are locoregional (STAGE_METASTATIC).
        problem = stage_problem(self.case_id, self.cancer_type, self.stage, self.metastatic) if self.staging_system in (
            "ajcc", "figo") else None
        if problem:
            raise ValueError(problem)
        if self.record is not None:
            if (self.record.resection is not None) != self.resected:
                raise ValueError("resected disagrees with record.resection")
            if self.record.castration_status is not None and self.cancer_type != "prostate":
                raise ValueError("castration_status set on a non-prostate record")
            if (self.record.metastasis_date is None) != (self.record.initial_stage is None):
                raise ValueError(
                    "record.metastasis_date and record.initial_stage are given together (metastases found after the diagnosis)"
                )
            if self.record.metastasis_date is not None and not self.metastatic:
                raise ValueError("record.metastasis_date on a case that is not metastatic")
        return self

    def marker_status(self, name: str) -> BiomarkerStatus:
        """A marker's status for applicability filters ('not_tested' when absent).

        A percent value gets its status from `PERCENT_STATUS`; a percent-valued marker with
        no cut-off there (Ki-67) counts as 'equivocal': tested, but no filter reads it.
        """
        value = self.biomarkers.get(name, "not_tested")
        if not value.endswith("%"):
            return value  # type: ignore[return-value]
        number = float(re.sub(r"[^\d.]", "", value))
        if value.lstrip().startswith("<") and number <= 1:
            number = 0.0
        cuts = PERCENT_STATUS.get(name)
        if cuts is None:
            return "equivocal"
        positive_at, negative_below = cuts
        if number >= positive_at:
            return "positive"
        if number < negative_below:
            return "negative"
        return "equivocal"

    @property
    def split(self) -> Literal["dev", "test"]:
        return case_split(self.case_id)

    @property
    def packet(self) -> str:
        return render_sections(self.sections)


def case_split(case_id: str) -> Literal["dev", "test"]:
    """Fixed dev/test split from a hash of the case id: 30% dev, 70% test.

    Hashing the id (not the row order) keeps a case in the same split when a cohort
    is extended or a user's file is reordered.
    """
    bucket = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % 100
    return "dev" if bucket < 30 else "test"


def render_sections(sections: dict[str, str], order: tuple[str, ...] = SECTIONS) -> str:
    """Join chart sections into one packet with a header per section."""
    parts = []
    for name in order:
        if name in sections:
            parts.append(f"=== {name.upper()} ===\n{sections[name].strip()}\n")
    return "\n".join(parts)


def load_cases(path: str | Path) -> list[Case]:
    """Load and validate a JSONL file of cases; errors name the file, line/case id and field."""
    return load_jsonl(path, Case, "case_id")


def _records(path: str | Path, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a cases JSONL file through the bounded loader; an unreadable line is a problem."""
    for n, line in enumerate(split_records(read_text_checked(path)), 1):
        if not line.strip():
            continue
        try:
            yield n, load_json_line(line, path, n)
        except CatalogError as ex:
            problems.append(f"line {n}: {ex.detail.replace('not valid JSON', 'not JSON', 1)}")


def case_problems(path: str | Path) -> list[str]:
    """Every problem of a cases JSONL file, all lines checked in one run (`clinical-cf cases validate`).

    `load_cases` stops at the first bad case; a user fixing a file wants the whole list at once.
    """
    problems: list[str] = []
    seen: dict[str, int] = {}
    for n, raw in _records(path, problems):
        cid = raw.get("case_id") if isinstance(raw, dict) else None
        where = f"line {n}" + (f" (case '{cid}')" if cid else "")
        if not isinstance(raw, dict):
            problems.append(f"{where}: a case is a JSON object")
            continue
        try:
            validate_strict(Case, raw)
        except ValidationError as ex:
            for e in ex.errors():
                message = e["msg"].removeprefix("Value error, ")
                if not e["loc"] and message.startswith("case '"):
                    problems.append(f"line {n}: {message}")  # a whole-case rule names its case, field and allowed values
                    continue
                field = ".".join(map(str, e["loc"])) or "(case)"
                got = e.get("input")
                shown = f" (got {got!r})" if isinstance(got, (str, int, float, bool)) else ""
                problems.append(f"{where}, field '{field}': {e['msg']}{shown}")
        if cid in seen:
            problems.append(f"{where}: duplicate case_id (first on line {seen[cid]})")
        elif cid:
            seen[cid] = n
    return problems


def case_notes(path: str | Path) -> list[str]:
    """What validation read as something else in a cases file: each synonym of a cancer type, with its line and case."""
    notes: list[str] = []
    for n, raw in _records(path, []):
        note = cancer_type_note(raw.get("cancer_type")) if isinstance(raw, dict) else None
        if note:
            cid = raw.get("case_id")
            notes.append(f"line {n}" + (f" (case '{cid}')" if cid else "") + f", field 'cancer_type': {note}")
    return notes


def case_json_schema() -> dict:
    """JSON Schema for one line of a cases file."""
    return Case.model_json_schema()
