"""Apply an intervention to a case, in either mutation mode.

`regex` (the CSS paper's mode) edits the packet text section by section; a fact stated
in a wording the pattern misses stays unchanged (the paper's "incomplete propagation").
`structured` edits the patient record and re-renders every section from it, so the change
reaches each place that states the fact. Both return a `Packet`; a packet equal to the
original is a no-op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from clinical_cf.catalog.css import staging
from clinical_cf.catalog.css.assertions import OTHER_DISEASE_STAGE
from clinical_cf.catalog.css.dates import Order as DateOrder
from clinical_cf.catalog.css.dates import entry_dates, numeric_order, reformat_dates
from clinical_cf.catalog.css.interventions import (
    STRUCTURED_OP_NAMES,
    DeleteOp,
    DeleteStatementsOp,
    InsertOp,
    Intervention,
    NeutralisePlansOp,
    ReformatDatesOp,
    ReorderOp,
    ReplaceOp,
)
from clinical_cf.catalog.css.invariance import apply_invariance
from clinical_cf.catalog.css.invariants import MARKER_ULN, SCAN_AFTER_RESECTION_DAYS
from clinical_cf.catalog.css.render import REFERENCE_RANGES, clinical_before_sentinel, render_case_sections, seeded_rng
from clinical_cf.catalog.css.residue import implication_hits
from clinical_cf.catalog.css.schema import (
    SECTIONS,
    Biomarker,
    Case,
    Encounter,
    LabResult,
    PatientRecord,
    Resection,
    TreatmentLine,
    render_sections,
)
from clinical_cf.catalog.css.sentences import wrapped_groups


@dataclass(frozen=True)
class Packet:
    """A packet's sections and the order they are presented in."""

    sections: dict[str, str]
    order: tuple[str, ...] = SECTIONS

    @property
    def text(self) -> str:
        return render_sections(self.sections, self.order)

    def same_content(self, other: Packet) -> bool:
        """Whether the two packets say the same in the same order once empty sections are ignored.

        A section-order control on a packet with one non-empty section only moves empty
        headers: it changes nothing a reader sees, so it is a no-op (issue 22).
        """

        def shown(p: Packet) -> list[tuple[str, str]]:
            return [(name, p.sections[name].strip()) for name in p.order if p.sections.get(name, "").strip()]

        return shown(self) == shown(other)


class MutationError(ValueError):
    """An intervention could not be applied to a case (names both)."""


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format_map(values)


def apply_regex(case: Case, intervention: Intervention, packet: Packet | None = None) -> Packet:
    """Apply the intervention's text mutation rules to the case's packet."""
    packet = packet or Packet(dict(case.sections))
    values = intervention.template_values(case)
    sections = dict(packet.sections)
    order = packet.order
    date_order = numeric_order("\n".join(sections.values()))
    for op in intervention.mutation:
        if getattr(op, "cancer_types", None) is not None and case.cancer_type not in op.cancer_types:  # type: ignore[union-attr]
            continue
        if isinstance(op, ReplaceOp | DeleteOp):
            pattern = re.compile(op.pattern)
            replacement = _fill(op.replacement, values) if isinstance(op, ReplaceOp) else ""
            since = _since(case, intervention, op.since)
            for name in op.sections or SECTIONS:
                if name in sections:
                    sections[name] = _edit_lines(
                        sections[name],
                        since,
                        lambda text, pattern=pattern, replacement=replacement: _sub_cancer_stages(pattern, replacement, text),
                        date_order,
                    )
        elif isinstance(op, NeutralisePlansOp | DeleteStatementsOp):
            since = _since(case, intervention, op.since)
            implications = [intervention.implication(n) for n in op.implications]
            plans_only = isinstance(op, NeutralisePlansOp)
            for name in op.sections or SECTIONS:
                if name in sections:
                    sections[name] = _edit_lines(
                        sections[name],
                        since,
                        lambda text, implications=implications, plans_only=plans_only: neutralise_plans(text, implications, plans_only),
                        date_order,
                        whole=True,
                    )
        elif isinstance(op, ReformatDatesOp):
            sections = {name: reformat_dates(text) for name, text in sections.items()}
        elif isinstance(op, InsertOp):
            sections[op.section] = _insert(sections.get(op.section, ""), op, _fill(op.text, values))
        elif isinstance(op, ReorderOp):
            order = tuple(op.order)
    return with_invariance(Packet({k: _tidy(v, packet.sections.get(k, "")) for k, v in sections.items()}, order), case, intervention)


