"""Invariance controls (issue 47): each change alters only its attribute's text, on every case it applies to.

The checks here are written from what a reader of the two packets would see, independently of
`catalog.css.invariance`: a line diff per section, and per attribute the only lines allowed to differ and how.
They run over every bundled case, the cases of a cohort generated from another seed, both routes, and (for the
style changes) over generated text.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.cohort import FIRST_NAMES_F, FIRST_NAMES_M, generate_cohort
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.invariance import (
    ATTRIBUTES,
    DEMOGRAPHIC,
    SAME_TRADITION,
    STYLE,
    add_typos,
    all_caps,
    clinical_words,
    telegraphic,
)
from clinical_cf.catalog.css.schema import load_cases

SEX_SPECIFIC = {"breast", "ovarian", "prostate"}
NARRATIVE = {"overview", "encounters"}


@lru_cache(maxsize=1)
def catalog():
    return load_catalog(CATALOG_PATH)


def invariance_entries():
    return [i for i in catalog().interventions if i.invariance is not None]


SAMPLE_EVERY = 8
"""The fast tier checks every 8th bundled case (30 cases, every cancer type and scenario); the slow tier all 240."""


@lru_cache(maxsize=6)
def expansion(source: str, mode: str):
    cases = {"bundled": lambda: load_cases(CASES_PATH), "sample": lambda: load_cases(CASES_PATH)[::SAMPLE_EVERY],
             "generated": lambda: generate_cohort(seed=20470)[1::SAMPLE_EVERY]}[source]()
    only = catalog().model_copy(update={"interventions": invariance_entries()})  # the classic controls are tested elsewhere
    exp = expand_tuples(cases, only, mode, families=["N"])  # type: ignore[arg-type]
    return cases, exp.tuples, exp


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) line pairs of a diff; an inserted line pairs with ''."""
    out = []
    a, b = before.split("\n"), after.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        olds, news = a[i1:i2], b[j1:j2]
        for k in range(max(len(olds), len(news))):
            out.append((olds[k] if k < len(olds) else "", news[k] if k < len(news) else ""))
    return out


def _tokens_equal_but(old: str, new: str, same) -> bool:
    """Token by token (whitespace kept), `same(old_token, new_token)` holds for every pair."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    return len(a) == len(b) and all(x == y or same(x, y) for x, y in zip(a, b, strict=True))


def _transposed(x: str, y: str) -> bool:
    core = re.compile(r"[a-z]{5,}")
    xs, ys = core.findall(x), core.findall(y)
    if len(xs) != len(ys) or re.sub(r"[a-z]{5,}", "", x) != re.sub(r"[a-z]{5,}", "", y):
        return False
    for u, v in zip(xs, ys, strict=True):
        if u != v and (sorted(u) != sorted(v) or u[0] != v[0] or u[-1] != v[-1] or sum(p != q for p, q in zip(u, v, strict=True)) != 2):
            return False
    return True


SHORTHAND = {"pt", "w/", "w/o", "hx", "tx", "dx", "dx'd", "&", "b/c", "f/u", "sx"}


def allowed(attribute: str, section: str, old: str, new: str, op) -> bool:
    """Whether one changed line is the attribute's intended text change."""
    if attribute == "sex":
        return section in {"demographics", "overview", "encounters"} and re.sub(
            r"\b(?:Female|Male|woman|man|She|He|she|he)\b", "X", re.sub(r"^Name: \S+", "Name: X", old)
        ) == re.sub(r"\b(?:Female|Male|woman|man|She|He|she|he)\b", "X", re.sub(r"^Name: \S+", "Name: X", new))
    if attribute == "race_ethnicity":
        label, _, adjective = op.value.partition("|")
        return (section == "demographics" and old == "" and new == f"Race/ethnicity: {label}") or (
            section == "overview" and new == re.sub(r"^(\d+-year-old) ", rf"\1 {adjective} ", old, count=1))
    if attribute in ("insurance", "language"):
        label = {"insurance": "Insurance", "language": "Preferred language"}[attribute]
        return section == "demographics" and old.startswith(f"{label}: ") and new == f"{label}: {op.value}"
    if attribute == "occupation":
        return section == "encounters" and op.value in new and re.sub(r"(retired|as an?) [a-z ]+?\.", "JOB.", old) == re.sub(
            r"(retired|as an?) [a-z ]+?\.", "JOB.", new)
    if attribute == "name":
        return section == "demographics" and old.startswith("Name: ") and new.startswith("Name: ") and new.split(" (")[0] in [
            f"Name: {v}" for v in op.value.split("|")]
    if attribute == "typos":
        return section in NARRATIVE and _tokens_equal_but(old, new, _transposed)
    if attribute == "telegraphic":
        dropped = re.sub(r"\b(?:the|a|an) (?=[a-z])", "", old, flags=re.I)
        return section == "encounters" and old.split().count("no") == new.split().count("no") \
            and old.split().count("not") == new.split().count("not") and _tokens_equal_but(dropped, new, lambda x, y: y.rstrip(".,;:)") in SHORTHAND or y in SHORTHAND)
    if attribute == "hedged":
        return section == "encounters" and new.endswith(old) and len(new) > len(old) and old
    if attribute == "all_caps":
        return section in NARRATIVE and _tokens_equal_but(old, new, lambda x, y: not re.search(r"\d", x) and y == x.upper())
    raise AssertionError(attribute)


