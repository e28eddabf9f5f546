"""Every arm of a case on the structured route: its baseline and the counterfactual of each intervention that applies.

Why this module exists: the timeline constraints (`catalog.css.invariants`, rules 14-21) are checked on every
baseline and counterfactual, of the bundled cohort and of cases generated beyond it (the property tests and
`bench/css_content.py`). Expansion drops a counterfactual that breaks a rule its baseline did not break; this lists
them all, before any drop, so a measurement counts what the generator and the mutations produce.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pydantic import ValidationError

from clinical_cf.catalog.css.interventions import Catalog
from clinical_cf.catalog.css.invariants import RULES, Rule, Violation
from clinical_cf.catalog.css.mutate import MutationError, apply_structured_ops
from clinical_cf.catalog.css.schema import Case


def arms(case: Case, catalog: Catalog, families: str = "ABCDE") -> Iterator[tuple[str, Case]]:
    """('baseline', case), then (intervention id, mutated case) for each in-scope structured intervention of `families`."""
    yield "baseline", case
    for intervention in catalog.interventions:
        if intervention.family not in families or not intervention.structured:
            continue
        if not intervention.applies_to.matches(case) or intervention.excluded_by(case) is not None:
            continue
        try:
            yield intervention.id, apply_structured_ops(case, intervention)
        except (ValidationError, MutationError):
            continue  # a schema-invalid counterfactual is dropped by expansion as `record_schema`, counted there


def check(case: Case, rules: Iterable[Rule] = RULES) -> list[Violation]:
    record = case.record
    if record is None:
        return []
    return [Violation(rule.id, problem) for rule in rules for problem in rule.check(case, record)]


def arm_violations(cases: Iterable[Case], catalog: Catalog, rules: Iterable[Rule] = RULES,
                   families: str = "ABCDE") -> dict[str, list[str]]:
    """Rule id -> the '<case>:<arm>' ids that break it (each arm counted once per rule)."""
    rules = tuple(rules)
    out: dict[str, list[str]] = {rule.id: [] for rule in rules}
    for case in cases:
        for arm, mutated in arms(case, catalog, families):
            for rule_id in dict.fromkeys(v.rule for v in check(mutated, rules)):
                out[rule_id].append(f"{case.case_id}:{arm}")
    return out