def with_invariance(packet: Packet, case: Case, intervention: Intervention) -> Packet:
    """The packet with the intervention's invariance change applied last (issue 47; untidied: every other byte kept)."""
    op = intervention.invariance
    if op is None:
        return packet
    return Packet(apply_invariance(packet.sections, case.case_id, op.attribute, op.value, op.rate), packet.order)


_STAGE_WORD = re.compile(r"(?i)\s*(?:stage|FIGO|AJCC)\b")


def _sub_cancer_stages(pattern: re.Pattern[str], replacement: str, text: str) -> str:
    """`pattern.sub`, except that a stage of another disease ("CKD stage 3a", "COPD GOLD stage 2") is left as written."""

    def one(m: re.Match[str]) -> str:
        if _STAGE_WORD.match(m.group(0)) and OTHER_DISEASE_STAGE.search(text[max(0, m.start() - 30) : m.start()]):
            return m.group(0)
        return m.expand(replacement)

    return pattern.sub(one, text)


def _since(case: Case, intervention: Intervention, name: str | None) -> date | None:
    return None if name is None else case.board_date + timedelta(days=intervention.dates[name])


def _edit_lines(
    text: str, since: date | None, edit: Callable[[str], str], order: DateOrder | None = None, whole: bool = False
) -> str:
    """Apply `edit` to the whole section, or, with `since`, to each line of an entry dated on/after it.

    With `whole`, a sentence wrapped over several physical lines is edited as one (the edit
    sees the wrapped sentence whole, so it is removed whole, not left broken).
    """
    if since is None:
        return edit(text)
    lines = text.split("\n")
    dated = entry_dates(text, order)
    out = []
    for group in wrapped_groups(text) if whole else [[i] for i in range(len(lines))]:
        if any(dated[i] is None or dated[i] >= since for i in group):  # type: ignore[operator]
            out.append(edit("\n".join(lines[i] for i in group)))
        else:
            out.extend(lines[i] for i in group)
    return "\n".join(out)


PLAN_CUE = re.compile(
    r"(?i)(?:\b(?:plan(?:s|ned|ning)?|recommend\w*|propos\w*|suggest\w*|advis\w*|intend\w*|"
    r"will (?:start|begin|receive|proceed|continue|get|undergo|need)|"
    r"to (?:start|begin|commence|initiate|receive|proceed|continue|undergo|be started)|"
    r"candidate for|eligible for|consider\w*|favou?r\w*|"
    r"for (?:adjuvant|neoadjuvant|definitive|curative|first[- ]line|1L|perioperative|surgery|resection|upfront)|"
    r"scheduled|booked|next steps?|(?:MDT|MDM|board|tumou?r board) (?:outcome|decision|recommendation|consensus|plan)|"
    r"outcome|going forward|offer\w*|aim(?:ing)? for|"
    r"discuss\w* (?:re|regarding|about)?\s*(?:starting|adjuvant|neoadjuvant)|recs?|question|query|view on)\b"
    r"|\bA/P\b|\bP:|->|=>|→|\?\s*\w"
    r"|\b(?:MDT|MDM|tumou?r board)(?:\s+(?:question|outcome))?\s*:)"
)
PLAN_HEADING = re.compile(
    r"(?i)^\W*(?:(?:assessment (?:and|&) )?plan|a/p|impression (?:and|&) plan|recommendations?|proposed (?:plan|management)|"
    r"mdt (?:outcome|recommendation)|board (?:recommendation|outcome)s?|next steps?)\W*$"
)
SENTENCE = re.compile(
    r"(?:[^.;!?\n]|(?<=\d)\.(?=\d)|(?<=\bDr)\.|(?<=\bMr)\.|(?<=\bMrs)\.|(?<=\bMs)\.|(?<=\bProf)\.|(?<=\bvs)\.|(?<=\bSt)\.)*[.;!?]?"
)
"""A sentence: up to . ; ! or ?, not at a decimal point or after a title (Dr., Mrs.)."""
ENTRY_HEADER = re.compile(r"^\s*(?:\[[^\]\n]{6,20}\]|\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4})\s+[^\n]{0,80}(?<![.;])\s*$")
"""A dated entry header without a sentence of its own ("[2024-09-15] Surgical oncology post-op visit - Dr E")."""


CLAUSE = re.compile(r"\([^()]*\)|[^,;()]+|[,;()]")
"""Clauses of a list-like sentence; a parenthesis is one clause ("(0/14)", "(R0 resection)")."""


