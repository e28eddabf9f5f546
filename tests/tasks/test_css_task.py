"""build_css_task: residue handling reaches the task's metadata and samples."""

import pytest

from clinical_cf.catalog.css.schema import load_cases
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


@pytest.mark.parametrize("name", ["css", "css_family_a", "css_family_b", "css_family_c", "css_family_d", "css_family_e",
                                  "css_agent", "css_agent_family_d"])
def test_a_css_task_takes_the_arguments_of_its_setting_only(name):
    import inspect

    from clinical_cf import _registry
    from clinical_cf.tasks.css_task import AGENT_ARGUMENTS, SINGLE_SHOT_ARGUMENTS

    taken = set(inspect.signature(getattr(_registry, name)).parameters)
    mine, other = (AGENT_ARGUMENTS, SINGLE_SHOT_ARGUMENTS) if "agent" in name else (SINGLE_SHOT_ARGUMENTS, AGENT_ARGUMENTS)
    assert set(mine) <= taken and not set(other) & taken and "setting" not in taken
