"""MedPIC rules (seed 002, MedRule2Pair §3.2): the rule schema, patient facts, and rule evaluation.

A rule says which medication (or class, through a representative drug) is potentially
inappropriate, for whom (a typed trigger: every condition must hold), what to do (avoid, avoid a
combination, adjust the dose, choose an alternative), when it does not apply (exceptions), and
where it comes from (document, year, table/section) with a verification note, and, where its
advice also holds outside its trigger (`outside_trigger`), why and on what authority: such a rule
gets no "rule does not apply" pair, because that member's answer "None of the above" would be wrong.

Gold answers are computed by evaluating triggers against structured `PatientFacts`, never from
vignette text, so a self-check can recompute every answer.

Users may bring their own rules file in this schema; it is validated strictly (unknown fields are
refused, thresholds are typed) and errors name the file, the rule id and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_entries

ConditionKind = Literal[
    "age", "crcl", "egfr", "gestational_week", "weight", "pregnant", "lactating", "condition", "co_medication"
]
NUMERIC_KINDS = {"age", "crcl", "egfr", "gestational_week", "weight"}
BOOLEAN_KINDS = {"pregnant", "lactating"}
NAMED_KINDS = {"condition", "co_medication"}
UNITS: dict[str, set[str]] = {
    "age": {"years", "months", "days"},
    "crcl": {"mL/min"},
    "egfr": {"mL/min/1.73m2"},
    "gestational_week": {"weeks"},
    "weight": {"kg"},
}
AGE_FACTOR = {"years": 1.0, "months": 1 / 12, "days": 1 / 365.25}
Op = Literal["lt", "le", "gt", "ge", "eq"]
Population = Literal["older_adult", "pregnancy", "lactation", "paediatric", "renal", "general"]
Action = Literal["avoid", "avoid_combination", "adjust_dose", "choose_alternative"]
# Patient-information type of the condition a question turns on (one of the six dimensions).
INFO_TYPE = {
    "age": "age_threshold",
    "crcl": "renal_threshold",
    "egfr": "renal_threshold",
    "gestational_week": "gestational_week",
    "weight": "weight_threshold",
    "pregnant": "pregnancy_status",
    "lactating": "lactation_status",
    "condition": "condition",
    "co_medication": "drug_interaction",
}


def _compare(actual: float, op: str, threshold: float) -> bool:
    return {
        "lt": actual < threshold,
        "le": actual <= threshold,
        "gt": actual > threshold,
        "ge": actual >= threshold,
        "eq": actual == threshold,
    }[op]


class PatientFacts(BaseModel):
    """The structured patient information a vignette is rendered from and a gold answer is computed on."""

    model_config = ConfigDict(extra="forbid")

    age_years: float = Field(ge=0, le=110)
    sex: Literal["F", "M"]
    pregnant: bool = False
    gestational_week: int | None = Field(default=None, ge=1, le=42)
    lactating: bool = False
    crcl: float | None = Field(default=None, ge=0)
    egfr: float | None = Field(default=None, ge=0)
    weight_kg: float | None = Field(default=None, gt=0)
    conditions: list[str] = Field(default_factory=list)
    co_medications: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _coherent(self) -> PatientFacts:
        if self.pregnant and self.sex != "F":
            raise ValueError("pregnancy in a male patient")
        if self.lactating and self.sex != "F":
            raise ValueError("lactation in a male patient")
        if self.gestational_week is not None and not self.pregnant:
            raise ValueError("gestational_week given for a patient who is not pregnant")
        if (self.pregnant or self.lactating) and not 12 <= self.age_years <= 55:
            raise ValueError("pregnancy or lactation outside plausible ages")
        return self


class Condition(BaseModel):
    """One typed fact a trigger or an exception tests.

    Numeric kinds (age, crcl, egfr, gestational_week, weight) need an op, a number and a unit;
    pregnant/lactating take a boolean; condition/co_medication take a canonical name (snake_case)
    and a `label` (how a chart would say it; `labels` adds surface variants).
    `active`/`inactive` give [low, high] ranges the generator draws values from on either side of a
    numeric threshold (validated against the op); `vary` marks the condition a counterfactual changes.
    """

    model_config = ConfigDict(extra="forbid")

    kind: ConditionKind
    op: Op = "eq"
    value: float | bool | str
    unit: str | None = None
    label: str | None = None
    labels: list[str] = Field(default_factory=list)
    negated: str | None = None
    active: tuple[float, float] | None = None
    inactive: tuple[float, float] | None = None
    vary: bool = False
    members: list[str] = Field(default_factory=list)
    """For a co_medication that names a class (`ras_inhibitor`): the drugs it covers. A medicine list names a drug
    with its dose ("lisinopril 20 mg daily"), so a line matches by its drug name: the value or a member, followed
    by the rest of the line."""

    @model_validator(mode="after")
    def _typed(self) -> Condition:
        if self.members and self.kind != "co_medication":
            raise ValueError("members name the drugs of a co_medication class; other kinds take none")
        if self.kind in NUMERIC_KINDS:
            if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
                raise ValueError(f"a {self.kind} threshold must be a number")
            if self.op == "eq":
                raise ValueError(f"a {self.kind} threshold needs op lt, le, gt or ge")
            if self.unit not in UNITS[self.kind]:
                raise ValueError(f"unit for {self.kind} must be one of {sorted(UNITS[self.kind])} (got {self.unit!r})")
            for name in ("active", "inactive"):
                rng = getattr(self, name)
                if rng is None:
                    continue
                low, high = rng
                if low > high:
                    raise ValueError(f"{name} range must be [low, high]")
                want = name == "active"
                if any(_compare(x, self.op, float(self.value)) != want for x in (low, high)):
                    raise ValueError(f"{name} range {list(rng)} is not {'inside' if want else 'outside'} the threshold")
        elif self.kind in BOOLEAN_KINDS:
            if not isinstance(self.value, bool) or self.op != "eq":
                raise ValueError(f"{self.kind} takes op eq and a boolean value")
            if self.unit is not None or self.active or self.inactive:
                raise ValueError(f"{self.kind} takes no unit or ranges")
        else:
            if not isinstance(self.value, str) or not self.value.strip() or self.op != "eq":
                raise ValueError(f"{self.kind} takes op eq and a name")
            if not self.label:
                raise ValueError(f"{self.kind} needs a label (how the chart states it)")
            if self.unit is not None or self.active or self.inactive:
                raise ValueError(f"{self.kind} takes no unit or ranges")
        return self

    @property
    def threshold(self) -> float:
        """A numeric threshold in the unit facts are kept in (years for age)."""
        value = float(self.value)  # type: ignore[arg-type]
        return value * AGE_FACTOR[self.unit] if self.kind == "age" and self.unit else value

    def holds(self, facts: PatientFacts) -> bool:
        if self.kind == "age":
            return _compare(facts.age_years, self.op, self.threshold)
        if self.kind in ("crcl", "egfr"):
            actual = getattr(facts, self.kind)
            return actual is not None and _compare(actual, self.op, self.threshold)
        if self.kind == "weight":
            return facts.weight_kg is not None and _compare(facts.weight_kg, self.op, self.threshold)
        if self.kind == "gestational_week":
            return facts.pregnant and facts.gestational_week is not None and _compare(facts.gestational_week, self.op, self.threshold)
        if self.kind == "pregnant":
            return facts.pregnant is self.value
        if self.kind == "lactating":
            return facts.lactating is self.value
        if self.kind == "condition":
            return str(self.value).lower() in {n.lower() for n in facts.conditions}
        drugs = {str(self.value).lower(), *(m.lower() for m in self.members)}
        return any(_drug_name_matches(line.lower(), drugs) for line in facts.co_medications)

    def surface(self) -> list[str]:
        return [self.label, *self.labels] if self.label else list(self.labels)


def _drug_name_matches(line: str, drugs: set[str]) -> bool:
    """Whether a medicine line ("lisinopril 20 mg daily", or the generator's canonical "warfarin") names one of `drugs`."""
    return any(line == d or line.startswith(d + " ") or line.startswith(d.replace("_", " ") + " ") for d in drugs)


class RuleException(BaseModel):
    """When the rule does not apply. `when` (optional) makes it machine-checkable and usable for a CF pair."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=5)
    when: Condition | None = None


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    document: str = Field(min_length=5)
    year: int = Field(ge=1960, le=2100)
    section: str = Field(min_length=2)

    def cite(self) -> str:
        return f"{self.document} ({self.year}), {self.section}"


class OutsideTrigger(BaseModel):
    """Whether the rule's advice still holds when its varied trigger condition is false, and why.

    A "rule does not apply" (deactivation) member moves the patient outside the trigger and has the
    answer "None of the above". That is only right where the advice truly stops applying there: warfarin
    as first-line anticoagulation is replaced by a DOAC at any age, not only at 65 or more, so its age
    deactivation would ship a wrong gold. `advice_holds: true` stops the generator from writing that
    pair (it is counted instead); the exception pairs, where the exception itself withdraws the advice,
    are still generated. `rationale` and `source` say where the advice holds and on what authority.
    """

    model_config = ConfigDict(extra="forbid")

    advice_holds: bool
    rationale: str = Field(min_length=20)
    source: Source


class Context(BaseModel):
    """The clinical setting the generator builds vignettes in (non-target details).

    An indication may contain `{cha2ds2_vasc}`, replaced by the score the member's own facts give.
    `presupposes` maps an indication to the medicines it says the patient already takes ("above target
    on metformin"): they are added to the patient's medicines, so the list never says "none".
    """

    model_config = ConfigDict(extra="forbid")

    indication: list[str] = Field(min_length=1)
    sex: Literal["F", "M", "any"] = "any"
    age: tuple[float, float] | None = None
    distractors: list[str] = Field(default_factory=list)
    presupposes: dict[str, list[str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_indications(self) -> Context:
        unknown = sorted(set(self.presupposes) - set(self.indication))
        if unknown:
            raise ValueError(f"presupposes names an indication that is not listed: {unknown}")
        for text in self.indication:
            if "{" in text.replace("{cha2ds2_vasc}", "") or "}" in text.replace("{cha2ds2_vasc}", ""):
                raise ValueError(f"indication {text!r}: the only placeholder is {{cha2ds2_vasc}}")
        return self


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-]*$")
    medication: str = Field(min_length=2)
    drug_class: str = Field(min_length=2)
    aliases: list[str] = Field(default_factory=list)
    population: Population
    trigger: list[Condition] = Field(min_length=1)
    action: Action
    exceptions: list[RuleException] = Field(default_factory=list)
    rationale: str = Field(min_length=10)
    source: Source
    verification: str = Field(min_length=10)
    organ_system: str = Field(pattern=r"^[a-z_]+$")
    department: str = Field(pattern=r"^[a-z_]+$")
    drug_category: str = Field(pattern=r"^[a-z0-9_\-]+$")
    context: Context
    counterfactual: bool = True
    outside_trigger: OutsideTrigger | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Rule:
        if sum(c.vary for c in self.trigger) > 1:
            raise ValueError("at most one trigger condition may be marked vary")
        if self.action == "avoid_combination" and not any(c.kind == "co_medication" for c in self.trigger):
            raise ValueError("avoid_combination needs a co_medication condition in the trigger")
        if self.population == "pregnancy" and not any(c.kind in ("pregnant", "gestational_week") for c in self.trigger):
            raise ValueError("a pregnancy rule needs a pregnant or gestational_week condition")
        if self.population == "lactation" and not any(c.kind == "lactating" for c in self.trigger):
            raise ValueError("a lactation rule needs a lactating condition")
        if self.outside_trigger is not None and self.outside_trigger.advice_holds and not self.counterfactual:
            raise ValueError("outside_trigger matters only for a rule with counterfactual pairs (counterfactual: false here)")
        return self

    @property
    def trigger_pair_valid(self) -> bool:
        """Whether moving the varied condition outside the trigger really withdraws the advice."""
        return self.outside_trigger is None or not self.outside_trigger.advice_holds

    @property
    def varied(self) -> Condition:
        """The trigger condition a trigger-pair counterfactual changes."""
        return next((c for c in self.trigger if c.vary), self.trigger[0])

    def exempted(self, facts: PatientFacts) -> bool:
        return any(e.when is not None and e.when.holds(facts) for e in self.exceptions)

    def applies(self, facts: PatientFacts) -> bool:
        return all(c.holds(facts) for c in self.trigger) and not self.exempted(facts)

    def names(self) -> set[str]:
        return {n.lower() for n in (self.medication, *self.aliases)}


def drug_flagged(drug: str, facts: PatientFacts, rules: list[Rule]) -> list[str]:
    """Ids of the rules under which `drug` is potentially inappropriate for this patient."""
    return [r.id for r in rules if drug.lower() in r.names() and r.applies(facts)]


def load_rules(path: str | Path) -> list[Rule]:
    """Load and validate a rules YAML (top-level key `rules`); errors name the file, rule id and field."""
    rules = load_entries(path, "rules", Rule)
    for rule in rules:
        for i, c in enumerate(rule.trigger):
            if c.kind == "gestational_week" and not any(x.kind == "pregnant" for x in rule.trigger):
                raise CatalogError(path, "a gestational_week condition needs a pregnant: true condition beside it",
                                   entry=rule.id, field=f"trigger.{i}")
    return rules
