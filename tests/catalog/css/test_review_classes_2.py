"""Each defect class of the second clinical review, checked across the whole bundled cohort and default task.

The review (shared/reviews/clinical-review-2.md) sampled and named cases; these tests look for every member of
each class: in all 240 baselines (staging arithmetic, tumour markers, histories and labels) and in the tuples the
default task `css(controls='none')` scores (structured events, scopes). On cohort v2 / catalog v4 they failed with
25 staging CTs reporting nodes before a sentinel biopsy, 9 node counts against their N, 39 stage groups, 13 M1
subcategories, 6 yp stagings printed as the stage, 92 cases with a metastatic-level marker in non-metastatic
disease, 8 B2 marker falls, 6 B3 without castrate testosterone, 1 A2 on endocrine therapy alone, 6 E1 on resected
EGFR/ALK NSCLC, 12 C3 exclusions and 3 histories; and, for the narrative the review called minor, 128 dietitian
weights far from every measured one, 28 weight losses with rising weights, 31 anaemias with a normal haemoglobin,
4 asymptomatic presentations on an opioid for cancer pain and 27 presentations that do not fit the primary site.
"""

import pytest

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.review_classes import (
    event_gaps,
    history_errors,
    narrative_contradictions,
    node_count,
    scope_errors,
    staging_contradictions,
)
from clinical_cf.catalog.css.schema import load_cases

CASES = load_cases(CASES_PATH)
CATALOG = load_catalog(CATALOG_PATH)


@pytest.fixture(scope="module")
def default_tuples():
    return expand_tuples(CASES, CATALOG, families="ABCDE").tuples


@pytest.mark.parametrize(
    "name",
    [
        "staging CT reports suspicious nodes before a sentinel-node biopsy",
        "positive-node count contradicts the N category",
        "stage group is not the AJCC 8 group of its TNM",
        "M1 subcategory is not the one of the metastatic sites",
        "post-neoadjuvant (yp) staging printed as the stage",
        "tumour marker at a metastatic level in non-metastatic disease",
    ],
)
def test_no_baseline_staging_contradicts_its_record(name):
    assert staging_contradictions(CASES)[name] == []


@pytest.mark.slow  # expands the whole cohort (several seconds)
@pytest.mark.parametrize(
    "name",
    [
        "B2 tumour marker falls after the injected progression",
        "B3 without castrate testosterone and a rising PSA",
        "A2 HER2-positive breast treated with endocrine therapy alone",
        "E1 CT after a nodal dissection reports the regional nodes it removed",
    ],
)
def test_every_injected_event_carries_its_evidence(default_tuples, name):
    assert event_gaps(default_tuples)[name] == []


@pytest.mark.slow  # expands the whole cohort (several seconds)
@pytest.mark.parametrize(
    "name",
    [
        "E1 on resected EGFR/ALK NSCLC with an adjuvant TKI (the metastatic drug is the same)",
        "C3 excluded on resected stage III colon (universal MMR testing, ATOMIC)",
    ],
)
def test_every_scope_holds(default_tuples, name):
    assert scope_errors(default_tuples, CASES, CATALOG)[name] == []


@pytest.mark.parametrize(
    "name",
    [
        "HR+/HER2+ early breast cancer with no adjuvant endocrine therapy",
        "aromatase inhibitor before menopause without ovarian suppression",
        "premenopausal node-positive HR+ breast: tamoxifen alone strong",
    ],
)
def test_no_history_or_label_contradicts_its_case(name):
    assert history_errors(CASES)[name] == []


@pytest.mark.parametrize(
    ("pathology", "count"),
    [
        ("pT3 pN2 (5/18 LN), R0", (5, 18, False)),
        ("pT2 pN1a (2/3 SLN), margins negative", (2, 3, True)),
        ("pT3a pN1a; SLN 1/2 positive (micrometastasis); margins clear", (1, 2, True)),
        ("HGSC involving both ovaries and omentum", None),
    ],
)
def test_the_node_count_is_read_as_a_pathologist_writes_it(pathology, count):
    assert node_count(pathology) == count


@pytest.mark.parametrize(
    "name",
    [
        "dietitian's usual weight more than 8 kg from every measured weight",
        "weight loss in the history while the measured weights rise",
        "anaemia in the history with a normal haemoglobin",
        "asymptomatic presentation with an opioid for cancer pain at diagnosis",
        "presentation does not fit the primary site",
        "'weight stable' while the measured weights fall",
    ],
)
def test_no_narrative_contradicts_the_numbers_or_the_site(name):
    assert narrative_contradictions(CASES)[name] == []
