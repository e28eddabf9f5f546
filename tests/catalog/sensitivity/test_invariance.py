"""Sensitivity invariance changes (issue 47): each changes only its attribute's text, on every vignette it applies to."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from clinical_cf.catalog.sensitivity import PERTURBATIONS_PATH, VIGNETTES_PATH
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import load_vignettes
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity

SHORTHAND = {"pt", "w/", "w/o", "hx", "tx", "dx", "dx'd", "&", "b/c", "f/u", "sx"}
# Presentations whose candidates or pre-test probabilities depend on sex: a sex swap there is not an invariance item.
SEX_DEPENDENT = {"acs", "cholecystitis", "appendicitis", "pyelo", "sepsis", "ectopic"}


@lru_cache(maxsize=1)
def pairs():
    items, _ = load_perturbations(PERTURBATIONS_PATH)
    out = []
    for v in load_vignettes(VIGNETTES_PATH):
        for p in items:
            if p.op == "invariance" and p.skip_reason(v) is None:
                out.append((v, p, v.render(), p.render(v)))
    return out


def _tokens(text: str) -> list[str]:
    return re.split(r"(\s+)", text)


def intended(v, p, before: str, after: str) -> bool:
    a = p.attribute
    if a == "sex":
        return before.replace(" man presents", " X presents").replace(" woman presents", " X presents") == \
            after.replace(" man presents", " X presents").replace(" woman presents", " X presents") and before != after
    if a == "race_ethnicity":
        return after == before.replace("-year-old ", f"-year-old {p.text} ", 1)
    if a in ("insurance", "language", "occupation", "hedged"):
        inserted = p.text if a != "hedged" else "The patient is unsure of the exact timing."
        return inserted in after and after.replace(f" {inserted}", "", 1) == before
    if a == "name":
        return after.endswith(before) and after[: -len(before)].startswith("Patient: ")
    x, y = _tokens(before), _tokens(after)
    if a == "all_caps":
        return len(x) == len(y) and all(u == w or (not re.search(r"\d", u) and w == u.upper()) for u, w in zip(x, y, strict=True))
    if a == "typos":
        return len(x) == len(y) and all(u == w or (sorted(u) == sorted(w) and u[0] == w[0] and u[-1] == w[-1]
                                                   and not re.search(r"\d", u)) for u, w in zip(x, y, strict=True))
    if a == "telegraphic":
        dropped = _tokens(re.sub(r"\b(?:the|a|an) (?=[a-z])", "", before, flags=re.I))
        return len(dropped) == len(y) and all(u == w or w.rstrip(".,;:") in SHORTHAND for u, w in zip(dropped, y, strict=True))
    raise AssertionError(a)


def test_ten_invariance_changes_six_demographic_four_style():
    items, _ = load_perturbations(PERTURBATIONS_PATH)
    kinds = [(p.type, p.attribute) for p in items if p.op == "invariance"]
    assert sum(t == "demographic" for t, _ in kinds) == 6 and sum(t == "style" for t, _ in kinds) == 4
    assert all(p.expected == "invariant" and p.source for p in items if p.op == "invariance")


def test_every_vignette_changes_only_the_intended_text():
    assert pairs()
    wrong = [f"{v.vignette_id}:{p.id}: {after[:120]!r}" for v, p, before, after in pairs() if not intended(v, p, before, after)]
    assert not wrong, wrong[:5]


def test_no_sex_swap_where_sex_matters():
    swapped = {v.presentation for v, p, _, _ in pairs() if p.attribute == "sex"}
    assert swapped and not swapped & SEX_DEPENDENT


@pytest.mark.parametrize("types,has_invariance", [("surface,clinical_semantic,background,conflicting_result,timeline", False),
                                                  ("demographic,style", True)])
def test_the_task_adds_invariance_changes_only_when_asked(types, has_invariance):
    samples = list(sensitivity(types=types).dataset)
    attributes = {s.metadata.get("invariance_attribute") for s in samples} - {None}
    assert bool(attributes) == has_invariance
    if has_invariance:
        assert len(attributes) == 10 and all(s.metadata["expected"] == "invariant" for s in samples)
