"""A round-trip corpus: records rendered as packets in styles, languages and structures, for the importer to read back.

Issue 43. A record (`Truth`) holds what a board decides on: the primary's type (with its histology, ICD-10 and ICD-O
codes, and a meeting whose name may name another organ: an anal SCC at the "colorectal MDT"), the patient's sex, the
stage at diagnosis and the current one, every reported marker with its status, the board dates (a previous meeting and
the latest), a diagnostic biopsy or excision biopsy apart from the definitive resection, and the board's question and
its stated outcome. `render` writes it as a letter or a worksheet (English, French, German, Spanish, Italian), a CSV
export or a FHIR JSON bundle; `score` compares what `import_packet` pre-fills with the record, field by field.

The phrase tables here are the test's own (a clinician's wording in each language), written independently of the
importer's rule sets so the corpus can find what those miss. Records come from the bundled cohort (`bundled_truths`)
and from a generator over cancer types outside it (`truths()`, a Hypothesis strategy).
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from hypothesis import strategies as st

from clinical_cf.catalog.css.importer import import_packet

LANGS = ("en", "fr", "de", "es", "it")
STRUCTURES = ("letter", "worksheet", "csv", "fhir")


@dataclass(frozen=True)
class TypeSpec:
    name: str  # the canonical type the importer should pre-fill
    histology: dict[str, str]
    icd10: str
    icdo: str
    mdt: str  # the meeting's name (deliberately an organ word of another type for some)
    markers: tuple[str, ...]
    staging: str  # "ajcc" or a system with no AJCC group ("who_cns")
    sex: str | None = None  # a sex-specific type
    biopsy: dict[str, str] = field(default_factory=dict)  # the diagnostic procedure, per language
    resection: dict[str, str] = field(default_factory=dict)  # the definitive operation, per language


EXCISION_BIOPSY = {"en": "excision biopsy", "fr": "biopsie-exérèse", "de": "Exzisionsbiopsie", "es": "biopsia escisional",
                   "it": "biopsia escissionale"}
CORE_BIOPSY = {"en": "core needle biopsy", "fr": "biopsie à l'aiguille", "de": "Stanzbiopsie", "es": "biopsia con aguja gruesa",
               "it": "biopsia con ago tranciante"}
WLE = {"en": "wide local excision", "fr": "exérèse élargie", "de": "Nachexzision mit Sicherheitsabstand",
       "es": "ampliación de márgenes (escisión local amplia)", "it": "ampliazione dei margini (escissione locale ampia)"}

TYPES: dict[str, TypeSpec] = {t.name: t for t in (
    TypeSpec("glioblastoma", {"en": "glioblastoma, WHO CNS grade 4, left temporal lobe",
                              "fr": "glioblastome, grade 4 OMS SNC, lobe temporal gauche",
                              "de": "Glioblastom, ZNS WHO-Grad 4, Temporallappen links",
                              "es": "glioblastoma, grado 4 OMS SNC, lóbulo temporal izquierdo",
                              "it": "glioblastoma, grado 4 OMS SNC, lobo temporale sinistro"},
             "C71.2", "9440/3", "neuro-oncology MDT", ("IDH1", "MGMT", "BRAF"), "who_cns",
             biopsy={"en": "stereotactic biopsy", "fr": "biopsie stéréotaxique", "de": "stereotaktische Biopsie",
                     "es": "biopsia estereotáctica", "it": "biopsia stereotassica"},
             resection={"en": "gross total resection", "fr": "exérèse complète", "de": "Totalresektion",
                        "es": "resección completa", "it": "resezione completa"}),
    TypeSpec("sclc", {"en": "small-cell lung carcinoma, right upper lobe", "fr": "carcinome pulmonaire à petites cellules",
                      "de": "kleinzelliges Lungenkarzinom", "es": "carcinoma de pulmón de células pequeñas",
                      "it": "carcinoma polmonare a piccole cellule"},
             "C34.1", "8041/3", "thoracic MDT", ("PD-L1", "DLL3"), "ajcc", biopsy={"en": "EBUS-TBNA", "fr": "EBUS", "de": "EBUS",
                                                                                   "es": "EBUS", "it": "EBUS"},
             resection={"en": "right upper lobectomy", "fr": "lobectomie supérieure droite", "de": "Oberlappenresektion rechts",
                        "es": "lobectomía superior derecha", "it": "lobectomia superiore destra"}),
    TypeSpec("neuroendocrine", {"en": "well-differentiated neuroendocrine tumour of the ileum, grade 2",
                                "fr": "tumeur neuroendocrine bien différenciée de l'iléon, grade 2",
                                "de": "gut differenzierter neuroendokriner Tumor des Ileums, G2",
                                "es": "tumor neuroendocrino bien diferenciado de íleon, grado 2",
                                "it": "tumore neuroendocrino ben differenziato dell'ileo, grado 2"},
             "C17.2", "8240/3", "upper GI MDT", ("SSTR", "Ki-67"), "ajcc", biopsy=CORE_BIOPSY,
             resection={"en": "small bowel resection", "fr": "résection iléale", "de": "Ileumresektion", "es": "resección ileal",
                        "it": "resezione ileale"}),
    TypeSpec("merkel_cell_carcinoma", {"en": "Merkel cell carcinoma of the left cheek", "fr": "carcinome de Merkel de la joue gauche",
                                       "de": "Merkelzellkarzinom der linken Wange", "es": "carcinoma de células de Merkel de la mejilla izquierda",
                                       "it": "carcinoma a cellule di Merkel della guancia sinistra"},
             "C44.3", "8247/3", "skin MDT", ("MCPyV", "PD-L1"), "ajcc", biopsy=EXCISION_BIOPSY, resection=WLE),
    TypeSpec("anal", {"en": "squamous cell carcinoma of the anal canal", "fr": "carcinome épidermoïde du canal anal",
                      "de": "Plattenepithelkarzinom des Analkanals", "es": "carcinoma escamoso del canal anal",
                      "it": "carcinoma squamoso del canale anale"},
             "C21.1", "8070/3", "colorectal MDT", ("HPV", "p16"), "ajcc", biopsy=CORE_BIOPSY,
             resection={"en": "abdominoperineal resection", "fr": "amputation abdomino-périnéale",
                        "de": "abdominoperineale Rektumexstirpation", "es": "amputación abdominoperineal",
                        "it": "amputazione addomino-perineale"}),
    TypeSpec("breast", {"en": "invasive ductal carcinoma of the left breast", "fr": "carcinome canalaire infiltrant du sein gauche",
                        "de": "invasives duktales Mammakarzinom links", "es": "carcinoma ductal infiltrante de mama izquierda",
                        "it": "carcinoma duttale infiltrante della mammella sinistra"},
             "C50.4", "8500/3", "breast MDT", ("ER", "PR", "HER2"), "ajcc", "F", CORE_BIOPSY,
             {"en": "left mastectomy", "fr": "mastectomie gauche", "de": "Mastektomie links", "es": "mastectomía izquierda",
              "it": "mastectomia sinistra"}),
    TypeSpec("nsclc", {"en": "adenocarcinoma of the lung", "fr": "adénocarcinome pulmonaire", "de": "Adenokarzinom der Lunge",
                       "es": "adenocarcinoma de pulmón", "it": "adenocarcinoma polmonare"},
             "C34.3", "8140/3", "lung MDT", ("EGFR", "ALK", "KRAS", "PD-L1"), "ajcc", biopsy={"en": "EBUS-TBNA", "fr": "EBUS",
                                                                                              "de": "EBUS", "es": "EBUS", "it": "EBUS"},
             resection={"en": "left lower lobectomy", "fr": "lobectomie inférieure gauche", "de": "Unterlappenresektion links",
                        "es": "lobectomía inferior izquierda", "it": "lobectomia inferiore sinistra"}),
    TypeSpec("colorectal", {"en": "adenocarcinoma of the sigmoid colon", "fr": "adénocarcinome du côlon sigmoïde",
                            "de": "Adenokarzinom des Sigmas", "es": "adenocarcinoma de colon sigmoide",
                            "it": "adenocarcinoma del colon sigmoideo"},
             "C18.7", "8140/3", "colorectal MDT", ("KRAS", "BRAF", "MSI"), "ajcc", biopsy={"en": "colonoscopy with biopsy",
                                                                                          "fr": "coloscopie avec biopsies",
                                                                                          "de": "Koloskopie mit Biopsie",
                                                                                          "es": "colonoscopia con biopsia",
                                                                                          "it": "colonscopia con biopsia"},
             resection={"en": "sigmoid colectomy", "fr": "colectomie sigmoïdienne", "de": "Sigmaresektion", "es": "sigmoidectomía",
                        "it": "sigmoidectomia"}),
    TypeSpec("melanoma", {"en": "cutaneous melanoma of the back", "fr": "mélanome cutané du dos", "de": "kutanes Melanom am Rücken",
                          "es": "melanoma cutáneo de la espalda", "it": "melanoma cutaneo del dorso"},
             "C43.5", "8720/3", "skin MDT", ("BRAF", "NRAS"), "ajcc", biopsy=EXCISION_BIOPSY, resection=WLE),
)}
BUNDLED_TYPES = ("breast", "nsclc", "colorectal", "melanoma")  # bundled types the corpus renders (others: a letter only)
OTHER_TYPES = ("glioblastoma", "sclc", "neuroendocrine", "merkel_cell_carcinoma", "anal")

# -------------------------------------------------------------------------- phrases, per language

POSITIVE = {
    "en": ("{m} positive", "{m} mutation detected", "{m}: positive"),
    "fr": ("{m} positif", "{m} muté", "présence d'une mutation {m}"),
    "de": ("{m} positiv", "{m}-Mutation nachgewiesen", "{m}: positiv"),
    "es": ("{m} positivo", "{m} mutado", "{m}: positivo"),
    "it": ("{m} positivo", "{m} mutato", "{m}: positivo"),
}
NEGATIVE = {
    "en": ("{m} negative", "{m}: not detected", "{m} wild-type", "no {m} mutation", "{m}: no mutation detected"),
    "fr": ("{m} négatif", "{m} non muté (wild-type)", "absence de mutation {m}", "{m} : négatif", "{m} : absence de mutation"),
    "de": ("{m} negativ", "kein Nachweis einer {m}-Mutation", "{m} Wildtyp", "{m}: negativ", "{m}: kein Nachweis einer Mutation (Wildtyp)"),
    "es": ("{m} negativo", "{m} no mutado", "sin mutación de {m}", "{m}: negativo", "{m}: sin mutación"),
    "it": ("{m} negativo", "{m} non mutato", "assenza di mutazione {m}", "{m}: negativo", "{m}: assenza di mutazioni"),
}
PENDING = {"en": "{m}: result pending", "fr": "{m} : résultat en attente", "de": "{m}: Ergebnis ausstehend",
           "es": "{m}: resultado pendiente", "it": "{m}: risultato in attesa"}
# Markers whose status words are their own: methylation, an imaging receptor, a virus, an IHC surrogate.
OWN_WORDS = {
    "MGMT": ({"en": "MGMT promoter methylated", "fr": "promoteur MGMT méthylé", "de": "MGMT-Promotor methyliert",
              "es": "promotor de MGMT metilado", "it": "promotore MGMT metilato"},
             {"en": "MGMT promoter unmethylated", "fr": "promoteur MGMT non méthylé", "de": "MGMT-Promotor unmethyliert",
              "es": "promotor de MGMT no metilado", "it": "promotore MGMT non metilato"}),
    "SSTR": ({"en": "SSTR positive (Ga-68 DOTATATE PET avid)", "fr": "TEP-DOTATOC : SSTR positif", "de": "SSTR positiv im DOTATATE-PET",
              "es": "SSTR positivo en PET-DOTATATE", "it": "SSTR positivo alla PET-DOTATATE"},
             {"en": "SSTR negative on Ga-68 DOTATATE PET", "fr": "TEP-DOTATOC : SSTR négatif", "de": "SSTR negativ im DOTATATE-PET",
              "es": "SSTR negativo en PET-DOTATATE", "it": "SSTR negativo alla PET-DOTATATE"}),
}
SEX_LINE = {
    "en": {"F": "Sex: Female", "M": "Sex: Male"}, "fr": {"F": "Sexe : féminin", "M": "Sexe : masculin"},
    "de": {"F": "Geschlecht: weiblich", "M": "Geschlecht: männlich"}, "es": {"F": "Sexo: mujer", "M": "Sexo: varón"},
    "it": {"F": "Sesso: femminile", "M": "Sesso: maschile"},
}
WORDS = {  # labels and sentence frames
    "en": dict(dx="Diagnosis", stage_dx="Stage at diagnosis", stage_now="Current stage", mdt_prev="Previously discussed at the",
               on="on", q="Question for the board", outcome="Outcome", markers="Molecular results", proc="Procedures",
               stage_word="stage", none_stage="not applicable (graded, not staged)", grade="WHO CNS grade 4"),
    "fr": dict(dx="Diagnostic", stage_dx="Stade au diagnostic", stage_now="Stade actuel", mdt_prev="Déjà discuté en RCP",
               on="le", q="Question posée à la RCP", outcome="Décision de la RCP", markers="Biologie moléculaire", proc="Actes",
               stage_word="stade", none_stage="sans objet (grade OMS, pas de stade)", grade="grade 4 OMS SNC"),
    "de": dict(dx="Diagnose", stage_dx="Stadium bei Erstdiagnose", stage_now="Aktuelles Stadium", mdt_prev="Bereits besprochen im Tumorboard",
               on="am", q="Fragestellung an das Tumorboard", outcome="Beschluss des Tumorboards", markers="Molekularpathologie",
               proc="Eingriffe", stage_word="Stadium", none_stage="entfällt (ZNS WHO-Grad, kein Stadium)", grade="ZNS WHO-Grad 4"),
    "es": dict(dx="Diagnóstico", stage_dx="Estadio al diagnóstico", stage_now="Estadio actual", mdt_prev="Ya presentado en el comité",
               on="el", q="Pregunta al comité", outcome="Decisión del comité", markers="Biología molecular", proc="Procedimientos",
               stage_word="estadio", none_stage="no aplica (grado OMS, sin estadio)", grade="grado 4 OMS SNC"),
    "it": dict(dx="Diagnosi", stage_dx="Stadio alla diagnosi", stage_now="Stadio attuale", mdt_prev="Già discusso al GOM",
               on="il", q="Quesito al GOM", outcome="Decisione del GOM", markers="Biologia molecolare", proc="Procedure",
               stage_word="stadio", none_stage="non applicabile (grado OMS, nessuno stadio)", grade="grado 4 OMS SNC"),
}
QUESTIONS = {"en": "surgery or chemoradiotherapy?", "fr": "chirurgie ou radiochimiothérapie ?", "de": "Operation oder Radiochemotherapie?",
             "es": "¿cirugía o quimiorradioterapia?", "it": "chirurgia o radiochemioterapia?"}


@dataclass(frozen=True)
class Truth:
    """What the packet states and the importer should read back."""

    case_id: str
    cancer_type: str
    sex: str
    stage_dx: str | None  # None: a type with no AJCC stage
    stage_now: str | None
    markers: dict[str, str]  # name -> positive / negative / pending
    board_date: date
    previous_board: date | None
    biopsy_date: date
    resected: bool
    outcome: str
    lang: str = "en"
    structure: str = "letter"
    wording: int = 0  # which phrase of each table

    @property
    def spec(self) -> TypeSpec:
        return TYPES[self.cancer_type]


def _marker_phrase(t: Truth, name: str, status: str, i: int) -> str:
    if name in OWN_WORDS and status in ("positive", "negative"):
        return OWN_WORDS[name][0 if status == "positive" else 1][t.lang]
    if status == "pending":
        return PENDING[t.lang].format(m=name)
    table = (POSITIVE if status == "positive" else NEGATIVE)[t.lang]
    return table[(t.wording + i) % len(table)].format(m=name)


def _d(day: date) -> str:
    return day.isoformat()


def _stage_text(t: Truth, stage: str | None) -> str:
    w = WORDS[t.lang]
    return w["none_stage"] if stage is None else f"{w['stage_word']} {stage}"


def _statements(t: Truth) -> dict[str, list[str]]:
    """The record as labelled statements, per part, in the record's language."""
    w, spec = WORDS[t.lang], t.spec
    dx = spec.histology[t.lang] + (f", {w['grade']}" if spec.staging == "who_cns" and w["grade"] not in spec.histology[t.lang] else "")
    procs = [f"{_d(t.biopsy_date)}: {spec.biopsy[t.lang]}"]
    if t.resected:
        procs.append(f"{_d(t.biopsy_date + timedelta(days=21))}: {spec.resection[t.lang]}")
    boards = []
    if t.previous_board:
        boards.append(f"{w['mdt_prev']} ({spec.mdt}) {w['on']} {_d(t.previous_board)}.")
    return {
        "demographics": [SEX_LINE[t.lang][t.sex]],
        "diagnoses": [f"{w['dx']}: {dx} (ICD-10 {spec.icd10}; ICD-O-3 {spec.icdo})",
                      f"{w['stage_dx']}: {_stage_text(t, t.stage_dx)} ({_d(t.biopsy_date)})",
                      f"{w['stage_now']}: {_stage_text(t, t.stage_now)}"],
        "biomarkers": [_marker_phrase(t, name, status, i) for i, (name, status) in enumerate(t.markers.items())],
        "procedures": procs,
        "boards": boards,
        "question": [f"{spec.mdt} {_d(t.board_date)}. {w['q']}: {QUESTIONS[t.lang]}", f"{w['outcome']}: {t.outcome}"],
    }