def _list_like(sentence: str) -> bool:
    """A summary-style sentence (short comma/parenthesis-separated items), cut by clause, not whole."""
    # A parenthesised list ("TCHP (docetaxel, carboplatin, ...)") does not make the sentence a list.
    parts = [p for p in re.split(r"[,;]", re.sub(r"\([^()]*\)", "", sentence)) if p.strip()]
    return len(parts) >= 2 and sum(len(p) for p in parts) / len(parts) < 30


def _cut_clauses(sentence: str, states: Callable[[str], bool]) -> str:
    """Drop the clauses of a list-like sentence that state the fact; keep the rest and its end mark."""
    end = sentence[len(sentence.rstrip(".;!? ")) :]
    pieces = [p for p in CLAUSE.findall(sentence.rstrip(".;!? "))]
    kept = [p for p in pieces if p in ",;()" or not states(p)]
    if len(kept) == len(pieces):
        return ""  # the statement spans clauses ("neoadjuvant X (a, b), then surgery"): the sentence goes
    text = "".join(kept).strip()
    return (" " + text + end) if text and sentence.startswith(" ") else (text + end if text else "")


def neutralise_plans(text: str, implications: list, plans_only: bool = True) -> str:
    """Delete plan sentences (every sentence when not `plans_only`) that state an implication.

    See `NeutralisePlansOp` and `DeleteStatementsOp`. In a table, sentences are cut inside
    their cell; when every statement must go, a row that states it is one record and goes whole.
    """

    def states(sentence: str) -> bool:
        return any(implication_hits(i, sentence) for i in implications)

    def cut(cell: str, in_plan: bool) -> str:
        kept = []
        for m in SENTENCE.finditer(cell):
            sentence = m.group(0)
            if not sentence or not ((not plans_only or in_plan or PLAN_CUE.search(sentence)) and states(sentence)):
                kept.append(sentence)
            elif not plans_only and _list_like(sentence):
                kept.append(_cut_clauses(sentence, states))
        return "".join(kept)

    out = []
    in_plan = False  # lines under a "Plan:" / "Recommendations" heading are plan lines
    skip_entry = False  # a dated entry whose header states the fact goes whole
    physical = text.split("\n")
    for group in wrapped_groups(text):
        original = [physical[i] for i in group]
        # A sentence wrapped over lines is judged whole; untouched, it keeps its line breaks.
        line = original[0] if len(group) == 1 else " ".join(p.strip() for p in original)
        if skip_entry:
            if line.strip() and not ENTRY_HEADER.match(line):
                continue
            skip_entry = False
        if not plans_only and ENTRY_HEADER.match(line) and states(line):
            skip_entry = True
            continue
        if PLAN_HEADING.match(line):
            in_plan = True
            out.append(line)
            continue
        if not line.strip() or (line.strip().endswith(":") and not line.startswith((" ", "\t", "-", "*"))):
            in_plan = False
        if line.lstrip().startswith("|"):
            cells = line.split("|")
            if not plans_only and any(states(c) for c in cells):
                continue
            # A row labelled as a plan or question ("| Plan | ... |") makes all its cells plan text.
            row_plan = in_plan or bool(PLAN_CUE.search(cells[1] if len(cells) > 1 else ""))
            out.append("|".join(cut(c, row_plan) if c.strip() else c for c in cells))
            continue
        result = cut(line, in_plan)
        if len(group) > 1 and result == line:
            out.extend(original)
        else:
            out.append(result)
    return "\n".join(out)


def _insert(section: str, op: InsertOp, text: str) -> str:
    if op.after is not None:
        match = re.search(op.after, section)
        if match:
            return section[: match.end()] + "\n" + text + section[match.end() :]
    if op.position == "start":
        return text + "\n" + section
    return section.rstrip("\n") + "\n" + text


def _tidy(text: str, original: str) -> str:
    """Clean what deletions leave on the lines they touched: doubled spaces, orphan separators.

    Lines the mutation did not change are kept byte for byte (tables keep their alignment).
    """
    untouched = set(original.split("\n"))
    lines = []
    for line in text.split("\n"):
        if line in untouched:
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        body = line.strip()
        body = re.sub(r"[ \t]{2,}", " ", body)
        body = re.sub(r"\(\s*[,;]?\s*\)", "", body)
        body = re.sub(r"([,;:])(?:\s*[,;])+", r"\1", body)
        body = re.sub(r"\s*[,;]\s*([.)])", r"\1", body)
        body = re.sub(r"(?<=[.:])(?:\s*[.,;])+", "", body)
        body = re.sub(r" +([,.;])", r"\1", body)
        body = re.sub(r"^([-*•]\s*)?[,;.]\s*", r"\1", body)
        body = re.sub(r"\s*[,;]$", ".", body)  # a clause cut from the end leaves its separator
        if re.fullmatch(r"[-*•]?\s*(?:[\d/.-]+\s*)?[:;,.]?", body):
            continue  # a line, bullet or dated entry the deletion emptied
        lines.append(indent + body if body else line)
    return "\n".join(lines)


