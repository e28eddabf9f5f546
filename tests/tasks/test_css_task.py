"""build_css_task: residue handling reaches the task's metadata and samples."""

import inspect

import pytest

from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.exports.docs import task_function
from clinical_cf.suites import SUITES
from clinical_cf.tasks.arguments import TaskInputError
from clinical_cf.tasks.css_task import build_css_task
from tests.helpers import HANDWRITTEN_CASES


def _cases_with_history(tmp_path):
    # A prior year of trastuzumab: a HER2-negative flip of this chart cannot be made coherent.
    cases = load_cases(HANDWRITTEN_CASES)
    breast = cases[0].model_copy(update={"sections": {**cases[0].sections, "medications": "2019-2020: trastuzumab, completed."}})
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(c.model_dump_json() + "\n" for c in [breast, *cases[1:]]))
    return path, breast.case_id


def test_residue_tuples_are_dropped_and_counted_by_default(tmp_path):
    path, case_id = _cases_with_history(tmp_path)
    task = build_css_task(cases=str(path), families="A", controls="none", unreviewed="allow")
    assert f"{case_id}:A1_her2_positive_to_negative" not in {s.id for s in task.dataset}
    assert task.metadata["intervention_counts"]["A1_her2_positive_to_negative"]["residue"] == 1
    assert task.metadata["residue"] == "drop"


def test_kept_residue_tuples_carry_their_offending_lines(tmp_path):
    path, case_id = _cases_with_history(tmp_path)
    task = build_css_task(cases=str(path), families="A", controls="none", residue="keep", unreviewed="allow")
    sample = next(s for s in task.dataset if s.id == f"{case_id}:A1_her2_positive_to_negative")
    assert sample.metadata["counterfactual_verdict"] == "residue"
    assert sample.metadata["residue"][0]["section"] == "medications"
    assert "trastuzumab" in sample.metadata["residue"][0]["line"]
    complete = [s for s in task.dataset if s.metadata["counterfactual_verdict"] == "complete"]
    assert complete and all(s.metadata["residue"] == [] for s in complete)


def _css_variants() -> list[str]:
    return [name for name in SUITES["css"].tasks if getattr(task_function(name), "variant_of", None) is build_css_task]


def test_the_css_variants_are_found():
    assert {"css", "css_agent", "css_family_d", "css_agent_family_d"} <= set(_css_variants())


@pytest.mark.parametrize("name", _css_variants())
def test_a_css_task_takes_the_arguments_of_its_setting_only(name):
    """`-T tuples=` means nothing to a single-shot task and `-T scale=` nothing to an agent: each takes its setting's only."""

    task = task_function(name)
    taken = set(inspect.signature(task).parameters)
    agent, single_shot = {"tuples", "section_cap_bytes", "max_messages"}, {"scale", "summary_max_tokens", "recommend_max_tokens"}
    mine, other = (agent, single_shot) if task.fixed["setting"] == "agent" else (single_shot, agent)
    assert mine <= taken and not other & taken and "setting" not in taken
    with pytest.raises(TaskInputError, match=f"does not take '{sorted(other)[0]}'"):
        task(**{sorted(other)[0]: 1})


def test_interventions_select_single_interventions_within_a_family():
    task = build_css_task(cases=str(HANDWRITTEN_CASES), families="D", interventions="D1_remove_resection", controls="none",
                          unreviewed="allow")
    assert {s.metadata["intervention_id"] for s in task.dataset} == {"D1_remove_resection"}
    assert task.metadata["interventions"] == ["D1_remove_resection"]


@pytest.mark.parametrize("interventions", ["A1_her2_positive_to_negative", "D9_nothing"])
def test_an_intervention_outside_the_families_is_refused_naming_the_choices(interventions):
    with pytest.raises(TaskInputError, match="choose from D1_remove_resection, D2_add_resection"):
        build_css_task(cases=str(HANDWRITTEN_CASES), families="D", interventions=interventions, unreviewed="allow")