def _letter(t: Truth) -> str:
    s, w = _statements(t), WORDS[t.lang]
    body = [*s["demographics"], "", *s["boards"], "", *s["diagnoses"], "", f"{w['markers']}:",
            *[f"- {m}" for m in s["biomarkers"]], "", f"{w['proc']}:", *s["procedures"], "", *s["question"]]
    return "\n".join(body) + "\n"


def _worksheet(t: Truth) -> str:
    s, w = _statements(t), WORDS[t.lang]
    rows = ["== " + t.spec.mdt.upper() + " WORKSHEET ==", *s["demographics"], *s["diagnoses"],
            f"{w['markers']}: " + "; ".join(s["biomarkers"]), *[f"{w['proc']}: {p}" for p in s["procedures"]],
            *s["boards"], *s["question"]]
    return "\n".join(rows) + "\n"


def _csv(t: Truth) -> str:
    s, w = _statements(t), WORDS[t.lang]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["field", "value"])
    writer.writerow(["sex", t.sex])
    for line in s["diagnoses"]:
        key, _, value = line.partition(": ")
        writer.writerow([key, value])
    for i, m in enumerate(s["biomarkers"]):
        writer.writerow([f"{w['markers']} {i + 1}", m])
    for p in s["procedures"]:
        writer.writerow([w["proc"], p])
    if t.previous_board:
        writer.writerow(["MDT", f"{t.spec.mdt} {_d(t.previous_board)}"])
    writer.writerow(["MDT", f"{t.spec.mdt} {_d(t.board_date)}"])
    writer.writerow([w["q"], QUESTIONS[t.lang]])
    writer.writerow([w["outcome"], t.outcome])
    return out.getvalue()


