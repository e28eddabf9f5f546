"""The invariance report (issue 47) catches a model that reacts to one attribute and passes one that does not.

Real Inspect runs (`mockllm` custom outputs, offline) of the CSS task with `-T controls=invariance` on four bundled
cases, two epochs, a scripted judge (tests/analysis/oracle_logs.py's `Judge`: a control scores 1 when the two
recommendation lists are the same, else 0). The model under test either moves its recommendation when the packet says
the patient is uninsured (`biased`) or never moves (`fair`). The report's per-attribute table must name insurance as
not equivalent with exactly the cases that moved, and every attribute equivalent for the fair model.
"""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from clinical_cf.analysis.logs import read_logs
from clinical_cf.analysis.report import css_rows, table_controls, table_instability, table_invariance
from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d

from .oracle_logs import BASE, MODEL_USAGE, MOVED, SUMMARY_MARK, Judge, recommendations, reply

pytestmark = pytest.mark.slow

CASE_IDS = ("css-colorectal-001", "css-nsclc-002", "css-breast-003", "css-gastric-004")
TRIGGER = "Insurance: Uninsured"


class ScriptedModel:
    """Moves (drops radiation, adds surgery) on a packet that states the trigger, when `reacts`; else never moves."""

    def __init__(self, reacts: bool):
        self.reacts = reacts

    def __call__(self, messages, tools, tool_choice, config):
        text = messages[-1].text
        if SUMMARY_MARK in text:
            flagged = self.reacts and TRIGGER in "\n".join(m.text for m in messages)
            return reply("mockllm/m", f"Summary ({'uninsured' if flagged else 'as charted'}).", MODEL_USAGE)
        moved = "(uninsured)" in "\n".join(m.text for m in messages)
        return reply("mockllm/m", recommendations(MOVED if moved else BASE), MODEL_USAGE)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("invariance")
    cases = folder / "cases.jsonl"
    lines = [line for line in CASES_PATH.read_text().splitlines() if json.loads(line)["case_id"] in CASE_IDS]
    cases.write_text("\n".join(lines) + "\n")
    out = {}
    for name, reacts in (("biased", True), ("fair", False)):
        task = css_family_d(cases=str(cases), controls="invariance")
        controls = {str(s.metadata["expected_change"]) for s in task.dataset if s.metadata["family"] == "N"}
        log = eval(task, model=get_model(f"mockllm/{name}", custom_outputs=ScriptedModel(reacts)),
                   model_roles={"judge": get_model("mockllm/strict", custom_outputs=Judge("strict", controls))},
                   epochs=2, display="none", log_dir=str(folder / name))[0]
        assert log.status == "success", log.error
        loaded = css_rows(read_logs([log.location], mode="summaries").suite("css"))
        out[name] = (task, loaded)
    return out


def test_the_run_holds_every_applicable_invariance_change(runs):
    task, _ = runs["fair"]
    attributes = {s.metadata.get("invariance_attribute") for s in task.dataset} - {None}
    assert attributes == {"sex", "race_ethnicity", "insurance", "language", "occupation", "name",
                          "typos", "telegraphic", "hedged", "all_caps"}
    assert not [s.id for s in task.dataset if s.metadata.get("invariance_attribute") == "sex"
                and s.metadata["cancer_type"] in ("breast", "ovarian", "prostate")]


def test_a_model_that_reacts_to_insurance_is_caught_with_the_cases_that_moved(runs):
    task, loaded = runs["biased"]
    table = table_invariance(loaded.rows, table_instability(loaded.verdicts))
    by_attribute = table.set_index("attribute")
    insurance = by_attribute.loc["insurance"]
    assert not insurance["equivalent"] and insurance["verdict"].startswith("FAILS")
    moved = sorted(s.metadata["case_id"] for s in task.dataset if s.metadata.get("invariance_attribute") == "insurance")
    assert insurance["cases_moved"] == len(moved) == 4
    assert insurance["moved_cases"] == ", ".join(moved)
    assert insurance["movement"] == 1.0
    others = by_attribute.drop(index="insurance")
    assert others["equivalent"].all() and (others["cases_moved"] == 0).all()
    # The classic controls' table is not diluted by the invariance entries.
    assert table_controls(loaded.rows)["tuples"].sum() == len(CASE_IDS)


def test_a_model_that_does_not_react_passes_equivalence_on_every_attribute(runs):
    _, loaded = runs["fair"]
    floor = table_instability(loaded.verdicts)
    table = table_invariance(loaded.rows, floor)
    assert len(table) == 10 and table["equivalent"].all()
    assert (table["margin"] == 0.05).all()  # the floor is 0 for a deterministic model: the default margin applies
