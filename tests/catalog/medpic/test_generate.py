"""MedRule2Pair: deterministic regeneration, sizes, CF/GF answer consistency and the self-check."""

import re
from collections import Counter

import pytest
import yaml

from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.catalog.medpic.generate import (
    PLAUSIBLE_BACKGROUND,
    age_coherence_problems,
    age_group,
    generate,
    heart_rate_band,
    to_jsonl,
    write_questions,
)
from clinical_cf.catalog.medpic.questions import load_questions, self_check
from clinical_cf.catalog.medpic.rules import drug_flagged, load_rules
from clinical_cf.core.errors import CatalogError

RULES = load_rules(RULES_PATH)
QUESTIONS = load_questions(QUESTIONS_PATH)


def test_regeneration_gives_identical_bytes(tmp_path):
    assert to_jsonl(generate(RULES)) == QUESTIONS_PATH.read_text(encoding="utf-8")
    assert write_questions(tmp_path / "q.jsonl").read_bytes() == QUESTIONS_PATH.read_bytes()


def test_sizes_and_balance():
    kinds = Counter(q.kind for q in QUESTIONS)
    ops = Counter(q.operation for q in QUESTIONS if q.kind == "cf")
    pairs = {q.pair_id for q in QUESTIONS if q.pair_id}
    assert len(QUESTIONS) >= 400 and kinds["cf"] >= 150 and len(pairs) >= 75  # 12 trigger pairs are not generated (outside_trigger)
    assert ops["activation"] == ops["deactivation"] == len(pairs)
    assert sum(len(q.answer) > 1 for q in QUESTIONS) >= 40  # multi-answer questions
    assert sum(q.answer == [q.none_letter] for q in QUESTIONS) == ops["deactivation"]
    assert len({q.rule_id for q in QUESTIONS}) == len(RULES)
    for dim in ("organ_system", "department", "drug_category", "special_population", "patient_info_type", "reasoning_operation"):
        assert len({getattr(q.dimensions, dim) for q in QUESTIONS}) >= 3, dim
    info = Counter(q.dimensions.patient_info_type for q in QUESTIONS if q.kind == "cf")
    assert {"age_threshold", "renal_threshold", "pregnancy_status", "condition", "drug_interaction", "exception"} <= set(info)


def test_self_check_passes_and_pairs_change_only_the_rule_information():
    assert self_check(QUESTIONS, RULES) == []
    by_pair: dict[str, dict] = {}
    for q in QUESTIONS:
        if q.pair_id:
            by_pair.setdefault(q.pair_id, {})[q.operation] = q
    for members in by_pair.values():
        act, deact = members["activation"], members["deactivation"]
        assert act.options == deact.options and act.question == deact.question
        assert act.changed_fact.after == deact.changed_fact.before and act.changed_fact.before == deact.changed_fact.after
        # non-target sentences are identical: only sentences naming the changed information differ
        a, d = set(re.split(r"(?<=\.) ", act.vignette)), set(re.split(r"(?<=\.) ", deact.vignette))
        assert 1 <= len(a ^ d) <= 6


def test_distractors_are_never_flagged_and_gold_comes_from_the_facts():
    for q in QUESTIONS:
        rule = next(r for r in RULES if r.id == q.rule_id)
        for letter, drug in q.option_drugs.items():
            flagged = bool(drug and drug_flagged(drug, q.patient, RULES))
            assert flagged == (letter in q.answer and drug is not None)
            if drug and drug.lower() not in rule.names() and q.kind == "cf":
                assert not flagged  # CF options other than the rule's drug never change membership


def test_self_check_catches_a_wrong_gold_and_a_pair_that_does_not_flip():
    questions = [q.model_copy(deep=True) for q in QUESTIONS]
    gf = next(q for q in questions if q.kind == "gf")
    gf.answer = [gf.none_letter]
    deact = next(q for q in questions if q.operation == "deactivation")
    act = next(q for q in questions if q.pair_id == deact.pair_id and q.operation == "activation")
    deact.answer, deact.patient = act.answer, act.patient
    problems = self_check(questions, RULES)
    assert any(gf.id in p and "facts give" in p for p in problems)
    assert any(deact.pair_id in p and "not in the deactivation answer" in p for p in problems)