def _fhir(t: Truth) -> str:
    s, w, spec = _statements(t), WORDS[t.lang], t.spec
    subject = {"reference": "Patient/p1"}
    entries: list[dict] = [{"resource": {"resourceType": "Patient", "id": "p1", "gender": {"F": "female", "M": "male"}[t.sex]}}]
    entries.append({"resource": {
        "resourceType": "Condition", "id": "c1", "subject": subject,
        "code": {"coding": [{"system": "http://hl7.org/fhir/sid/icd-10", "code": spec.icd10},
                            {"system": "urn:oid:2.16.840.1.113883.6.43.1", "code": spec.icdo}],
                 "text": spec.histology[t.lang]},
        "onsetDateTime": _d(t.biopsy_date),
        "stage": [{"summary": {"text": _stage_text(t, t.stage_dx)}, "type": {"text": w["stage_dx"]}},
                  {"summary": {"text": _stage_text(t, t.stage_now)}, "type": {"text": w["stage_now"]}}]}})
    for i, phrase in enumerate(s["biomarkers"]):
        name = list(t.markers)[i]
        entries.append({"resource": {"resourceType": "Observation", "id": f"o{i}", "status": "final", "subject": subject,
                                     "code": {"text": name}, "valueString": phrase}})
    for i, p in enumerate(s["procedures"]):
        day, _, what = p.partition(": ")
        entries.append({"resource": {"resourceType": "Procedure", "id": f"pr{i}", "status": "completed", "subject": subject,
                                     "code": {"text": what}, "performedDateTime": day}})
    meetings = [(t.previous_board, "e0")] if t.previous_board else []
    for day, rid in [*meetings, (t.board_date, "e1")]:
        entries.append({"resource": {"resourceType": "Encounter", "id": rid, "status": "finished", "subject": subject,
                                     "type": [{"text": spec.mdt}], "period": {"start": _d(day)}}})
    entries.append({"resource": {"resourceType": "CarePlan", "id": "cp1", "status": "active", "intent": "plan", "subject": subject,
                                 "title": f"{w['q']}: {QUESTIONS[t.lang]}", "description": f"{w['outcome']}: {t.outcome}"}})
    return json.dumps({"resourceType": "Bundle", "type": "collection", "entry": entries}, ensure_ascii=False, indent=2)


