"""Each defect class of the first clinical review, checked across the whole bundled cohort and default task.

The review (shared/reviews/clinical-review-1.md) named cases; these tests look for every member of
each class, in the tuples the default task `css(controls='none')` scores (families A-E, the default
mutation mode, residue dropped) and in all 240 cases. Before catalog v4 / cohort v2 they failed with
56 wrong-direction tuples, 128+ incoherent ones, 21 contradictory baselines and 13 wrong labels.
"""

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.render import render_case_sections
from clinical_cf.catalog.css.review_classes import baseline_contradictions, incoherent, wrong_direction, wrong_labels
from clinical_cf.catalog.css.schema import ConsensusTreatment, load_cases

CASES = load_cases(CASES_PATH)


@pytest.fixture(scope="module")
def default_tuples():
    return expand_tuples(CASES, load_catalog(CATALOG_PATH), families="ABCDE").tuples


@pytest.mark.slow  # expands the whole cohort (several seconds)
@pytest.mark.parametrize(
    "name",
    [
        "A1/A2/C1 on non-metastatic gastric",
        "A4 where PD-L1 TPS < 50%",
        "E1 on ovarian",
        "A3 on cT1-2N0 HR+ breast before surgery (debatable)",
    ],
)
def test_no_tuple_has_a_direction_that_does_not_hold_in_its_setting(default_tuples, name):
    assert wrong_direction(default_tuples)[name] == []


@pytest.mark.slow  # expands the whole cohort (several seconds)
@pytest.mark.parametrize(
    "name",
    [
        "B1/B3 therapy before the scan that finds the recurrence",
        "D1 leaves the post-operative course",
        "D1 keeps a sentinel-node result or restages cN1a",
        "D2 Whipple for a body/tail pancreatic tumour",
        "D2 sentinel-node biopsy for clinically node-positive melanoma",
        "D2 sentinel-node biopsy alone for clinically node-positive breast, no neoadjuvant therapy",
        "A2 HER2-positive breast with a HER2-negative regimen and no HER2 therapy",
    ],
)
def test_no_counterfactual_packet_contradicts_itself(default_tuples, name):
    assert incoherent(default_tuples)[name] == []


@pytest.mark.parametrize(
    "name",
    [
        "metastatic at first diagnosis, then curative resection",
        "curative goals of care while metastatic",
        "R0 resection with a positive margin in the pathology",
    ],
)
def test_no_baseline_contradicts_itself(name):
    assert baseline_contradictions(CASES)[name] == []


@pytest.mark.parametrize(
    "name",
    [
        "persistent PSA after prostatectomy labelled surveillance",
        "persistent PSA after prostatectomy: salvage therapy strong without restaging",
        "sacituzumab strong with its criterion unmet",
        "HER2-low metastatic breast after chemotherapy without T-DXd strong",
    ],
)
def test_no_consensus_label_contradicts_its_case(name):
    assert wrong_labels(CASES)[name] == []


def test_the_class_checks_fire_on_content_built_the_old_way():
    """The detectors are not vacuous: cases rebuilt with the defects the review found are caught."""

    prostate = next(c for c in CASES if c.cancer_type == "prostate" and c.resected)
    record = prostate.record
    labs = [lab.model_copy(update={"value": 22.6}) if lab.name == "PSA" and lab.date > record.resection.date else lab for lab in record.labs]
    surveillance = ConsensusTreatment(treatment="surveillance (PSA monitoring)", label="strong", driver="stage", rationale="the v1 label, wrong")
    old = prostate.model_copy(update={"record": record.model_copy(update={"labs": labs}), "consensus": [surveillance]})
    assert wrong_labels([old])["persistent PSA after prostatectomy labelled surveillance"] == [prostate.case_id]

    metastatic = next(c for c in CASES if c.metastatic and c.record.metastasis_date is None and not c.resected)
    curative = [e.model_copy(update={"note": e.note.replace("Goals of care: ", "Goals of care: cure if possible; ")}) for e in metastatic.record.encounters]

    rebuilt = metastatic.model_copy(update={"record": metastatic.record.model_copy(update={"encounters": curative})})
    rebuilt = rebuilt.model_copy(update={"sections": render_case_sections(rebuilt)})
    assert baseline_contradictions([rebuilt])["curative goals of care while metastatic"] == [metastatic.case_id]