# --- structured mode -------------------------------------------------------------------


def _days(case: Case, offset: int) -> date:
    return case.board_date + timedelta(days=offset)


def _set_biomarker(case: Case, values: dict[str, str], name: str, status: str, result: str, method: str | None = None) -> Case:
    record = _record(case)
    markers = [m for m in record.biomarkers if m.name != name]
    old = next((m for m in record.biomarkers if m.name == name), None)
    new = Biomarker(
        name=name,
        status=status,  # type: ignore[arg-type]
        result=_fill(result, values),
        method=method or (old.method if old else None),
        date=old.date if old else case.board_date - timedelta(days=30),
    )
    index = next((i for i, m in enumerate(record.biomarkers) if m.name == name), len(markers))
    markers.insert(index, new)
    return _update(case, {"biomarkers": {**case.biomarkers, name: status}}, {"biomarkers": markers})


def _remove_biomarkers(case: Case, values: dict[str, str], names: list[str]) -> Case:
    record = _record(case)
    return _update(
        case,
        {"biomarkers": {k: v for k, v in case.biomarkers.items() if k not in names}},
        {"biomarkers": [m for m in record.biomarkers if m.name not in names]},
    )


def _add_treatment_line(
    case: Case,
    values: dict[str, str],
    regimen: str,
    setting: str,
    start_days: int,
    end_days: int | None,
    outcome: str,
    note: str | None = None,
    counts_as_prior_line: bool = True,
) -> Case:
    record = _record(case)
    line = TreatmentLine(
        regimen=_fill(regimen, values),
        setting=setting,
        start=_days(case, start_days),
        end=_days(case, end_days) if end_days is not None else None,
        outcome=outcome,  # type: ignore[arg-type]
        note=_fill(note, values) if note else None,
    )
    # A line that was ongoing when the new one started has, by then, ended.
    lines = [
        t.model_copy(update={"outcome": "progression", "end": line.start}) if t.outcome == "ongoing" else t
        for t in record.treatment_lines
    ]
    prior = case.prior_lines + (1 if counts_as_prior_line else 0)
    return _update(case, {"prior_lines": prior}, {"treatment_lines": [*lines, line]})


def _progress_ongoing_line(case: Case, values: dict[str, str], days: int) -> Case:
    """End every ongoing line with progression on board date + `days`."""
    record = _record(case)
    end = _days(case, days)
    lines = [t.model_copy(update={"outcome": "progression", "end": end}) if t.outcome == "ongoing" else t for t in record.treatment_lines]
    return _update(case, {}, {"treatment_lines": lines})


def _tumour_marker(record: PatientRecord) -> str | None:
    """The name of the record's tumour marker (a lab outside the CBC/CMP that is not testosterone)."""
    return next((lab.name for lab in record.labs if lab.name not in REFERENCE_RANGES and lab.name != "Testosterone"), None)


def _marker_progression(case: Case, values: dict[str, str], days: int, factor: float = 1.5) -> Case:
    """The tumour marker at an injected progression: the last value before the scan (board date + `days`), raised by
    `factor` on the scan date, and no later value that would read as a response (review 2: after a structured B2 the
    marker fell in 5 of 21 tuples). Progression is documented by imaging and by the marker's course."""
    record = _record(case)
    name = _tumour_marker(record)
    scan = _days(case, days)
    before = sorted((lab for lab in record.labs if lab.name == name and lab.date < scan), key=lambda lab: lab.date)
    if name is None or not before:
        return case
    # A progressing metastatic tumour's marker is above its reference limit, whatever the last value was (a normal value
    # after a resection, before the recurrence): the rise derives from the disease state too.
    floor = MARKER_ULN.get(name, LDH_ULN) * METASTATIC_MARKER_RISE[0] if case.metastatic else 0.0
    rise = LabResult(date=scan, name=name, value=round(max(before[-1].value * factor, floor), 1), unit=before[-1].unit)
    labs = [lab for lab in record.labs if not (lab.name == name and lab.date >= scan)] + [rise]
    return _update(case, {}, {"labs": sorted(labs, key=lambda lab: lab.date)})


