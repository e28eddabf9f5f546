"""End to end: the MedPIC tasks on mockllm models (a model that keeps its risk judgment after the change, and a judge)."""

import pytest
import yaml
from inspect_ai import eval

from clinical_cf.analysis.medpic import (
    joint_outcomes,
    medpic_report_table,
    medpic_rows,
    rationale_summary,
)
from clinical_cf.catalog.medpic import QUESTIONS_PATH, RULES_PATH
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import UnregisteredCatalogError
from clinical_cf.scorers.medpic import summarise
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.medpic_cf.medpic_cf import medpic_cf
from clinical_cf.tasks.medpic_gf.medpic_gf import medpic_gf
from helpers import MockModel, data_blocks

POPULATION = "renal"


def sticky_clinician(task):
    """Right on GF and activation questions; on deactivation questions keeps the pre-change selection while
    noting the changed value (the paper's failure). One reply is unparseable."""
    by_input = {s.input: s.metadata for s in task.dataset}
    first = task.dataset[0].input

    def respond(prompt: str) -> str:
        meta = by_input[prompt]
        if prompt == first:
            return "I would need to see the full medication chart before deciding."
        if meta["operation"] == "deactivation":
            letters = meta["partner_answer"]
            return f"The patient has {meta['changed_fact']['after']}, but this drug accumulates.\n**Answer:** {' and '.join(letters)}"
        return f"Rationale: flagged by kidney function.\nFinal answer: {', '.join(x.lower() for x in meta['answer'])}"

    return respond


@pytest.mark.slow  # a MedPIC eval with its rationale judge
def test_medpic_end_to_end_with_rationale_judge():
    # The mock answers on ANSWER lines to the plain prompt it is keyed by; no reader role (issue 21 arguments).
    task = medpic(populations=POPULATION, rationale_judge=True, json_schema=False, reader="none")
    model = MockModel("mockllm/model", sticky_clinician(task))
    judge = MockModel(
        "mockllm/model",
        lambda p: (
            '{"mentions": true, "evidence": "x"}'
            if any(w in data_blocks(p)["RESPONSE"] for w in ("CrCl", "eGFR"))
            else '{"mentions": false}'
        ),
    )
    log = eval(task, model=model.model, model_roles={"judge": judge.model}, display="none", log_format="json")[0]
    assert log.status == "success", log.error
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    samples = log.samples
    n = len(samples)
    rows = [{"kind": s.metadata["kind"], "operation": s.metadata["operation"], "pair_id": s.metadata["pair_id"],
             "correct": 1.0 if s.scores["medpic_exact_set"].value == "C" else 0.0,
             "parsed": s.scores["medpic_exact_set"].metadata["parsed_ok"]} for s in samples]
    expected = summarise(rows)
    assert metrics["deactivation_accuracy"] == 0.0 and metrics["pair_accuracy"] == 0.0
    assert metrics["activation_accuracy"] == 1.0
    assert metrics["unparseable"] == 1 and expected["unparseable"] == 1
    assert metrics["gf_accuracy"] == pytest.approx(expected["gf_accuracy"]) and expected["gf_accuracy"] < 1.0
    assert metrics["gf_cf_gap"] == pytest.approx(expected["gf_accuracy"] - 0.5)
    assert metrics["accuracy"] == pytest.approx(expected["accuracy"])
    # Every deactivation answer was wrong, mentioned the changed CrCl and kept the partner's selection.
    assert metrics["mention_rate"] == 1.0 and metrics["retained_selection_rate"] == 1.0
    deact = [s for s in samples if s.metadata["operation"] == "deactivation"]
    assert deact and all(s.scores["rationale_mentions_change"].metadata["retained_selection"] for s in deact)
    meta = samples[0].metadata
    for key in ("rule_id", "pair_id", "kind", "operation", "organ_system", "department", "drug_category",
                "special_population", "patient_info_type", "reasoning_operation", "catalog_sha256"):
        assert key in meta
    assert meta["catalog_registered"] is True and n == sum(1 for _ in task.dataset)
    # pair members never see each other
    for s in deact:
        assert s.metadata["partner_id"] not in s.input and "None of the above" in s.input

    path = log.location
    rows_df = medpic_rows([path])
    assert len(rows_df) == n and rows_df["mentions"].notna().sum() == len(deact)
    table, markdown = medpic_report_table([path], n_resamples=200)
    assert table.loc[0, "pair_accuracy"] == 0.0 and "| mockllm/model |" in markdown
    assert table.loc[0, "gf_accuracy_lo"] <= table.loc[0, "gf_accuracy"] <= table.loc[0, "gf_accuracy_hi"]
    assert joint_outcomes(rows_df).loc[0, "trigger_only"] == len(deact)
    assert rationale_summary(rows_df).loc[0, "mention_rate"] == 1.0
    assert rationale_summary(rows_df).loc[0, "retained_selection_rate"] == 1.0  # computed without the judge


