"""The suite's own rule, applied everywhere: where the findings settle the diagnosis, a background or a longer
history owes no change (clinical review 2, section 7), and "up" at a gold already at its ceiling.

The settling findings are recognised here from their values, independently of the catalog, by the criteria
the vignettes cite:

- acute myocardial infarction: a rising high-sensitivity troponin with ischaemic ECG changes (fourth universal
  definition of MI, ESC 2023 ACS guideline), whatever the length of the history;
- diabetic ketoacidosis: pH below 7.3, bicarbonate below 15 mmol/L and ketones of 3 mmol/L or more (JBDS 2023,
  ADA 2024 consensus), whatever the medicines;
- bacterial meningitis among these candidates: a neutrophilic CSF (over 1,000 cells/uL) with a glucose below
  2.2 mmol/L (ESCMID 2016), whatever the anticoagulation or immunosuppression.

Each pair the bundled catalog scores is checked: a perturbation that only adds background or lengthens the history
(B1, B2, B3, T1) may not expect the distribution to move (shift, down or up) while the findings still settle it.
"""

import re

import pytest

from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.scorers.sensitivity import consistent, measure

VIGNETTES = load_vignettes(VIGNETTES_PATH)
ITEMS, TOLERANCE = load_perturbations(PERTURBATIONS_PATH)


def _number(pattern: str, text: str) -> float | None:
    found = re.search(pattern, text, re.I)
    return float(found.group(1).replace(",", "")) if found else None


def settled_by(findings: list[str]) -> str | None:
    """The diagnosis the findings establish by the cited criteria, or None."""
    text = "; ".join(findings)
    if re.search(r"troponin[^;]*\brising to\b", text, re.I) and re.search(r"\bST (?:depression|elevation)\b", text):
        return "myocardial infarction (rising troponin with ischaemic ECG changes)"
    ph, bicarbonate = _number(r"\bpH (\d\.\d+)", text), _number(r"bicarbonate (\d+(?:\.\d+)?)", text)
    ketones = _number(r"ketones (\d+(?:\.\d+)?) mmol/L", text)
    if ph is not None and bicarbonate is not None and ketones is not None and ph < 7.3 and bicarbonate < 15 and ketones >= 3:
        return "diabetic ketoacidosis (pH, bicarbonate and ketones meet the criteria)"
    cells, glucose = _number(r"CSF neutrophils ([\d,]+)", text), _number(r"CSF[^;]*glucose (\d+(?:\.\d+)?)", text)
    if cells is not None and glucose is not None and cells > 1000 and glucose < 2.2:
        return "bacterial meningitis (neutrophilic CSF with a low glucose)"
    return None


def test_no_background_or_longer_history_is_expected_to_move_a_diagnosis_the_findings_settle():
    wrong = []
    for v in VIGNETTES:
        for p in ITEMS:
            if p.op not in ("add_background", "prolong") or p.skip_reason(v) is not None:
                continue
            expected = p.expected_for(v)
            settled = settled_by(p.apply(v).findings)
            if settled and expected in ("shift", "down", "up"):
                wrong.append(f"{v.vignette_id} {p.id} expects {expected}, but its findings settle {settled}")
    assert wrong == []


def test_the_settling_findings_are_recognised_in_every_vignette_of_the_three_presentations():
    """The check above is not vacuous: every ACS, DKA and meningitis vignette is settled by its findings."""
    unrecognised = [v.vignette_id for v in VIGNETTES if v.presentation in ("acs", "dka", "meningitis") and not settled_by(v.findings)]
    assert unrecognised == []
    assert all(settled_by(v.findings) is None for v in VIGNETTES if v.presentation in ("pe", "stroke", "appendicitis"))


def _distribution(p_gold: float, n: int = 5) -> list[float]:
    return [p_gold, *[(1 - p_gold) / (n - 1)] * (n - 1)]


@pytest.mark.parametrize("p", [0.96, 0.98, 0.99, 1.0])
def test_up_treats_a_gold_kept_at_its_two_decimal_ceiling_like_one_kept_at_one(p):
    """10 % of the headroom above 0.95 is under 0.005: it rounds to nothing at the two decimals a model states."""
    assert consistent(measure(_distribution(p), _distribution(p), 0), "up", TOLERANCE)
    assert not consistent(measure(_distribution(p), _distribution(p - 0.02), 0), "up", TOLERANCE)


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95])
def test_up_still_asks_for_a_gain_where_two_decimals_can_state_it(p):
    assert not consistent(measure(_distribution(p), _distribution(p), 0), "up", TOLERANCE)
    assert consistent(measure(_distribution(p), _distribution(p + 0.1 * (1 - p) + 0.001), 0), "up", TOLERANCE)


def test_the_review_reproduction_of_the_headroom_rule():
    flat = [.0025, .0025, .99, .0025, .0025]
    assert consistent(measure([0, 0, 1, 0, 0], [0, 0, 1, 0, 0], 2), "up", TOLERANCE)
    assert consistent(measure(flat, flat, 2), "up", TOLERANCE)
