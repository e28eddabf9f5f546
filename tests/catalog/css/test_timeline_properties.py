"""Properties of the patient timeline (issue 42), on cases generated beyond the bundled cohort and on the cohort.

The generator draws what the cohort generator draws (cancer type, scenario and its variant: T/N/M, nodes, sites,
resection, lines, markers and dates all follow from the seed), with seeds other than the cohort's, and applies every
in-scope A-E intervention on the structured route. Every baseline and counterfactual must satisfy the timeline
constraints of `catalog.css.invariants` (rules 14-21; each declared once there with its source).
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH, cohort
from clinical_cf.catalog.css.arms import arms, check
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.invariants import RULES, TIMELINE_RULE_IDS
from clinical_cf.catalog.css.schema import load_cases

TIMELINE_RULES = tuple(r for r in RULES if r.id in TIMELINE_RULE_IDS)


@lru_cache(maxsize=1)
def _catalog():
    return load_catalog(CATALOG_PATH)


@st.composite
def generated_case(draw, scenarios: tuple[str, ...] = ("resected", "unresected", "met_naive", "met_pretreated")):
    """A case the cohort generator would make with another seed: any type, any of its scenario slots in `scenarios`."""
    cancer_type = draw(st.sampled_from(sorted(cohort.PLANNERS)))
    slots = cohort._scenarios(cancer_type)
    index = draw(st.sampled_from([i for i, (scenario, _) in enumerate(slots, start=1) if scenario in scenarios]))
    seed = draw(st.integers(0, 2**31 - 1))
    scenario, variant = slots[index - 1]
    return cohort._case(seed, cancer_type, index, scenario, variant)


def _broken(case, rules=TIMELINE_RULES) -> list[str]:
    return [f"{arm}: {v}" for arm, mutated in arms(case, _catalog()) for v in check(mutated, rules)]


def test_the_timeline_rules_are_declared_with_a_source():
    assert len(TIMELINE_RULES) == 9
    assert all(rule.source for rule in TIMELINE_RULES)


# Each example renders the case and up to ~12 counterfactuals (about 0.1 s each): fewer examples than the profile's.
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_case())
def test_every_arm_of_a_generated_case_keeps_the_timeline_constraints(case):
    assert _broken(case) == []


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_case(("resected", "unresected")))
def test_e1_and_d2_on_generated_non_metastatic_cases_keep_the_timeline_constraints(case):
    """Non-metastatic cases are where E1 injects metastases (after a resection) and D2 inserts one."""
    assert _broken(case) == []


def _first(case, intervention_id):
    return next(m for arm, m in arms(case, _catalog()) if arm == intervention_id)


def _rules_broken(case) -> set[str]:
    return {v.rule for v in check(case, TIMELINE_RULES)}


def test_the_constraints_catch_what_review_3_found():
    """Each constraint fails on the defect it names (a property that cannot fail would prove nothing)."""
    cases = {c.case_id: c for c in load_cases(CASES_PATH)}
    case = cases["css-prostate-001"]
    e1 = _first(case, "E1_upstage_to_metastatic")
    found = e1.record.metastasis_date
    undetectable = [lab.model_copy(update={"value": 0.03}) if lab.name == "PSA" and lab.date >= found else lab for lab in e1.record.labs]
    assert "marker_after_metastases" in _rules_broken(e1.model_copy(update={"record": e1.record.model_copy(update={"labs": undetectable})}))
    early = e1.record.model_copy(update={"metastasis_date": e1.record.resection.date + timedelta(days=10)})
    assert "metastases_after_resection" in _rules_broken(e1.model_copy(update={"record": early}))
    first = min(lab.date for lab in case.record.labs)
    wrong = [lab.model_copy(update={"value": 9.9}) if lab.date == first and lab.name == "ANC" else lab for lab in case.record.labs]
    assert "cbc_coherent" in _rules_broken(case.model_copy(update={"record": case.record.model_copy(update={"labs": wrong})}))
    jump = [lab.model_copy(update={"value": lab.value + 4}) if lab.date == first and lab.name == "Hgb" else lab for lab in case.record.labs]
    assert "haemoglobin_course" in _rules_broken(case.model_copy(update={"record": case.record.model_copy(update={"labs": jump})}))
    bare = case.record.resection.model_copy(update={"pathology": "R0 resection, margins negative"})
    assert "resection_pathology" in _rules_broken(case.model_copy(update={"record": case.record.model_copy(update={"resection": bare})}))


@pytest.mark.slow
def test_every_arm_of_the_bundled_cohort_keeps_the_timeline_constraints():
    problems = [f"{c.case_id} {p}" for c in load_cases(CASES_PATH) for p in _broken(c)]
    assert problems == [], f"{len(problems)} problems, e.g. {problems[:5]}"