def _set_lab_course(case: Case, values: dict[str, str], name: str, unit: str, points: list[list[float]], since_days: int) -> Case:
    """A lab's course from board date + `since_days` on: its values there are replaced by `points` ([days, value] pairs),
    e.g. the PSA nadir and rise and the castrate testosterone of castration resistance (PCWG3)."""
    record = _record(case)
    since = _days(case, since_days)
    kept = [lab for lab in record.labs if not (lab.name == name and lab.date >= since)]
    added = [LabResult(date=_days(case, int(d)), name=name, value=float(v), unit=unit) for d, v in points]
    return _update(case, {}, {"labs": sorted([*kept, *added], key=lambda lab: lab.date)})


def _set_castration_status(case: Case, values: dict[str, str], status: str) -> Case:
    """Castration status on the record ("sensitive" or "resistant"); the packet renders it."""
    return _update(case, {}, {"castration_status": status})


def _remove_resection(case: Case, values: dict[str, str]) -> Case:
    record = _record(case)
    # Without a resection there was no adjuvant therapy either.
    lines = [t for t in record.treatment_lines if not _is_adjuvant(t.setting)]
    # Without a specimen there is no pathologic stage: ypT2N1 / pT1cN0 become clinical (cT2N1); a clinical N has
    # no pathologic subcategory (N1a, N2a are node counts of a specimen).
    tnm = re.sub(r"(?<![A-Za-z])y?p(?=[TN][0-4isx])", "c", record.tnm)
    tnm = re.sub(r"(N[1-3])[a-c]", r"\1", tnm)
    facts: dict[str, Any] = {"resected": False}
    r = record.resection
    pathologic_n = re.search(r"(?:(?<=[0-9a-dsx])|(?<![A-Za-z]))y?pN|(?<![A-Za-z])y?pT[0-4isx][a-d]?N", record.tnm) is not None
    # Tumour markers drawn after the operation described the resected state (an undetectable PSA after prostatectomy):
    # they go with it; the CBC/CMP panels stay.
    labs = [lab for lab in record.labs if r is None or lab.date <= r.date or lab.name in REFERENCE_RANGES]
    if r is not None and re.search(r"(?i)sentinel", r.procedure) and pathologic_n and not case.metastatic:
        # A sentinel-node biopsy is done only in clinically node-negative disease (NCCN Melanoma, Breast v.2026): without
        # it the nodes are cN0, and the stage group is the one of T with N0.
        tnm, facts["stage"] = clinical_before_sentinel(case.cancer_type, tnm, case.stage)
    mutated = _update(case, facts, {"resection": None, "treatment_lines": lines, "tnm": tnm, "labs": labs})
    # The clinical stage group can differ from the pathological one (gastric cT3N2 III, pT3N2 IIIA): computed again.
    return _restaged(mutated)


def _restaged(case: Case, prefix: str | None = None) -> Case:
    """The case with its stage group (and `initial_stage`) computed from its record by `staging` (AJCC 8), when the record
    has every fact the edition needs and, with `prefix`, the computed group is in it ('IV' -> 'IVB'); else unchanged."""
    record = _record(case)
    try:
        stage = staging.current_stage(case.cancer_type, record)
        initial = staging.diagnostic_stage(case.cancer_type, record) if record.metastasis_date is not None else None
    except staging.StagingError:
        return case
    if prefix is not None and not stage.startswith(prefix):
        return case
    update = {"initial_stage": initial} if initial is not None else {}
    return _update(case, {"stage": stage}, update)


def _is_adjuvant(setting: str) -> bool:
    return "adjuvant" in setting.lower() and "neoadjuvant" not in setting.lower()


NODES_EXAMINED: dict[str, int] = {"breast": 12, "nsclc": 14, "colorectal": 18, "pancreatic": 16, "gastric": 24, "melanoma": 12,
                                  "prostate": 10}
"""Regional nodes a standard resection examines (NCCN: >= 12 in a colectomy, >= 16 in a D2 gastrectomy; a level I-II
axillary dissection ~10-15; a sentinel-node biopsy 1-3, `SENTINEL_EXAMINED`)."""
SENTINEL_EXAMINED = 2
NODES_POSITIVE: dict[str, int] = {"N0": 0, "N1": 2, "N2": 5, "N3": 8}
"""The positive-node count an inserted resection finds for a clinical N (one inside each category's AJCC 8 range for the
count-based types: gastric N1 1-2, N2 3-6, N3a 7-15; colorectal N1b 2-3, N2a 4-6; breast N1a 1-3, N2a 4-9)."""
NSCLC_STATION: dict[str, str] = {"N1": "hilar", "N2": "mediastinal", "N3": "contralateral"}