def intended_only(t) -> list[str]:
    """Every changed line of the tuple that is not its attribute's intended change (empty: verified)."""
    op = t.intervention.invariance
    problems = []
    assert t.counterfactual.order == t.baseline.order
    for section, before in t.baseline.sections.items():
        after = t.counterfactual.sections[section]
        for old, new in changed_lines(before, after):
            if not allowed(op.attribute, section, old, new, op):
                problems.append(f"{t.id} [{section}] {old!r} -> {new!r}")
    return problems


def test_at_least_six_demographic_and_four_style_changes_each_with_source_and_scope():
    entries = invariance_entries()
    kinds = {i.invariance.attribute: i.invariance.kind for i in entries}
    assert {a for a, k in kinds.items() if k == "demographic"} == set(DEMOGRAPHIC)
    assert {a for a, k in kinds.items() if k == "style"} == set(STYLE)
    assert set(kinds) == set(ATTRIBUTES)
    for item in entries:
        assert item.family == "N" and item.scope is not None and item.scope.source and item.source, item.id
        assert "No change in substance" in item.expected_change


@pytest.mark.parametrize("mode", ["structured", "regex"])
def test_sampled_bundled_cases_change_only_the_intended_text(mode):
    _, tuples, _ = expansion("sample", mode)
    problems = [p for t in tuples for p in intended_only(t)]
    assert not problems, f"{len(problems)} unintended changes, e.g. {problems[:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["structured", "regex"])
def test_every_bundled_case_changes_only_the_intended_text(mode):
    _, tuples, exp = expansion("bundled", mode)
    problems = [p for t in tuples for p in intended_only(t)]
    assert not problems, f"{len(problems)} unintended changes, e.g. {problems[:5]}"
    # Every invariance entry reaches cases, and none is a silent no-op: the counts say where it did not apply.
    for item in invariance_entries():
        count = exp.counts[item.id]
        assert count.scored > 0, item.id
        assert count.incoherent == 0 and count.residue == 0, (item.id, count)


def test_generated_cohort_changes_only_the_intended_text():
    _, tuples, _ = expansion("generated", "structured")
    assert tuples
    problems = [p for t in tuples for p in intended_only(t)]
    assert not problems, problems[:5]


def test_structured_and_regex_routes_agree_on_bundled_cases():
    # Both routes start from the same text for bundled cases (stored sections = rendered record), so they must agree.
    _, structured, _ = expansion("sample", "structured")
    _, regex, _ = expansion("sample", "regex")
    by_id = {t.id: t.counterfactual.text for t in regex}
    differ = [t.id for t in structured if by_id.get(t.id) != t.counterfactual.text]
    assert not differ, differ[:5]


