"""MedPIC rules: the bundled catalog is valid and locked; bad rules name the file, the rule id and the field."""

import pytest
import yaml

from clinical_cf.catalog.medpic import RULES_PATH
from clinical_cf.catalog.medpic.rules import PatientFacts, drug_flagged, load_rules
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import read_lock

RULES = load_rules(RULES_PATH)


def test_catalog_size_sources_and_lock():
    assert len(RULES) >= 80 and read_lock(RULES_PATH).registered
    populations = {r.population for r in RULES}
    assert {"older_adult", "pregnancy", "lactation", "paediatric", "renal"} <= populations
    assert all(r.source.document and r.source.year and r.source.section and r.verification for r in RULES)
    documents = " ".join(r.source.document for r in RULES)
    for source in ("Beers", "KIDs", "FDA", "TGA"):
        assert source in documents
    assert {r.action for r in RULES} == {"avoid", "avoid_combination", "adjust_dose", "choose_alternative"}


def test_rules_evaluate_on_structured_facts():
    by_id = {r.id: r for r in RULES}
    old = PatientFacts(age_years=78, sex="F")
    assert by_id["beers-t2-diphenhydramine"].applies(old)
    assert not by_id["beers-t2-diphenhydramine"].applies(old.model_copy(update={"age_years": 52}))
    renal = PatientFacts(age_years=80, sex="M", crcl=24)
    assert drug_flagged("nitrofurantoin", renal, RULES) == ["beers-t2-nitrofurantoin-renal"]
    assert drug_flagged("nitrofurantoin", renal.model_copy(update={"crcl": 52}), RULES) == []
    # an exception withdraws the rule
    withdrawal = PatientFacts(age_years=70, sex="M", conditions=["alcohol_withdrawal"])
    assert not by_id["beers-t2-lorazepam"].applies(withdrawal)
    # gestational-week threshold needs a pregnancy at or after week 20
    assert by_id["preg-ibuprofen-20wk"].applies(PatientFacts(age_years=30, sex="F", pregnant=True, gestational_week=24))
    assert not by_id["preg-ibuprofen-20wk"].applies(PatientFacts(age_years=30, sex="F", pregnant=True, gestational_week=12))
    # infants: thresholds in months or days are compared in years
    assert by_id["kids-promethazine"].applies(PatientFacts(age_years=10 / 12, sex="M"))
    assert by_id["kids-ceftriaxone-neonate-calcium"].applies(
        PatientFacts(age_years=12 / 365.25, sex="F", co_medications=["iv_calcium"]))


def _broken(tmp_path, rule_id: str, **changes) -> str:
    raw = yaml.safe_load(RULES_PATH.read_text())
    rule = next(r for r in raw["rules"] if r["id"] == rule_id)
    for key, value in changes.items():
        if value is None:
            rule.pop(key)
        else:
            rule[key] = value
    path = tmp_path / "my_rules.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return str(path)


@pytest.mark.parametrize(
    "rule_id, changes, field",
    [
        ("beers-t6-gabapentin", {"trigger": [{"kind": "crcl", "op": "lt", "value": "sixty", "unit": "mL/min"}]}, "trigger.0"),
        ("beers-t6-gabapentin", {"trigger": [{"kind": "crcl", "op": "lt", "value": 60, "unit": "mg/dL"}]}, "trigger.0"),
        ("beers-t6-gabapentin", {"trigger": [{"kind": "crcl", "op": "eq", "value": 60, "unit": "mL/min"}]}, "trigger.0"),
        (
            "beers-t6-gabapentin",
            {"trigger": [{"kind": "crcl", "op": "lt", "value": 60, "unit": "mL/min", "active": [65, 80]}]},
            "trigger.0",
        ),
        ("beers-t6-gabapentin", {"trigger": [{"kind": "kidney", "op": "lt", "value": 60}]}, "trigger.0.kind"),
        ("beers-t6-gabapentin", {"source": None}, "source"),
        ("beers-t6-gabapentin", {"source": {"document": "AGS Beers Criteria", "year": "recent", "section": "Table 6"}}, "source.year"),
        ("beers-t6-gabapentin", {"action": "monitor"}, "action"),
        ("beers-t6-gabapentin", {"severity": "high"}, "severity"),
        ("beers-t2-zolpidem", {"trigger": [{"kind": "condition", "value": "insomnia"}]}, "trigger.0"),
        ("preg-lisinopril", {"trigger": [{"kind": "age", "op": "ge", "value": 18, "unit": "years"}]}, "(entry)"),
        # where the advice holds outside the trigger needs its reason and its source
        ("beers-t6-gabapentin", {"outside_trigger": {"advice_holds": True, "rationale": "holds at any kidney function, trust me"}},
         "outside_trigger.source"),
        ("beers-t6-gabapentin", {"outside_trigger": {"advice_holds": "maybe", "rationale": "x" * 30,
                                                     "source": {"document": "Some guideline", "year": 2020, "section": "1.2"}}},
         "outside_trigger.advice_holds"),
        ("beers-t6-gabapentin", {"context": {"indication": ["postherpetic neuralgia"], "presupposes": {"gout": ["colchicine"]}}}, "context"),
        ("kids-codeine", {"outside_trigger": {"advice_holds": True, "rationale": "x" * 30,
                                              "source": {"document": "Some guideline", "year": 2020, "section": "1.2"}}}, "(entry)"),
    ],
)
def test_invalid_rule_names_file_rule_and_field(tmp_path, rule_id, changes, field):
    with pytest.raises(CatalogError) as info:
        load_rules(_broken(tmp_path, rule_id, **changes))
    err = info.value
    assert err.file.endswith("my_rules.yaml") and err.entry == rule_id and err.field == field
    assert "my_rules.yaml" in str(err) and rule_id in str(err)


def test_duplicate_rule_id_and_gestational_week_without_pregnancy(tmp_path):
    raw = yaml.safe_load(RULES_PATH.read_text())
    raw["rules"].append(dict(raw["rules"][0]))
    path = tmp_path / "dup.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(CatalogError, match="duplicate id"):
        load_rules(path)
    bad = _broken(tmp_path, "preg-ibuprofen-20wk", population="general",
                  trigger=[{"kind": "gestational_week", "op": "ge", "value": 20, "unit": "weeks"}])
    with pytest.raises(CatalogError) as info:
        load_rules(bad)
    assert info.value.entry == "preg-ibuprofen-20wk" and info.value.field == "trigger.0"


def test_incoherent_patient_facts_are_refused():
    with pytest.raises(ValueError):
        PatientFacts(age_years=40, sex="M", pregnant=True, gestational_week=20)
    with pytest.raises(ValueError):
        PatientFacts(age_years=30, sex="F", gestational_week=20)