RENDER = {"letter": _letter, "worksheet": _worksheet, "csv": _csv, "fhir": _fhir}


def render(t: Truth) -> str:
    return RENDER[t.structure](t)


# -------------------------------------------------------------------------- records

OUTCOMES = ("concurrent chemoradiotherapy", "temozolomide with radiotherapy", "carboplatin etoposide", "surveillance",
            "adjuvant radiotherapy")


@st.composite
def truths(draw, types: tuple[str, ...] = OTHER_TYPES + BUNDLED_TYPES) -> Truth:
    name = draw(st.sampled_from(types))
    spec = TYPES[name]
    markers = {m: draw(st.sampled_from(("positive", "negative", "negative", "pending"))) for m in spec.markers}
    if "Ki-67" in markers:
        markers.pop("Ki-67")
    board = draw(st.dates(date(2022, 1, 1), date(2027, 12, 31)))
    if spec.staging == "ajcc":
        stage_dx = draw(st.sampled_from(("I", "IIA", "IIB", "IIIA", "IIIB")))
        stage_now = draw(st.sampled_from((stage_dx, "IV")))
    else:
        stage_dx = stage_now = None
    return Truth(
        case_id=f"rt-{name}",
        cancer_type=name,
        sex=spec.sex or draw(st.sampled_from("FM")),
        stage_dx=stage_dx,
        stage_now=stage_now,
        markers=markers,
        board_date=board,
        previous_board=draw(st.one_of(st.none(), st.just(board - timedelta(days=draw(st.integers(60, 400)))))),
        biopsy_date=board - timedelta(days=draw(st.integers(30, 50))),
        resected=draw(st.booleans()),
        outcome=draw(st.sampled_from(OUTCOMES)),
        lang=draw(st.sampled_from(LANGS)),
        structure=draw(st.sampled_from(STRUCTURES)),
        wording=draw(st.integers(0, 4)),
    )


