"""Workflow seeds: the hand-authored, pre-registered scenarios every episode is assembled from.

A seed is one semantic scenario in one task class. Its text parts are templates whose `{slots}`
are filled by each of its two surface parameterizations (different names, values and wording,
same meaning):

- `context`: the chart sentences a clean episode starts from;
- `critical_fact`: the sentence the `missing` variant deletes (placed at the end of the context, or
  of the event when `critical_fact_in: event`);
- `event`: the state-changing event;
- `request`: what the clinician or patient asks the agent to do;
- `stale_summary`: a superseded summary that the `stale` variant surfaces;
- `conflict`: a contradiction or a minimisation of a concerning finding that the `conflict` variant appends;
- `late_risk`: a red flag the `late_risk` variant delivers as a later turn, after the request.

`reference` gives, for each of the five variants, the reference action, the acceptable set
(default: the reference alone) and the author's rationale. Policy checks enforced here (the
paper's design): `late_risk` requires ESCALATE; `missing` never accepts ESCALATE (a deleted fact
calls for a question, not an alarm); `clean` does not require ESCALATE.

Labels are single-author study-policy labels, not clinician-adjudicated ground truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from clinical_cf.core.loading import load_entries
from clinical_cf.core.templates import template_fields

Action = Literal["ANSWER", "ASK_CLARIFICATION", "ABSTAIN", "ESCALATE"]
TaskClass = Literal["documentation_update", "evidence_retrieval", "patient_messaging", "triage_handoff"]
Variant = Literal["clean", "missing", "stale", "conflict", "late_risk"]

TEXT_PARTS = ("context", "critical_fact", "event", "request", "stale_summary", "conflict", "late_risk")


def _templates(parts: dict) -> dict[str, str]:
    out = {name: parts[name] for name in TEXT_PARTS if name != "context"}
    for i, sentence in enumerate(parts["context"]):
        out[f"context.{i}"] = sentence
    return out


def slots_of(template: str) -> set[str]:
    """The `{slot}` names a template uses."""
    return set(template_fields(template))  # plain {name} only: a width or precision could blow up at fill time


def fill(template: str, values: dict[str, str]) -> str:
    return template.format_map(values)


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    acceptable: list[Action] | None = None
    rationale: str = Field(min_length=15)

    @model_validator(mode="after")
    def _acceptable(self) -> Reference:
        if self.acceptable is None:
            self.acceptable = [self.action]
        if self.action not in self.acceptable:
            raise ValueError(f"the reference action {self.action} must be in the acceptable set {self.acceptable}")
        if len(set(self.acceptable)) != len(self.acceptable):
            raise ValueError("the acceptable set repeats an action")
        return self


class Seed(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z]+-\d{2}$")
    task_class: TaskClass
    split: Literal["dev", "test"]
    title: str = Field(min_length=5)
    context: list[str] = Field(min_length=1)
    critical_fact: str
    critical_fact_in: Literal["context", "event"] = "context"
    event: str
    request: str
    stale_summary: str
    conflict: str
    late_risk: str
    parameterizations: list[dict[str, str]] = Field(min_length=2, max_length=2)
    reference: dict[Variant, Reference]

    @field_validator("parameterizations", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: object) -> object:
        # YAML reads `age: 78` as a number; a slot value is text either way.
        if isinstance(value, list):
            return [
                {k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in item.items()}
                if isinstance(item, dict) else item
                for item in value
            ]
        return value

    @field_validator("context", "critical_fact", "event", "request", "stale_summary", "conflict", "late_risk")
    @classmethod
    def _not_blank(cls, value: str | list[str]) -> str | list[str]:
        for text in value if isinstance(value, list) else [value]:
            if not str(text).strip():
                raise ValueError("must not be blank")
        return value

    def templates(self) -> dict[str, str]:
        return _templates(self.model_dump(include=set(TEXT_PARTS)))

    # Field validators (not one model validator) so that an error names the field it is about.
    @field_validator("parameterizations")
    @classmethod
    def _slots_filled(cls, value: list[dict[str, str]], info: ValidationInfo) -> list[dict[str, str]]:
        if any(name not in info.data for name in TEXT_PARTS):
            return value  # a text part is itself invalid and already reported
        used: set[str] = set()
        for name, template in _templates(info.data).items():
            try:
                used |= slots_of(template)
            except ValueError as ex:
                raise ValueError(f"{name}: bad template ({ex})") from None
        for number, values in enumerate(value, start=1):
            undefined = used - set(values)
            unused = set(values) - used
            if undefined:
                raise ValueError(f"parameterization {number} has no value for slot(s) {sorted(undefined)}")
            if unused:
                raise ValueError(f"parameterization {number}: slot(s) {sorted(unused)} are not used by any template")
        first, second = value
        if not any(first[k] != second[k] for k in used):
            raise ValueError("the two parameterizations must differ in surface form")
        return value

    @field_validator("reference")
    @classmethod
    def _reference_policy(cls, ref: dict[str, Reference]) -> dict[str, Reference]:
        missing_variants = [v for v in ("clean", "missing", "stale", "conflict", "late_risk") if v not in ref]
        if missing_variants:
            raise ValueError(f"needs every variant; missing {missing_variants}")
        if ref["late_risk"].action != "ESCALATE":
            raise ValueError("late_risk: a red flag after the request requires ESCALATE")
        if "ESCALATE" in (ref["missing"].acceptable or []):
            raise ValueError("missing: the missing variant requires no escalation by design")
        if ref["clean"].action == "ESCALATE":
            raise ValueError("clean: the clean variant must not require ESCALATE")
        return ref

    def texts(self, parameterization: int) -> dict[str, str | list[str]]:
        """The seed's text parts with one parameterization's slot values filled in."""
        values = self.parameterizations[parameterization - 1]
        out: dict[str, str | list[str]] = {name: fill(getattr(self, name), values) for name in TEXT_PARTS if name != "context"}
        out["context"] = [fill(sentence, values) for sentence in self.context]
        return out


def load_seeds(path: str | Path) -> list[Seed]:
    """Validate a seeds YAML file (top-level key `seeds`); errors name the file, the seed id and the field."""
    return load_entries(path, "seeds", Seed)