def test_gf_and_cf_wrappers_select_kinds():
    assert {s.metadata["kind"] for s in medpic_gf(populations="pregnancy").dataset} == {"gf"}
    cf = medpic_cf(operations="deactivation")
    assert {s.metadata["operation"] for s in cf.dataset} == {"deactivation"} and len(cf.dataset) >= 75  # 77 pairs: 13 trigger pairs are not generated (outside_trigger)


def test_user_rules_need_a_lock_and_questions_must_agree_with_rules(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES_PATH.read_text())
    with pytest.raises(UnregisteredCatalogError):
        medpic(rules=str(rules))
    task = medpic(rules=str(rules), allow_unregistered=True, populations="lactation")
    assert task.dataset[0].metadata["catalog_registered"] is False
    # a rule edited so that its questions' gold answers no longer follow: the run refuses
    rules.write_text(
        RULES_PATH.read_text().replace(
            "op: lt, value: 30, unit: mL/min, active: [12, 27], inactive: [45, 80]}]\n  action: avoid\n  rationale: Pulmonary",
            "op: lt, value: 10, unit: mL/min, active: [5, 8], inactive: [45, 80]}]\n  action: avoid\n  rationale: Pulmonary",
        )
    )
    with pytest.raises(CatalogError, match="disagree with the rules"):
        medpic(rules=str(rules), questions=str(QUESTIONS_PATH), allow_unregistered=True)
    bad = tmp_path / "q.jsonl"
    bad.write_text(QUESTIONS_PATH.read_text().splitlines()[0].replace('"kind": "gf"', '"kind": "xx"') + "\n")
    with pytest.raises(CatalogError) as info:
        medpic(questions=str(bad))
    assert info.value.field == "kind"


def test_list_arguments_as_inspect_passes_them():
    # `-T kinds=gf,cf` reaches the task as a list
    task = medpic(kinds=["cf"], operations=["activation", "deactivation"], populations=["renal", "pregnancy"])
    assert {s.metadata["kind"] for s in task.dataset} == {"cf"}
    assert {s.metadata["special_population"] for s in task.dataset} == {"renal", "pregnancy"}


def test_own_rules_without_questions_are_turned_into_questions(tmp_path):
    raw = yaml.safe_load(RULES_PATH.read_text())
    mine = [r for r in raw["rules"] if r["id"] in ("beers-t6-gabapentin", "preg-lisinopril", "kids-codeine")]
    mine[0] = {**mine[0], "id": "my-gabapentin"}
    path = tmp_path / "my_rules.yaml"
    path.write_text(yaml.safe_dump({"rules": mine}, sort_keys=False))
    task = medpic(rules=str(path), allow_unregistered=True)
    ids = {s.metadata["rule_id"] for s in task.dataset}
    assert ids == {"my-gabapentin", "preg-lisinopril", "kids-codeine"}
    assert len(task.dataset) == 3 * 3 + 2 * 2  # codeine has no counterfactual
