"""A draft is "complete" only when a reader says so (issue 35): the checker role, the structured route or the reviewer.

The lexical residue check passing is not completeness: a regex draft of free text that still states the old fact in a
wording no pattern knows must not be called complete, and a file that claims it is not believed.
"""

from __future__ import annotations

import json

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import FrozenCounterfactual, freeze_tuple
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases

CATALOG = load_catalog(CATALOG_PATH)


def _draft():
    case = load_cases(CASES_PATH)[0].model_copy(update={"record": None})
    expansion = expand_tuples([case], CATALOG, "regex", families="E")
    return freeze_tuple(expansion.tuples[0], "regex")


def test_a_regex_draft_that_passes_the_residue_check_is_unchecked_not_complete():
    entry = _draft()
    assert entry.draft and entry.verdict == "unchecked"
    assert "no checker role ran" in entry.completeness


def test_a_file_claiming_complete_is_not_believed_and_an_approval_makes_it_complete():
    raw = json.loads(_draft().model_dump_json())
    raw["verdict"] = "complete"
    assert FrozenCounterfactual.model_validate(raw).verdict == "unchecked"
    entry = FrozenCounterfactual.model_validate(raw)
    approved = FrozenCounterfactual.model_validate(
        {**raw, "approved": True, "decision": "approved", "approved_sha256": entry.content_sha256, "reviewer": "dr k"}
    )
    assert approved.verdict == "complete" and approved.completeness == "complete (clinician dr k)"
    checked = FrozenCounterfactual.model_validate({**raw, "editor": "openai/gpt-5", "checker": "anthropic/claude", "draft": False})
    assert checked.verdict == "complete" and "checker role" in checked.completeness