def resection_pathology(case: Case, procedure: str, neoadjuvant: bool) -> tuple[str, str, int | None, int | None]:
    """(pathology text, TNM after the operation, positive nodes, nodes examined) of a resection of the case's clinical
    disease: the pT is the clinical T (prostate pT2 has no subcategory), the pN is computed (`staging.n_category`) from a
    node count inside the clinical N's range, found by the operation's method; ovarian debulking samples no nodes."""
    record = _record(case)
    tnm = staging.parse_tnm(record.tnm)
    t = "T2" if case.cancer_type == "prostate" and tnm.t.startswith("T2") else tnm.t
    prefix = "yp" if neoadjuvant else "p"
    if case.cancer_type == "ovarian" or case.cancer_type not in NODES_EXAMINED:
        return f"{prefix}T{t[1:]}; regional lymph nodes not sampled", f"{prefix}{t} c{tnm.n} M0", None, None
    sentinel = re.search(r"(?i)sentinel", procedure) is not None
    positive = NODES_POSITIVE.get(tnm.n_major, 0) if not sentinel else 0
    if case.cancer_type == "melanoma" and positive:
        positive = 1  # one clinically detected node: N1b, removed by the therapeutic dissection
    examined = SENTINEL_EXAMINED if sentinel else NODES_EXAMINED[case.cancer_type]
    n = staging.n_category(case.cancer_type, positive, "sentinel" if sentinel else "pathologic", NSCLC_STATION.get(tnm.n_major))
    text = f"{prefix}{t} {prefix}{n} ({positive}/{examined} {'SLN' if sentinel else 'LN'})"
    return text, f"{prefix}{t}{n}M0", positive, examined


def _add_resection(
    case: Case, values: dict[str, str], procedure: str, days: int, margin: str = "R0", pathology: str | None = None
) -> Case:
    """A completed resection with its pathology: what the catalog states (margins) after the pT/pN the operation produced
    (`resection_pathology`); the TNM becomes pathological (ypTNM after neoadjuvant therapy keeps the clinical TNM, as the
    cohort does) and the stage group is computed again (review 3: D2 kept the clinical stage beside 'R0')."""
    record = _record(case)
    when = _days(case, days)
    name = _fill(procedure, values)
    neoadjuvant = any("neoadjuvant" in ln.setting.lower() and ln.start < when for ln in record.treatment_lines)
    stated = _fill(pathology, values) if pathology else ""
    derived, tnm, positive, examined = resection_pathology(case, name, neoadjuvant)
    text = stated if re.search(r"(?<![A-Za-z])y?pT", stated) else "; ".join(p for p in (derived, stated) if p)
    resection = Resection(procedure=name, date=when, margin=margin, pathology=text, nodes_positive=positive, nodes_examined=examined)
    update: dict[str, Any] = {"resection": resection}
    if not neoadjuvant:
        update["tnm"] = tnm
    return _restaged(_update(case, {"resected": True}, update))


def _set_stage(
    case: Case,
    values: dict[str, str],
    stage: str,
    tnm: str | None = None,
    metastatic_sites: list[str] | None = None,
    found_days: int | None = None,
) -> Case:
    """A new stage group. With `found_days`, distant metastases are new: documented on board date + `found_days`,
    and the record keeps the stage at diagnosis (`initial_stage`) and an M0 TNM for the time before."""
    metastatic = stage.startswith("IV")
    record = _record(case)
    dated = metastatic and not case.metastatic and found_days is not None
    if tnm is None:
        # Keep T and N; only the M category follows the new stage group (M0 at diagnosis when the metastases are new).
        tnm = re.sub(r"M[01][a-d]?$", "M1" if metastatic and not dated else "M0", record.tnm)
    update: dict[str, Any] = {"tnm": _fill(tnm, values), "metastatic_sites": list(metastatic_sites or [])}
    if dated:
        update |= {"metastasis_date": _days(case, found_days), "initial_stage": case.stage}  # type: ignore[arg-type]
    elif not metastatic:
        update |= {"metastasis_date": None, "initial_stage": None}
    if dated:
        case = _scan_after_resection(case, values, _days(case, found_days))
    if metastatic and not dated and metastatic_sites:
        # The M subcategory of the new sites (AJCC 8: colorectal M1b for liver and lung), not a bare M1.
        update["tnm"] = staging.with_m(update["tnm"], staging.m_category(case.cancer_type, list(metastatic_sites)))
    # The group is computed from the new record (stage IV -> IVB for NSCLC metastases to liver and lung).
    mutated = _restaged(_update(case, {"stage": stage, "metastatic": metastatic}, update), prefix=stage)
    return _markers_follow_metastases(mutated) if dated else mutated


