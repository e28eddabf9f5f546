"""The pre-registered CSS intervention catalog: schema, loading and validation.

Each intervention carries the CSS paper's five fields (applicability filter, mutation
rule, expected change, scoring rule, family) plus id, rationale and source. The regex
`mutation` acts on the packet text; the optional `structured` ops act on the patient
record and re-render the packet (`mutation_mode=structured`).

Text templates (`text`, `replacement`, structured string params) may use
`{board_date}`, any name declared under `dates` (days relative to the board date) and
any name declared under `values` (chosen per case by the first matching `when` filter).
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from clinical_cf.catalog.css.patterns import backtracking_problem
from clinical_cf.catalog.css.schema import (
    SECTIONS,
    UNSTAGED_SYSTEMS,
    BiomarkerStatus,
    CancerType,
    Case,
    SectionName,
    canonical_cancer_type,
)
from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_yaml
from clinical_cf.core.templates import template_fields

Family = Literal["A", "B", "C", "D", "E", "N"]

FAMILY_NAMES: dict[str, str] = {
    "A": "biomarker flip",
    "B": "prior treatment failure",
    "C": "biomarker strip",
    "D": "surgery status",
    "E": "stage perturbation",
    "N": "negative control",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Applicability(_Strict):
    """Which cases an intervention applies to; every given condition must hold."""

    cancer_types: list[CancerType] | None = None
    sex: Literal["F", "M"] | None = None
    metastatic: bool | None = None
    resected: bool | None = None
    stages: list[str] | None = Field(default=None, description="Stage-group prefixes, e.g. ['II', 'III'].")
    biomarkers: dict[str, BiomarkerStatus | list[BiomarkerStatus]] | None = Field(
        default=None, description="Marker -> required status (or any of a list). A marker absent from the case is 'not_tested'."
    )
    min_prior_lines: int | None = Field(default=None, ge=0)
    max_prior_lines: int | None = Field(default=None, ge=0)
    packet_matches: str | None = Field(default=None, description="Regex the packet text must match.")
    packet_excludes: str | None = Field(default=None, description="Regex the packet text must not match.")
    nodal_status: Literal["positive", "negative"] | None = Field(
        default=None,
        description="Regional nodes by the N category of the record's TNM (else the first TNM the packet states); a case "
        "whose N category cannot be read matches neither.",
    )

    @field_validator("packet_matches", "packet_excludes")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            _compile(value)
        return value

    def matches(self, case: Case) -> bool:
        if self.cancer_types is not None and case.cancer_type not in self.cancer_types:
            return False
        if self.sex is not None and case.sex != self.sex:
            return False
        if self.metastatic is not None and case.metastatic != self.metastatic:
            return False
        if (self.metastatic is not None or self.stages is not None) and case.staging_system in UNSTAGED_SYSTEMS and (
            self.cancer_types is None or case.cancer_type not in self.cancer_types
        ):
            # Issue 43: a filter on distant spread or stage group that names no type presumes a tumour staged by TNM; a
            # glioblastoma (WHO CNS grade) got "metastatic carcinoma ... liver biopsy" from E1. Its own catalog names it.
            return False
        if self.resected is not None and case.resected != self.resected:
            return False
        if self.stages is not None and not any(_stage_has_prefix(case.stage, s) for s in self.stages):
            return False
        for name, wanted in (self.biomarkers or {}).items():
            status = case.marker_status(name)
            allowed = wanted if isinstance(wanted, list) else [wanted]
            if status not in allowed:
                return False
        if self.min_prior_lines is not None and case.prior_lines < self.min_prior_lines:
            return False
        if self.max_prior_lines is not None and case.prior_lines > self.max_prior_lines:
            return False
        if self.packet_matches is not None and not re.search(self.packet_matches, case.packet):
            return False
        if self.packet_excludes is not None and re.search(self.packet_excludes, case.packet):
            return False
        if self.nodal_status is not None:
            n = nodal_category(case)
            if n is None or (n != "0") != (self.nodal_status == "positive"):
                return False
        return True


_N_CATEGORY = re.compile(r"(?:(?<=[0-9a-dsx])|(?<![A-Za-z]))(?:y?[pc])?N([0-3x])")
_TNM_IN_TEXT = re.compile(r"\b(?:y?[pc])?T[0-4isx][a-d]?\s?(?:y?[pc])?N[0-3x]")


def nodal_category(case: Case) -> str | None:
    """The regional-node category ('0'-'3', 'x') of the case's TNM: the record's, else the first the packet states."""
    tnm = case.record.tnm if case.record is not None else None
    if tnm is None:
        m = _TNM_IN_TEXT.search(case.packet)
        tnm = m.group(0) if m else None
    n = _N_CATEGORY.search(tnm) if tnm else None
    return n.group(1) if n else None


def _stage_has_prefix(stage: str, prefix: str) -> bool:
    # "I" must not match "II"/"III"/"IV": the character after the roman numeral must not be I or V.
    if not stage.startswith(prefix):
        return False
    rest = stage[len(prefix) :]
    return rest[:1] not in ("I", "V")


def _compile(pattern: str) -> re.Pattern[str]:
    """Compile a catalog pattern, refusing one that could backtrack super-linearly (see `catalog.css.patterns`)."""
    try:
        compiled = re.compile(pattern)
    except re.error as ex:
        raise ValueError(f"invalid regex {pattern!r}: {ex}") from None
    problem = backtracking_problem(pattern)
    if problem is not None:
        raise ValueError(f"pattern {pattern[:80]!r} is refused: {problem}")
    return compiled


class ReplaceOp(_Strict):
    """Replace every match of `pattern` (Python `re.sub`, backrefs allowed) in the chosen sections."""

    op: Literal["replace"]
    pattern: str
    replacement: str
    sections: list[SectionName] | None = None
    cancer_types: list[CancerType] | None = Field(
        default=None, description="Only for these tumour types (a marker that is decisive for one type only)."
    )
    since: str | None = Field(
        default=None,
        description="A name under `dates`: only chart entries dated on or after it (or undated) are edited, "
        "so a note written before the injected event keeps what was true then.",
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        _compile(value)
        return value


class DeleteOp(_Strict):
    """Delete every match of `pattern` in the chosen sections."""

    op: Literal["delete"]
    pattern: str
    sections: list[SectionName] | None = None
    cancer_types: list[CancerType] | None = Field(
        default=None, description="Only for these tumour types (a marker that is decisive for one type only)."
    )
    since: str | None = Field(default=None, description="As for `replace`.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        _compile(value)
        return value


class InsertOp(_Strict):
    """Insert `text` at the start or end of one section, or after the first match of `after`."""

    op: Literal["insert"]
    section: SectionName
    text: str
    position: Literal["start", "end"] = "end"
    after: str | None = None

    @field_validator("after")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            _compile(value)
        return value


class ReorderOp(_Strict):
    """Present the sections in another order (a meaning-preserving control)."""

    op: Literal["reorder"]
    order: list[SectionName]

    @field_validator("order")
    @classmethod
    def _permutation(cls, value: list[str]) -> list[str]:
        if sorted(value) != sorted(SECTIONS):
            raise ValueError(f"order must list each of the ten sections once: {', '.join(SECTIONS)}")
        return value


class NeutralisePlansOp(_Strict):
    """Remove written plans that presuppose the original fact.

    A sentence is a plan when it carries a plan cue ("plan", "recommend", "to start",
    "candidate for", "for adjuvant ...") and it is removed when a term of one of the named
    implications matches in it. The plan is what the model under test is asked to write,
    so removing a stale one is clinically correct; dated history ("completed adjuvant
    trastuzumab 2019") carries no plan cue and stays, for the residue check to catch.
    """

    op: Literal["neutralise_plans"]
    implications: list[str] = Field(min_length=1)
    sections: list[SectionName] | None = None
    cancer_types: list[CancerType] | None = Field(
        default=None, description="Only for these tumour types (a marker that is decisive for one type only)."
    )
    since: str | None = Field(default=None, description="As for `replace`.")


class DeleteStatementsOp(_Strict):
    """Delete every sentence (or table row) in which a term of the named implications matches.

    For facts whose every mention must go with the edit (a removed resection takes its
    margins, nodal counts and post-operative visits with it). Run targeted rewrites first:
    what they turn into a negated or planned form no longer matches.
    """

    op: Literal["delete_statements"]
    implications: list[str] = Field(min_length=1)
    sections: list[SectionName] | None = None
    cancer_types: list[CancerType] | None = Field(
        default=None, description="Only for these tumour types (a marker that is decisive for one type only)."
    )
    since: str | None = Field(default=None, description="As for `replace`.")


class ReformatDatesOp(_Strict):
    """Rewrite every date, in whatever form it is written, in another form (see `catalog.css.dates`)."""

    op: Literal["reformat_dates"]


class InvarianceOp(_Strict):
    """Change one attribute that must not move the answer (issue 47; see `catalog.css.invariance`): a demographic one
    (sex, race_ethnicity, insurance, language, occupation, name) or a style one (typos, telegraphic, hedged, all_caps).
    Applied last, to the text as rendered (structured route) or stored (regex route), on both routes alike."""

    op: Literal["invariance"]
    attribute: Literal["sex", "race_ethnicity", "insurance", "language", "occupation", "name",
                       "typos", "telegraphic", "hedged", "all_caps"]
    kind: Literal["demographic", "style"]
    value: str | None = Field(default=None, description="The new value (demographic attributes).")
    rate: float | None = Field(default=None, gt=0, le=0.5, description="typos: the share of eligible words changed.")

    @model_validator(mode="after")
    def _kind_fits(self) -> InvarianceOp:
        style = self.attribute in ("typos", "telegraphic", "hedged", "all_caps")
        if style != (self.kind == "style"):
            raise ValueError(f"attribute '{self.attribute}' is a {'style' if style else 'demographic'} attribute, not {self.kind}")
        if self.attribute == "typos" and self.rate is None:
            raise ValueError("typos needs a rate (the share of eligible words changed)")
        return self


MutationOp = Annotated[
    ReplaceOp | DeleteOp | InsertOp | ReorderOp | NeutralisePlansOp | DeleteStatementsOp | ReformatDatesOp | InvarianceOp,
    Field(discriminator="op"),
]

ResidueKind = Literal["status", "agent", "intent", "timing", "staging", "history"]


class ResidueTerm(_Strict):
    """One way a packet can still assert or presuppose a fact.

    Kinds: `status` (the fact stated), `agent` (a drug that presupposes it), `intent` (a
    plan or treatment intent that presupposes it), `timing` (peri-operative or sequence
    words), `staging` (pathologic or clinical staging that implies it), `history` (a
    treatment-history statement).
    """

    kind: ResidueKind
    pattern: str
    negatable: bool = Field(
        default=True,
        description="A negation cue in the same clause ('no', 'not', 'without', 'not indicated' ...) cancels "
        "the match. False for terms that are themselves negative statements ('no prior therapy').",
    )
    unless: str | None = Field(default=None, description="Regex: a clause matching it is not residue.")

    @field_validator("pattern", "unless")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            _compile(value)
        return value


class Implication(_Strict):
    """What in a chart asserts or presupposes one clinical fact."""

    fact: str = Field(min_length=3)
    rationale: str = Field(min_length=10)
    terms: list[ResidueTerm] = Field(min_length=1)


STRUCTURED_OP_NAMES = (
    "set_biomarker", "remove_biomarkers", "add_treatment_line", "progress_ongoing_line", "marker_progression", "set_lab_course",
    "set_castration_status", "remove_resection", "add_resection", "set_stage", "add_encounter", "shift_history", "render",
)
"""The record operations a catalog may name; `catalog.css.mutate.STRUCTURED_OPS` implements exactly these (it checks so
on import). Named here, where the catalog is validated, so validating does not import the mutation code."""


class StructuredOp(_Strict):
    """An operation on the patient record (see `catalog.css.mutate.STRUCTURED_OPS`)."""

    op: str
    params: dict[str, Any] = Field(default_factory=dict)
    cancer_types: list[CancerType] | None = Field(
        default=None, description="Only for these tumour types (a marker that is decisive for one type only)."
    )


class ConditionalValue(_Strict):
    when: Applicability | None = None
    value: str


class ScopeExclusion(_Strict):
    """A setting the filter reaches where the intervention's direction does not hold; it is left out."""

    when: Applicability
    reason: str = Field(min_length=10, description="Why the expected change does not hold there (the right answer there).")
    source: str = Field(min_length=3, description="Guideline or trial, with year and section.")


class Scope(_Strict):
    """Where the pre-registered direction holds (setting, line, subtype), with its source.

    Settings the applicability filter reaches where the right answer is "no change" are listed under
    `excluded` and left out of the expansion (not scored as invariance items: the family N controls
    already measure stability, and a "no change" verdict on a biomarker flip would need its own rule).
    """

    holds: str = Field(min_length=10, description="Setting, line and subtype where the direction holds.")
    source: str = Field(min_length=3)
    excluded: list[ScopeExclusion] = Field(default_factory=list)


class Intervention(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    family: Family
    title: str
    applies_to: Applicability
    scope: Scope | None = Field(default=None, description="Where the expected direction holds; required for the bundled catalog.")
    mutation: list[MutationOp] = Field(min_length=1)
    structured: list[StructuredOp] | None = None
    expected_change: str = Field(min_length=10)
    scoring_rule: str | None = None
    rationale: str = Field(min_length=10)
    source: str = Field(min_length=3)
    dates: dict[str, int] = Field(default_factory=dict, description="Template name -> days relative to the board date.")
    values: dict[str, list[ConditionalValue]] = Field(default_factory=dict)
    residue: list[str] = Field(
        default_factory=list,
        description="Names under the catalog's `implications`: what would still assert or presuppose the "
        "original fact after the edit. The whole counterfactual packet is scanned for them.",
    )
    residue_only_for: dict[str, list[CancerType]] = Field(
        default_factory=dict,
        description="Implication name (from `residue`) -> the tumour types for which it is residue (others: every type).",
    )
    residue_since: str | None = Field(
        default=None,
        description="A name under `dates`: chart entries dated before it are history written before the "
        "injected event and are not scanned.",
    )
    edit_instruction: str | None = Field(
        default=None,
        min_length=20,
        description="The pre-registered instruction an `editor` model role receives to make this edit.",
    )
    edit_sections: list[SectionName] | None = Field(
        default=None,
        description="Sections an editor may change for this intervention; the others must come back byte-identical.",
    )
    expect_after: list[str] = Field(
        default_factory=list,
        description="Regexes: an edited packet must match at least one (the 'after' form of the fact is present).",
    )
    _implications: dict[str, Implication] = PrivateAttr(default_factory=dict)

    @field_validator("expect_after")
    @classmethod
    def _after_compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            _compile(pattern)
        return value

    @model_validator(mode="after")
    def _templates_resolve(self) -> Intervention:
        for name, field in [(self.residue_since, "residue_since")] + [
            (op.since, f"mutation[{i}].since") for i, op in enumerate(self.mutation) if hasattr(op, "since")
        ]:
            if name is not None and name not in self.dates:
                raise ValueError(f"{field}: '{name}' is not a name under 'dates' (known: {', '.join(self.dates) or 'none'})")
        known = {"board_date", *self.dates, *self.values}
        for field, text in self._templates():
            try:
                names = template_fields(text)  # plain {name} only: a width or precision could blow up at fill time
            except ValueError as ex:
                raise ValueError(f"{field}: {ex}") from None
            for name in names:
                if name not in known:
                    raise ValueError(f"{field}: unknown template field '{{{name}}}' (known: {', '.join(sorted(known))})")
        for name, options in self.values.items():
            if not options or options[-1].when is not None:
                raise ValueError(f"values.{name}: the last option must have no 'when' (the default)")
        for i, op in enumerate(self.structured or []):
            if op.op not in STRUCTURED_OP_NAMES:
                raise ValueError(f"structured[{i}].op: unknown op '{op.op}' (known: {', '.join(STRUCTURED_OP_NAMES)})")
        return self

    @property
    def invariance(self) -> InvarianceOp | None:
        """The intervention's invariance change (issue 47), if it is one."""
        return next((op for op in self.mutation if isinstance(op, InvarianceOp)), None)

    def _templates(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = [("expected_change", self.expected_change)]
        if self.edit_instruction:
            out.append(("edit_instruction", self.edit_instruction))
        for i, op in enumerate(self.mutation):
            if isinstance(op, InsertOp):
                out.append((f"mutation[{i}].text", op.text))
            elif isinstance(op, ReplaceOp):
                out.append((f"mutation[{i}].replacement", op.replacement))
        for i, sop in enumerate(self.structured or []):
            for key, val in sop.params.items():
                if isinstance(val, str):
                    out.append((f"structured[{i}].params.{key}", val))
        return out

    def implication(self, name: str) -> Implication:
        """A residue implication this intervention names, resolved through its catalog."""
        try:
            return self._implications[name]
        except KeyError:
            raise KeyError(
                f"intervention '{self.id}': implication '{name}' is not resolved; load the intervention through its catalog"
            ) from None

    def implication_names(self) -> list[str]:
        """Every implication the intervention refers to (its residue and its plan neutralisation)."""
        names = list(self.residue)
        for op in self.mutation:
            if isinstance(op, NeutralisePlansOp | DeleteStatementsOp):
                names.extend(n for n in op.implications if n not in names)
        return names

    def edit_instruction_for(self, case: Case) -> str | None:
        return self.edit_instruction.format_map(self.template_values(case)) if self.edit_instruction else None

    def applies(self, case: Case) -> bool:
        """The applicability filter holds and the case is in no setting the scope excludes."""
        return self.applies_to.matches(case) and self.excluded_by(case) is None

    def excluded_by(self, case: Case) -> ScopeExclusion | None:
        """The scope exclusion that leaves this case out, if any."""
        if self.scope is None:
            return None
        return next((x for x in self.scope.excluded if x.when.matches(case)), None)

    def expected_change_for(self, case: Case) -> str:
        return self.expected_change.format_map(self.template_values(case))

    def template_values(self, case: Case) -> dict[str, str]:
        """Resolve this intervention's template fields for one case."""
        resolved: dict[str, str] = {"board_date": case.board_date.isoformat()}
        for name, offset in self.dates.items():
            resolved[name] = (case.board_date + timedelta(days=offset)).isoformat()
        for name, options in self.values.items():
            resolved[name] = next(o.value for o in options if o.when is None or o.when.matches(case))
        return resolved


class Catalog(_Strict):
    version: int
    name: str
    description: str
    scoring_rule: str = Field(min_length=10, description="Default {0, 0.5, 1} rule the judge sees.")
    implications: dict[str, Implication] = Field(
        default_factory=dict, description="Residue vocabulary: fact name -> what in a chart asserts or presupposes it."
    )
    interventions: list[Intervention] = Field(min_length=1)

    @model_validator(mode="after")
    def _resolve_implications(self) -> Catalog:
        for item in self.interventions:
            for name in item.implication_names():
                if name not in self.implications:
                    raise ValueError(
                        f"intervention '{item.id}': unknown implication '{name}' (known: {', '.join(self.implications) or 'none'})"
                    )
            item._implications = {n: self.implications[n] for n in item.implication_names()}
        return self

    def by_id(self, intervention_id: str) -> Intervention:
        for item in self.interventions:
            if item.id == intervention_id:
                return item
        raise KeyError(intervention_id)

    def scoring_rule_for(self, intervention: Intervention) -> str:
        return intervention.scoring_rule or self.scoring_rule


def load_catalog(path: str | Path) -> Catalog:
    """Load and validate an intervention catalog; errors name the file, entry id and field."""
    path = Path(path)
    raw = load_yaml(path)  # bounded: size, depth, aliases, duplicate keys, non-finite numbers
    if not isinstance(raw, dict):
        raise CatalogError(path, "top level must be a mapping with 'interventions'")
    entries = raw.get("interventions")
    if not isinstance(entries, list):
        raise CatalogError(path, "'interventions' must be a list", field="interventions")

    unfinished = placeholder_problems(raw)
    if unfinished:
        raise CatalogError(
            path, f"{len(unfinished)} template placeholder(s) still to fill ({PLACEHOLDER} ...>): {', '.join(unfinished)}",
            field=unfinished[0],
        )
    # Validate entry by entry so an error names the intervention id, not a list index.
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        entry_id = str(entry.get("id")) if isinstance(entry, dict) and entry.get("id") else f"#{index}"
        try:
            Intervention.model_validate(entry)
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
        if entry_id in seen:
            raise CatalogError(path, "duplicate intervention id", entry=entry_id, field="id")
        seen.add(entry_id)
    try:
        return Catalog.model_validate(raw)
    except ValidationError as ex:
        raise validation_errors(path, None, ex) from None


# ------------------------------------------------------------------------------------ your own interventions

PLACEHOLDER = "<TODO"
"""What `intervention_template` writes where only the clinician can answer; a catalog that still holds one is refused."""


def placeholder_problems(raw: Any, where: str = "") -> list[str]:
    """Every field of a raw catalog that still holds a template placeholder, by its path ("interventions[0].scope.source")."""
    found: list[str] = []
    if isinstance(raw, dict):
        for key, value in raw.items():
            found += placeholder_problems(value, f"{where}.{key}" if where else str(key))
    elif isinstance(raw, list):
        for i, value in enumerate(raw):
            found += placeholder_problems(value, f"{where}[{i}]")
    elif isinstance(raw, str) and PLACEHOLDER in raw:
        found.append(where)
    return found


def scope_audit(catalog: Catalog) -> list[str]:
    """What a catalog must state before its direction can be scored, per intervention, one line each (empty: none).

    Every intervention states where its expected direction holds and its source (`scope`), names the tumour types it
    is for when it reads a marker (a marker decides different things in different cancers), and lists under
    `residue` what would still state the original fact after the edit. The bundled catalog passes it (a test).
    """
    problems = []
    for item in catalog.interventions:
        if item.family == "N":
            continue
        if item.scope is None:
            problems.append(f"intervention '{item.id}', field 'scope': missing; state where the direction holds (holds) "
                            "and its source (source), and list the settings where it does not (excluded)")
        if item.applies_to.biomarkers and not item.applies_to.cancer_types:
            problems.append(f"intervention '{item.id}', field 'applies_to.cancer_types': missing; a marker filter "
                            f"({', '.join(item.applies_to.biomarkers)}) needs the types its direction holds for")
        if not item.residue:
            problems.append(f"intervention '{item.id}', field 'residue': empty; name the implications that would still "
                            "state the original fact after the edit (the review page highlights them)")
    return problems


def _yaml_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def intervention_template(cancer_type: str, marker: str, agents: list[str], intervention_id: str | None = None) -> str:
    """A schema-checked catalog with one marker-flip intervention (positive -> not detected) for a user's own type.

    Everything the code can write is written (the filter, the edit patterns, the residue vocabulary, the editor's
    instruction); what only the clinician knows - the expected change, where it holds, its source, the rationale - is a
    `<TODO ...>` placeholder, and a catalog that still holds one is refused by every command and task that loads it.
    """
    cancer_type = str(canonical_cancer_type(cancer_type))
    if not re.fullmatch(r"[a-z][a-z0-9_]{1,39}", cancer_type):
        raise ValueError(f"--cancer-type {cancer_type!r}: a lower-case identifier (e.g. cholangiocarcinoma)")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]{1,15}", marker):
        raise ValueError(f"--marker {marker!r}: a marker symbol (e.g. FGFR2, KIT, IDH1)")
    bad = [a for a in agents if not re.fullmatch(r"[A-Za-z][A-Za-z0-9 -]{1,40}", a)]
    if bad:
        raise ValueError(f"--agent {bad[0]!r}: a drug name (letters, digits, spaces, hyphens)")
    key = re.sub(r"[^a-z0-9]+", "_", marker.lower()).strip("_")
    iid = intervention_id or f"U_{key}_positive_to_negative_{cancer_type}"
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", iid):
        raise ValueError(f"--id {iid!r}: letters, digits, '_', '.', '-'")
    m = re.escape(marker)
    kinds = r"fusion|rearrangement|mutation|amplification|alteration|deletion|exon \d+ \w+"
    result = r"(?:detected|positive|present|identified)"
    clause = r"[^.;|\n]"
    agent_terms = "|".join(re.escape(a.lower()) for a in agents) or "TODO-targeted-agent"
    patterns = {
        "status": "(?i)" + m + clause + "{0,30}?(?:" + kinds + ")" + clause + "{0,20}?" + result,
        "positive": "(?i)" + m + clause + "{0,20}?positive",
        "agent": r"(?i)\b(?:" + agent_terms + r")\b",
        "flip": r"(?i)\b(" + m + r")(?:-\w+)?(\s+(?:" + kinds + "))?" + clause + r"{0,20}?\b" + result + r"\b",
        "parenthesis": r"(?i) ?\((" + m + r")\s+(?:" + kinds + r")\s+positive\)",
        "after": "(?i)" + m + clause + "{0,30}not detected|no " + m,
    }
    agents_named = ", ".join(agents) or marker + "-directed therapy"
    lines = [
        f"# Your own intervention for {cancer_type}: {marker} positive -> not detected (written by `clinical-cf catalog template`).",
        "# Replace every <TODO ...> with what you know (a catalog that still holds one is refused), then:",
        "#   clinical-cf catalog check THIS_FILE      schema, patterns, scope audit and lock state",
        "#   clinical-cf catalog lock THIS_FILE       pre-register it (any later edit is refused until re-locked)",
        "# and pass --catalog THIS_FILE to `cases import`, `cases answer`, `catalog summary`, `counterfactuals build`, and",
        "# -T catalog=THIS_FILE to the CSS task. See docs/counterfactual-sets.md, \"Interventions for your own cancer types\".",
        "version: 1",
        f"name: user-{cancer_type}-{key}",
        "description: " + _yaml_quote(f"Interventions for {cancer_type} written by the user (one marker flip)."),
        "scoring_rule: >-",
        "  1.0 = the counterfactual recommendations change in the expected direction: the expected change is substantively",
        "  present in the recommended treatments. 0.5 = the counterfactual recommendations acknowledge the changed fact",
        "  (mention it, hedge, or ask about it) but the recommended treatments are not updated accordingly, or are only",
        "  partly updated. 0.0 = the recommendations are unchanged in substance, or change in a different or wrong direction.",
        "implications:",
        f"  {key}_positive:",
        "    fact: " + _yaml_quote(f"{marker} alteration detected"),
        "    rationale: " + _yaml_quote(f"A statement that {marker} is altered contradicts a packet in which it was not detected."),
        "    terms:",
        "      - {kind: status, pattern: " + _yaml_quote(patterns["status"]) + "}",
        "      - {kind: status, pattern: " + _yaml_quote(patterns["positive"]) + "}",
        f"  {key}_directed_therapy:",
        "    fact: " + _yaml_quote(f"{marker}-directed therapy given, running or planned"),
        "    rationale: "
        + _yaml_quote(f"{marker}-directed agents are given only for {marker}-altered disease; naming one presupposes it."),
        "    terms:",
        "      - {kind: agent, pattern: " + _yaml_quote(patterns["agent"]) + "}",
        "interventions:",
        f"  - id: {iid}",
        "    family: A",
        "    title: " + _yaml_quote(f"{marker} positive -> not detected ({cancer_type})"),
        "    applies_to:",
        f"      cancer_types: [{cancer_type}]",
        f"      biomarkers: {{{marker}: positive}}",
        "    scope:",
        "      holds: '<TODO: the setting, line and subtype where the expected change holds>'",
        "      source: '<TODO: guideline or trial, with year and section>'",
        "    mutation:",
        "      - op: replace",
        "        pattern: " + _yaml_quote(patterns["parenthesis"]),
        "        replacement: ''",
        "      - op: replace",
        "        pattern: " + _yaml_quote(patterns["flip"]),
        r"        replacement: '\g<1>\g<2> not detected'",
        # Every statement naming a directed agent goes (a plan, the board question, a line given): without the marker
        # none of them can stand; what a reader must still judge is highlighted on the review page.
        "      - op: delete_statements",
        f"        implications: [{key}_directed_therapy]",
        f"    residue: [{key}_positive, {key}_directed_therapy]",
        "    expected_change: '<TODO: what the board should now recommend instead, e.g. the targeted agent leaves the plan>'",
        "    rationale: '<TODO: why this marker decides the board for this cancer type>'",
        "    source: '<TODO: guideline or trial, with year and section>'",
        "    edit_instruction: >-",
        f"      Change the {marker} result to not detected wherever it is stated (molecular report, summaries, tables,",
        f"      key: value lines, the board question) and remove plans and questions that presuppose a {marker} alteration",
        f"      ({agents_named}). Change nothing else.",
        "    edit_sections: [diagnoses, biomarkers, medications, encounters, overview]",
        "    expect_after:",
        "      - " + _yaml_quote(patterns["after"]),
        "",
    ]
    return "\n".join(lines)


def extend_catalog(bundled: Catalog, user: Catalog, user_path: str | Path) -> Catalog:
    """The bundled catalog with a user's catalog added (issue 43: `--catalog` extends, `--catalog-only` replaces).

    The user's interventions come after the bundled ones and its implications are added to the bundled vocabulary; an
    intervention id or implication name the bundled catalog already uses with another definition is refused, naming it.
    """
    ids = {item.id for item in bundled.interventions}
    for item in user.interventions:
        if item.id in ids and item != bundled.by_id(item.id):
            raise CatalogError(user_path, "intervention id already used by the bundled catalog (rename it, or pass "
                               "--catalog-only to use your catalog alone)", entry=item.id, field="id")
    for name, implication in user.implications.items():
        if name in bundled.implications and implication != bundled.implications[name]:
            raise CatalogError(user_path, "implication name already used by the bundled catalog with another definition "
                               "(rename it, or pass --catalog-only)", entry=name, field=f"implications.{name}")
    raw = bundled.model_dump(mode="json")
    raw["implications"] = {**raw["implications"], **user.model_dump(mode="json")["implications"]}
    raw["interventions"] += [item.model_dump(mode="json") for item in user.interventions if item.id not in ids]
    raw["name"] = f"{bundled.name}+{user.name}"
    return Catalog.model_validate(raw)
