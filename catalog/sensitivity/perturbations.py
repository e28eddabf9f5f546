"""Sensitivity perturbations: schema, constraint rules and application to a vignette."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clinical_cf.catalog.sensitivity.invariance import apply_vignette_invariance
from clinical_cf.catalog.sensitivity.vignettes import Vignette
from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_entries, load_yaml, validate_strict

Direction = Literal["invariant", "up", "down", "shift", "entropy_up_no_flip", "flip_to_target", "per_case"]
# `per_case` takes the vignette's own expectation for the edit: its timeline_expected for `prolong`, its
# conflicting_expected for `add_result` (a conflicting result, a rule-out or a diagnostic one).
PER_CASE_OPS = {"prolong", "add_result"}


class Requires(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sex: Literal["F", "M"] | None = None
    min_age: int | None = None
    max_age: int | None = None
    presentations: list[str] = Field(default_factory=list)
    """When given, the only presentations the expected direction holds for (the scope)."""
    not_presentations: list[str] = Field(default_factory=list)
    has_timeline_expectation: bool = False
    unsettled: bool = False
    """Only where the vignette's findings do not settle the gold (its `settled_by`): a background or a longer
    history cannot be expected to move a diagnosis the labs establish."""


class Perturbation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    type: Literal["surface", "clinical_semantic", "background", "conflicting_result", "timeline", "demographic", "style"]
    op: Literal["synonym", "vaguer", "reorder", "add_sign", "remove_finding", "add_background", "add_result", "prolong", "invariance"]
    expected: Direction
    text: str | None = None
    attribute: Literal["sex", "race_ethnicity", "insurance", "language", "occupation", "name",
                       "typos", "telegraphic", "hedged", "all_caps"] | None = None
    """op invariance (issue 47): the attribute changed (`catalog.sensitivity.invariance`); `text` its new value."""
    rate: float | None = Field(default=None, gt=0, le=0.5)
    requires: Requires = Field(default_factory=Requires)
    rationale: str = Field(min_length=10)
    source: str = Field(min_length=3)

    @model_validator(mode="after")
    def _per_case_only_where_a_vignette_says(self) -> Perturbation:
        if self.expected == "per_case" and self.op not in PER_CASE_OPS:
            raise ValueError(f"expected per_case needs op {' or '.join(sorted(PER_CASE_OPS))} (the vignette states those directions)")
        if self.expected == "flip_to_target":
            raise ValueError("flip_to_target names a candidate, so it comes from a vignette: use per_case")
        if (self.op == "invariance") != (self.attribute is not None):
            raise ValueError("op invariance needs an attribute, and only it takes one")
        if self.op == "invariance" and (self.expected != "invariant" or self.type not in ("demographic", "style")):
            raise ValueError("an invariance change is of type demographic or style and expected invariant")
        return self

    def render(self, v: Vignette) -> str:
        """The perturbed vignette's text (an invariance change rewrites the rendered text; the others the vignette)."""
        text = self.apply(v).render()
        if self.op != "invariance":
            return text
        return apply_vignette_invariance(text, v, str(self.attribute), self.text, self.rate)

    def skip_reason(self, v: Vignette) -> str | None:
        """Why this perturbation would make the vignette incoherent, or None when it applies."""
        r = self.requires
        if r.sex and v.sex != r.sex:
            return f"requires sex {r.sex}"
        if r.min_age is not None and v.age < r.min_age or r.max_age is not None and v.age > r.max_age:
            return "age outside the plausible range"
        if v.presentation in r.not_presentations or r.presentations and v.presentation not in r.presentations:
            return f"not applicable to {v.presentation}"
        if r.unsettled and v.settled():
            return "its findings settle the diagnosis (" + "; ".join(v.settled_by) + ")"
        if r.has_timeline_expectation and v.timeline_expected is None:
            return "no pre-registered timeline direction for this presentation"
        if self.op == "add_background" and not self.text:
            return "add_background needs text"
        return None

    def expected_for(self, v: Vignette) -> str:
        if self.expected != "per_case":
            return self.expected
        if self.op == "add_result":
            return v.conflicting_expected
        return v.timeline_expected or "invariant"

    def expected_target(self, v: Vignette) -> str | None:
        """The candidate a `flip_to_target` expectation names (None for every other direction)."""
        return v.conflicting_target if self.expected_for(v) == "flip_to_target" else None

    def apply(self, v: Vignette) -> Vignette:
        """The perturbed vignette (a copy)."""
        if self.op == "synonym":
            return v.model_copy(update={"complaint": v.complaint_synonym})
        if self.op == "vaguer":
            return v.model_copy(update={"complaint": v.complaint_vague})
        if self.op == "reorder":
            return v.model_copy(update={"findings": list(reversed(v.findings))})
        if self.op == "add_sign":
            return v.model_copy(update={"findings": [*v.findings, v.supporting_sign]})
        if self.op == "remove_finding":
            return v.model_copy(update={"findings": [f for f in v.findings if f != v.removable_finding]})
        if self.op == "add_background":
            return v.model_copy(update={"background": [*v.background, self.text]})
        if self.op == "add_result":
            return v.model_copy(update={"findings": [*v.findings, v.conflicting_result]})
        if self.op == "invariance":
            return v  # the text, not the vignette, changes (`render`)
        return v.model_copy(update={"duration": v.duration_long})


@dataclass(frozen=True)
class Tolerance:
    """Thresholds of direction consistency (docs/sensitivity.md).

    `relative_change`: |P'(y) - P(y)| / P(y) for invariant and down. `headroom_gain`: for up, the gold must
    gain this share of its headroom, (P'(y) - P(y)) / (1 - P(y)), so "more confident" is reachable from any
    baseline (a relative rise of 10 % is impossible from P(y) >= 0.91). `confident_flip`: the top candidate's
    probability above which a flip is confident (and a flip_to_target move counts). `resolution`: the step in
    which models state probabilities (two decimals); a required gain that rounds to nothing at it (10 % of a
    headroom under 0.05, i.e. P(y) above 0.95) is not asked for, so "up" there means not falling: 0.99 -> 0.99
    counts as 1.0 -> 1.0 does.
    """

    relative_change: float = 0.10
    js_divergence: float = 0.05
    confident_flip: float = 0.60
    headroom_gain: float = 0.10
    resolution: float = 0.01


class ToleranceSpec(BaseModel):
    """The catalog's `tolerance` block, typed: a tolerance written as a word is an error, not a string compared later."""

    model_config = ConfigDict(extra="forbid")

    relative_change: float = Field(default=Tolerance.relative_change, gt=0, le=1)
    js_divergence: float = Field(default=Tolerance.js_divergence, gt=0, le=1)
    confident_flip: float = Field(default=Tolerance.confident_flip, gt=0, le=1)
    headroom_gain: float = Field(default=Tolerance.headroom_gain, gt=0, le=1)
    resolution: float = Field(default=Tolerance.resolution, gt=0, le=0.1)


def load_perturbations(path: str | Path) -> tuple[list[Perturbation], Tolerance]:
    path = Path(path)
    raw = load_yaml(path) or {}
    if not isinstance(raw, dict):
        raise CatalogError(path, "top level must be a mapping with 'tolerance' and 'perturbations'")
    try:
        tolerance = Tolerance(**validate_strict(ToleranceSpec, raw.get("tolerance") or {}).model_dump())
    except ValidationError as ex:
        error = validation_errors(path, "tolerance", ex)
        raise CatalogError(path, error.detail, entry="tolerance", field=f"tolerance.{error.field}") from None
    return load_entries(path, "perturbations", Perturbation), tolerance