def _scan_after_resection(case: Case, values: dict[str, str], found: date) -> Case:
    """The history moved earlier so that the scan finding new metastases on `found` is at least
    `SCAN_AFTER_RESECTION_DAYS` after a resection (review 3: E1's CT 4-14 days after the operation)."""
    r = _record(case).resection
    if r is None or (found - r.date).days >= SCAN_AFTER_RESECTION_DAYS:
        return case
    return _shift_history(case, values, days=(found - r.date).days - SCAN_AFTER_RESECTION_DAYS,
                          keep_after=(found - case.board_date).days)


METASTATIC_MARKER_RISE = (2.0, 4.0)
"""How far above its reference limit a tumour marker is when new visceral metastases are found (at least; a marker
already higher stays at its own level), and `MARKER_GROWTH` per later untreated draw."""
MARKER_GROWTH = (1.1, 1.35)
LDH_ULN = 250.0  # U/L; LDH has no floor in `invariants.MARKER_ULN` (normal LDH is common in metastatic melanoma)


def _markers_follow_metastases(case: Case) -> Case:
    """The tumour marker after new metastases: on the scan's date and every later draw it is at least the highest value
    before (the untreated primary's) and above its reference limit, and it rises until a treatment starts (review 3: PSA
    0.03 ng/mL beside new liver metastases). The value derives from the disease state, not from the earlier draw."""
    record = _record(case)
    found, name = record.metastasis_date, _tumour_marker(record)
    if found is None or name is None:
        return case
    series = sorted((lab for lab in record.labs if lab.name == name), key=lambda lab: lab.date)
    unit = series[0].unit
    rng = seeded_rng(case.case_id, f"marker-metastases:{found.isoformat()}")
    uln = MARKER_ULN.get(name, LDH_ULN)
    level = max([lab.value for lab in series if lab.date < found] + [uln * rng.uniform(*METASTATIC_MARKER_RISE)])
    treated = [ln.start for ln in record.treatment_lines if ln.start >= found]
    until = min(treated, default=case.board_date)
    later = sorted({found, *(lab.date for lab in series if found < lab.date < until)})
    values_ = []
    for _ in later:
        values_.append(round(level, 2 if level < 1 else 1))
        level *= rng.uniform(*MARKER_GROWTH)
    kept = [lab for lab in record.labs if not (lab.name == name and found <= lab.date < until)]
    added = [LabResult(date=d, name=name, value=v, unit=unit) for d, v in zip(later, values_, strict=True)]  # markers carry no flag
    return _update(case, {}, {"labs": sorted([*kept, *added], key=lambda lab: lab.date)})


def _add_encounter(case: Case, values: dict[str, str], kind: str, author: str, note: str, days: int) -> Case:
    record = _record(case)
    encounter = Encounter(date=_days(case, days), kind=kind, author=author, note=_fill(note, values))
    encounters = sorted([*record.encounters, encounter], key=lambda e: e.date)
    return _update(case, {}, {"encounters": encounters})


def _shift_history(case: Case, values: dict[str, str], days: int, keep_after: int) -> Case:
    """Move the history earlier: every record date before board date + `keep_after` moves by `days` (negative).

    Why: an injected line of therapy (family B) needs time between the diagnosis, or the documented metastases,
    and the board. A treatment-naive metastatic case reaches its board weeks after the diagnosis; injecting a
    170-day first line into it would start the therapy before the disease it treats. Shifting the history
    (diagnosis, staging scans, markers, surgery, earlier therapy, labs and notes) keeps every interval of the
    case and frees the time the injected line needs; what belongs to the board itself stays (entries from
    board date + `keep_after` on, and the restaging CT, which now shows the progression). Metastases found after
    the diagnosis move too, with a copy of the scan that documented them. Structured route only: a text edit
    cannot move a chart's dates consistently, so the regex route checks the unshifted record.
    """
    record = _record(case)
    cutoff = _days(case, keep_after)
    delta = timedelta(days=days)

    def moved(d: date) -> date:
        return d + delta if d < cutoff else d

    found = record.metastasis_date
    encounters = [e if "restaging" in e.kind.lower() else e.model_copy(update={"date": moved(e.date)}) for e in record.encounters]
    if found is not None:
        scans = [e for e in record.encounters if e.date == found and e.kind.lower().startswith("radiology")]
        encounters += [e.model_copy(update={"date": found + delta}) for e in scans]
    resection = record.resection.model_copy(update={"date": moved(record.resection.date)}) if record.resection else None
    update: dict[str, Any] = {
        "diagnosis_date": moved(record.diagnosis_date),
        "metastasis_date": found + delta if found is not None else None,
        "biomarkers": [b.model_copy(update={"date": moved(b.date)}) for b in record.biomarkers],
        "resection": resection,
        "treatment_lines": [
            t.model_copy(update={"start": moved(t.start), "end": moved(t.end) if t.end is not None else None})
            for t in record.treatment_lines
        ],
        "medications": [m.model_copy(update={"start": moved(m.start) if m.start else None}) for m in record.medications],
        "labs": [lab.model_copy(update={"date": moved(lab.date)}) for lab in record.labs],
        "vitals": [v.model_copy(update={"date": moved(v.date)}) for v in record.vitals],
        "encounters": sorted(encounters, key=lambda e: e.date),
    }
    return _update(case, {}, update)