def test_surface_form_varies():
    text = " ".join(q.vignette for q in QUESTIONS)
    for phrase in ("year-old", "y/o", "years old", "month-old", "CrCl", "Creatinine clearance", "eGFR",
                   "weeks pregnant", "/40", "breastfeeding", "History and current problems", "Problem list"):
        assert phrase in text, phrase
    assert len({q.question for q in QUESTIONS}) >= 3


def test_bad_question_file_names_file_question_and_field(tmp_path):
    lines = QUESTIONS_PATH.read_text().splitlines()
    path = tmp_path / "qs.jsonl"
    path.write_text("\n".join([lines[0].replace('"answer": ["', '"answer": ["Z'), *lines[1:5]]) + "\n")
    with pytest.raises(CatalogError) as info:
        load_questions(path)
    assert info.value.entry == QUESTIONS[0].id and "qs.jsonl" in str(info.value)
    # a pair with only one member's partner missing is refused at load time too
    cf = [line for line in lines if '"operation": "activation"' in line][:1]
    path.write_text("\n".join(cf + [cf[0].replace(":activation", ":act2")]) + "\n")
    with pytest.raises(CatalogError, match="one activation and one deactivation"):
        load_questions(path)


def test_rules_without_ranges_use_default_draws_on_the_right_side(tmp_path):
    rules = [
        {"id": "my-renal", "medication": "examplamide", "drug_class": "example class", "population": "renal",
         "trigger": [{"kind": "crcl", "op": "lt", "value": 30, "unit": "mL/min"}], "action": "avoid",
         "rationale": "Accumulates when clearance is low.", "verification": "Test fixture rule, not clinical.",
         "source": {"document": "Test fixture", "year": 2025, "section": "n/a"},
         "organ_system": "renal", "department": "nephrology", "drug_category": "example",
         "context": {"indication": ["a test indication"]}},
        {"id": "my-weight", "medication": "weightamab", "drug_class": "other class", "population": "general",
         "trigger": [{"kind": "weight", "op": "lt", "value": 50, "unit": "kg"}], "action": "adjust_dose",
         "rationale": "Dose depends on body weight.", "verification": "Test fixture rule, not clinical.",
         "source": {"document": "Test fixture", "year": 2025, "section": "n/a"},
         "organ_system": "other", "department": "general_medicine", "drug_category": "example",
         "context": {"indication": ["a test indication"]}},
    ]
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"rules": rules}))
    loaded = load_rules(path)
    questions = generate(loaded)
    assert self_check(questions, loaded) == []
    renal = [q for q in questions if q.rule_id == "my-renal" and q.kind == "cf"]
    assert {q.operation: q.patient.crcl < 30 for q in renal} == {"activation": True, "deactivation": False}
    weight = [q for q in questions if q.rule_id == "my-weight" and q.kind == "cf"]
    assert {q.operation: q.patient.weight_kg < 50 for q in weight} == {"activation": True, "deactivation": False}


def test_a_member_moved_across_an_age_threshold_keeps_a_setting_of_its_own_age():
    assert age_coherence_problems(QUESTIONS) == []
    crossing = 0
    by_pair: dict[str, dict] = {}
    for q in QUESTIONS:
        if q.pair_id and q.changed_fact and q.changed_fact.kind == "age":
            by_pair.setdefault(q.pair_id, {})[q.operation] = q
    for members in by_pair.values():
        ages = [m.patient.age_years for m in members.values()]
        if len({age_group(a) for a in ages}) > 1:
            crossing += 1
            for m in members.values():
                group = age_group(m.patient.age_years)
                assert (
                    not {c for c in m.patient.conditions if c in set().union(*PLAUSIBLE_BACKGROUND.values())} - PLAUSIBLE_BACKGROUND[group]
                )
                rate = int(re.search(r"(?:heart rate|pulse) (\d+)/min", m.vignette).group(1))
                low, high = heart_rate_band(m.patient.age_years)
                assert low <= rate <= high, m.id
    assert crossing >= 15  # older adult vs adult and infant vs child pairs are checked


def test_the_age_coherence_check_catches_an_adult_with_a_childs_setting():
    q = next(q for q in QUESTIONS if q.kind == "cf" and q.patient.age_years >= 18)
    bad = q.model_copy(update={
        "patient": q.patient.model_copy(update={"conditions": ["born at term, immunisations up to date"]}),
        "vignette": q.vignette + " Temperature 38.1 °C, heart rate 128/min.",
    })
    problems = age_coherence_problems([bad])
    assert any("background" in p for p in problems)