def bundled_truths(cases) -> list[Truth]:
    """The bundled cohort's records, for the types the corpus can phrase, as truths (one per case; a language each)."""
    out = []
    for n, case in enumerate(cases):
        if case.cancer_type not in BUNDLED_TYPES:
            continue
        spec = TYPES[case.cancer_type]
        markers = {k: v for k, v in case.biomarkers.items() if k in spec.markers and v in ("positive", "negative")}
        stage_dx = case.record.initial_stage if case.record is not None and case.record.initial_stage else case.stage
        out.append(Truth(case.case_id, case.cancer_type, case.sex, stage_dx, case.stage, markers, case.board_date,
                         case.board_date - timedelta(days=200 + n % 90), case.board_date - timedelta(days=40), case.resected,
                         case.consensus[0].treatment, LANGS[n % len(LANGS)], STRUCTURES[n // len(LANGS) % len(STRUCTURES)], n % 4))
    return out


# -------------------------------------------------------------------------- scoring


def expected(t: Truth) -> dict[str, object]:
    fields: dict[str, object] = {"cancer_type": t.cancer_type, "sex": t.sex, "stage": t.stage_now, "board_date": _d(t.board_date),
                                 "resected": t.resected, "consensus": t.outcome, "metastatic": (t.stage_now or "").startswith("IV")}
    for name, status in t.markers.items():
        fields[f"biomarkers.{name}"] = None if status == "pending" else status
    return fields


def read_back(report) -> dict[str, object]:
    """What the import pre-filled, per field (a question's value; the draft's consensus)."""
    got: dict[str, object] = {}
    for key in ("cancer_type", "stage", "board_date", "resected", "metastatic"):
        got[key] = (report.questions.get(key) or {}).get("value")
    got["sex"] = report.draft.get("sex")
    consensus = report.draft.get("consensus") or []
    got["consensus"] = consensus[0]["treatment"] if consensus else None
    for key, q in report.questions.items():
        if key.startswith("biomarkers."):
            got[key] = q.get("value")
    return got


def score(t: Truth, report) -> dict[str, str]:
    """Per field: 'ok', 'asked' (left for the user: no pre-fill) or 'wrong' (a pre-fill that is not the record's)."""
    want, got = expected(t), read_back(report)
    verdicts = {}
    for key, value in want.items():
        have = got.get(key)
        if key == "consensus":
            ok = isinstance(have, str) and value.lower() in have.lower() and "?" not in have  # type: ignore[union-attr]
        elif key == "stage" and value is None:
            ok = have in (None, "none", "not_applicable")
        elif key.startswith("biomarkers.") and value is None:
            ok = have in (None, "not_tested") or key not in got
        else:
            ok = have == value
        if ok:
            verdicts[key] = "ok"
        elif have in (None,) or (key.startswith("biomarkers.") and key not in got):
            verdicts[key] = "missing" if key.startswith("biomarkers.") and key not in got else "asked"
        else:
            verdicts[key] = "wrong"
    return verdicts


def corpus(seed: int = 43) -> list[Truth]:
    """A fixed corpus: every type in every language and structure, the other fields drawn from `seed`."""
    rng = random.Random(seed)
    out = []
    for name in (*OTHER_TYPES, *BUNDLED_TYPES):
        spec = TYPES[name]
        for lang in LANGS:
            for structure in STRUCTURES:
                board = date(2022, 1, 1) + timedelta(days=rng.randrange(0, 2000))
                if spec.staging == "ajcc":
                    stage_dx = rng.choice(("I", "IIA", "IIB", "IIIA", "IIIB"))
                    stage_now = rng.choice((stage_dx, "IV"))
                else:
                    stage_dx = stage_now = None
                markers = {m: rng.choice(("positive", "negative", "negative", "pending")) for m in spec.markers if m != "Ki-67"}
                out.append(Truth(f"rt-{name}-{lang}-{structure}", name, spec.sex or rng.choice("FM"), stage_dx, stage_now, markers,
                                 board, board - timedelta(days=rng.randrange(60, 400)) if rng.random() < 0.7 else None,
                                 board - timedelta(days=rng.randrange(30, 50)), rng.random() < 0.5, rng.choice(OUTCOMES),
                                 lang, structure, rng.randrange(5)))
    return out


def measure(truths_: list[Truth], catalog) -> dict[str, object]:
    """Field accuracy and wrong pre-fills over a corpus: per field and in all."""

    per_field: dict[str, dict[str, int]] = {}
    failures = []
    for t in truths_:
        report = import_packet(render(t), t.case_id, catalog, source=f"{t.structure}/{t.lang}")
        for key, verdict in score(t, report).items():
            group = key if not key.startswith("biomarkers.") else "biomarkers"
            per_field.setdefault(group, {"ok": 0, "asked": 0, "wrong": 0, "missing": 0})[verdict] += 1
            if verdict != "ok":
                failures.append((t.case_id, t.lang, t.structure, key, verdict, expected(t)[key], read_back(report).get(key)))
    total = {v: sum(c[v] for c in per_field.values()) for v in ("ok", "asked", "wrong", "missing")}
    return {"per_field": per_field, "total": total, "accuracy": total["ok"] / max(1, sum(total.values())), "failures": failures}


if __name__ == "__main__":  # python tests/catalog/css/roundtrip_corpus.py: the numbers the report states
    import sys

    from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
    from clinical_cf.catalog.css.interventions import load_catalog
    from clinical_cf.catalog.css.schema import load_cases

    catalog = load_catalog(CATALOG_PATH)
    bundled = bundled_truths(load_cases(CASES_PATH))
    for label, items in (("generated", corpus()), ("bundled", bundled)):
        result = measure(items, catalog)
        print(f"{label}: {len(items)} packets, field accuracy {result['accuracy']:.3f}, totals {result['total']}")
        for group, counts in sorted(result["per_field"].items()):
            print(f"  {group:14} {counts}")
        if "-v" in sys.argv:
            for f in result["failures"]:
                print("   ", f)