SHIFT_OPS = ("shift_history",)
"""Structured ops the regex route cannot mirror (see `_shift_history`)."""


def _render_option(case: Case, values: dict[str, str], **_: Any) -> Case:
    # Presentation-only ops (date format, section order) change no fact; see `render_options`.
    return case


STRUCTURED_OPS: dict[str, Callable[..., Case]] = {
    "set_biomarker": _set_biomarker,
    "remove_biomarkers": _remove_biomarkers,
    "add_treatment_line": _add_treatment_line,
    "progress_ongoing_line": _progress_ongoing_line,
    "marker_progression": _marker_progression,
    "set_lab_course": _set_lab_course,
    "set_castration_status": _set_castration_status,
    "remove_resection": _remove_resection,
    "add_resection": _add_resection,
    "set_stage": _set_stage,
    "add_encounter": _add_encounter,
    "shift_history": _shift_history,
    "render": _render_option,
}
if tuple(STRUCTURED_OPS) != STRUCTURED_OP_NAMES:  # the catalog validates against the names, this table runs them
    raise ImportError(f"STRUCTURED_OPS {tuple(STRUCTURED_OPS)} differ from interventions.STRUCTURED_OP_NAMES {STRUCTURED_OP_NAMES}")
"""Structured ops by name; YAML `params` are passed as keyword arguments."""


def _record(case: Case) -> PatientRecord:
    if case.record is None:
        raise MutationError(f"case '{case.case_id}' has no structured record; structured mode needs one")
    return case.record


def _update(case: Case, facts: dict[str, Any], record: dict[str, Any]) -> Case:
    new_record = _record(case).model_copy(update=record)
    return case.model_copy(update={**facts, "record": new_record})


def apply_structured_ops(case: Case, intervention: Intervention, skip: tuple[str, ...] = ()) -> Case:
    """Apply the intervention's structured ops (except those named in `skip`) to the case's facts and record."""
    if not intervention.structured:
        raise MutationError(f"intervention '{intervention.id}' has no 'structured' ops")
    values = intervention.template_values(case)
    for op in intervention.structured:
        if op.cancer_types is not None and case.cancer_type not in op.cancer_types:
            continue
        if op.op in skip:
            continue
        try:
            case = STRUCTURED_OPS[op.op](case, values, **op.params)
        except TypeError as ex:
            raise MutationError(f"intervention '{intervention.id}', structured op '{op.op}': {ex}") from None
    # Re-validate: the mutated case must still satisfy the schema's coherence rules.
    return Case.model_validate(case.model_dump())


def render_options(intervention: Intervention) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for op in intervention.structured or []:
        if op.op == "render":
            opts.update(op.params)
    return opts


def render_case(case: Case, scale: float = 1.0, date_format: str = "iso", order: tuple[str, ...] = SECTIONS) -> Packet:
    """Render a case's packet from its record (structured mode and the `scale` knob)."""

    if case.record is None:
        raise MutationError(f"case '{case.case_id}' has no structured record; it cannot be re-rendered")
    return Packet(render_case_sections(case, scale=scale, date_format=date_format), order)  # type: ignore[arg-type]


def render_mutated(mutated: Case, intervention: Intervention, scale: float = 1.0) -> Packet:
    """Render a case that `apply_structured_ops` produced, with the intervention's presentation options."""
    opts = render_options(intervention)
    order = tuple(opts.get("order", SECTIONS))
    rendered = render_case(mutated, scale=scale, date_format=opts.get("date_format", "iso"), order=order)
    return with_invariance(rendered, mutated, intervention)


def apply_structured(case: Case, intervention: Intervention, scale: float = 1.0) -> Packet:
    return render_mutated(apply_structured_ops(case, intervention), intervention, scale)