@pytest.mark.slow
def test_scope_rules_hold():
    cases, tuples, exp = expansion("bundled", "structured")
    by_case = {c.case_id: c for c in cases}
    sex = [t for t in tuples if t.intervention.invariance.attribute == "sex"]
    assert sex and not [t.id for t in sex if t.case.cancer_type in SEX_SPECIFIC]
    east_asian = [t for t in tuples if t.intervention.id == "N6_ethnicity_east_asian"]
    assert not [t.id for t in east_asian if t.case.cancer_type == "nsclc" and t.case.marker_status("EGFR") == "not_tested"]
    untested = [c for c in cases if c.cancer_type == "nsclc" and c.marker_status("EGFR") == "not_tested"]
    assert exp.counts["N6_ethnicity_east_asian"].out_of_scope == len(untested)
    # The bundled NSCLC cases all have an EGFR result: the exclusion is checked on one without it.
    nsclc = next(c for c in cases if c.cancer_type == "nsclc")
    untested_case = nsclc.model_copy(update={"biomarkers": {k: v for k, v in nsclc.biomarkers.items() if k != "EGFR"}})
    east = next(i for i in invariance_entries() if i.id == "N6_ethnicity_east_asian")
    assert untested_case.marker_status("EGFR") == "not_tested" and east.excluded_by(untested_case) is not None
    assert east.excluded_by(nsclc) is None
    for t in tuples:  # age is never changed: the age the overview and demographics state stays the case's
        age = by_case[t.case.case_id].age
        assert f"Age: {age}" in t.counterfactual.sections["demographics"], t.id
        assert t.counterfactual.sections["overview"].split("-year-old")[0].endswith(str(age)), t.id


def test_a_sex_change_pairs_every_cohort_first_name_with_one_of_the_other_sex():
    """Every first name the cohort draws has exactly one partner of the other sex (same naming tradition)."""
    assert sorted(f for f, _ in SAME_TRADITION) == sorted(FIRST_NAMES_F)
    assert sorted(m for _, m in SAME_TRADITION) == sorted(FIRST_NAMES_M)


def test_style_changes_are_seeded_and_typo_rate_is_as_stated():
    _, tuples, _ = expansion("sample", "structured")
    typos = [t for t in tuples if t.intervention.invariance.attribute == "typos"]
    changed = eligible = 0
    for t in typos:
        protected = clinical_words(t.baseline.sections)
        for section in NARRATIVE:
            words = re.findall(r"\b[a-z]+\b", t.baseline.sections[section])
            new = re.findall(r"\b[a-z]+\b", t.counterfactual.sections[section])
            assert len(words) == len(new)
            assert not [a for a, b in zip(words, new, strict=True) if a != b and a in protected], t.id
            pairs = [(a, b) for a, b in zip(words, new, strict=True)
                     if len(a) >= 5 and len(set(a[1:-1])) > 1 and a not in protected]
            eligible += len(pairs)
            changed += sum(a != b for a, b in pairs)
    rate = typos[0].intervention.invariance.rate
    # Binomial: the share of eligible words changed is within four standard errors of the stated rate.
    assert abs(changed / eligible - rate) < 4 * (rate * (1 - rate) / eligible) ** 0.5, (changed, eligible)
    again = add_typos(typos[0].baseline.sections, typos[0].case.case_id, None, rate)
    assert again == typos[0].counterfactual.sections


narrative_text = st.lists(
    st.one_of(st.sampled_from(["the", "a", "with", "without", "no", "not", "patient", "ypT2N1", "5.7", "mg/dL", "HER2", "and"]),
              st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)),
    min_size=1, max_size=40,
).map(" ".join)


@given(text=narrative_text, case_id=st.text(min_size=1, max_size=8), rate=st.floats(0.01, 0.5))
def test_style_changes_keep_values_and_negations_on_any_text(text, case_id, rate):
    sections = {"overview": text, "encounters": text, "labs": text}
    for change, args in ((add_typos, (rate,)), (all_caps, ()), (telegraphic, ())):
        out = change(sections, case_id, None, *args)
        assert out["labs"] == text  # tables are never restyled
        for section in ("overview", "encounters"):
            before, after = sections[section].split(), out[section].split()
            assert [w for w in before if re.search(r"\d", w)] == [w for w in after if re.search(r"\d", w)]
            for negation in ("no", "not"):
                assert before.count(negation) == [w.lower() for w in after].count(negation)
