"""Catalog patterns run in time linear in the line (issue 22): refused when they could not, measured on a long line."""

import re

import pytest
import yaml

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.patterns import backtracking_problem
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.core.errors import CatalogError
from tests.cpu_time import SCALE, assert_grows_linearly, cpu_seconds
from tests.helpers import HANDWRITTEN_CASES

CATALOG = load_catalog(CATALOG_PATH)
WORDS = (
    "the patient has had surgery after resection of the tumour with margins and was seen in clinic for review "
    "of her treatment history and no prior therapy HER2 stage "
)
LONG_LINE = (WORDS * 1000)[:150_000]  # one unpunctuated 150,000-character line


def bundled_patterns() -> list[tuple[str, str]]:
    found = []
    for name, implication in CATALOG.implications.items():
        for term in implication.terms:
            found += [(f"implication {name}", term.pattern)] + ([(f"implication {name} unless", term.unless)] if term.unless else [])
    for item in CATALOG.interventions:
        found += [(f"{item.id} {op.op}", op.pattern) for op in item.mutation if getattr(op, "pattern", None)]
        found += [
            (f"{item.id} {f}", getattr(item.applies_to, f)) for f in ("packet_matches", "packet_excludes") if getattr(item.applies_to, f)
        ]
        found += [(f"{item.id} expect_after", p) for p in item.expect_after or []]
    return found


@pytest.mark.parametrize(
    "pattern, words",
    [
        ("(a+)+$", "nested unbounded quantifier"),
        ("(?:x*y?)*z", "nested unbounded quantifier"),
        ("(\\w+) \\1", "backreference"),
        ("(?:[^.;]|x)*\\bsurgery", "starts with an unbounded repeat"),
    ],
)
def test_a_user_pattern_that_needs_backtracking_is_refused_when_the_catalog_loads(tmp_path, pattern, words):
    doc = yaml.safe_load(CATALOG_PATH.read_text())
    doc["interventions"][0]["mutation"][0]["pattern"] = pattern
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(CatalogError, match=words) as info:
        load_catalog(path)
    assert info.value.entry == doc["interventions"][0]["id"]


def test_linear_patterns_are_accepted():
    for pattern in ("(?i)\\bHER2\\b[^.\\n;]{0,40}?positive", "(?:\\b(?:no|not)\\s+)?\\bEGFR\\b(?:[^\\n.;,]|\\.(?=\\d))*",
                    "(?i)(?<![^\\n.;,])(?:[^\\n.;,])*\\bsurgery", "(?:prior\\s+|systemic\\s+)*therapy", "(?im)^.*ectomy.*$"):
        assert backtracking_problem(pattern) is None, pattern


SLOWEST_CHECKED = 5
"""The patterns slowest on the long line whose growth is measured (the others take less CPU than these)."""


@pytest.mark.slow
def test_every_bundled_pattern_runs_in_linear_time_on_a_150000_character_line():
    """Every pattern passes the structural check (no nested unbounded repeats, no backreferences); the slowest on
    a 150,000-character line then take under 10x the CPU there that they take on a quarter of it (a quadratic one
    took minutes). CPU time, not wall-clock: a busy machine cannot fail it (tests/cpu_time.py)."""
    compiled = {}
    for label, pattern in bundled_patterns():
        assert backtracking_problem(pattern) is None, label
        compiled[label] = re.compile(pattern)
    at_full_length = {label: cpu_seconds(lambda c=c: list(c.finditer(LONG_LINE))) for label, c in compiled.items()}
    for label in sorted(at_full_length, key=at_full_length.get, reverse=True)[:SLOWEST_CHECKED]:
        assert_grows_linearly(lambda n: LONG_LINE[:n], lambda text, c=compiled[label]: list(c.finditer(text)), len(LONG_LINE) // SCALE, label)


@pytest.mark.slow
def test_a_case_with_one_150000_character_line_expands_in_linear_time():
    case = load_cases(HANDWRITTEN_CASES)[0]

    def long_case(n: int):
        return case.model_copy(update={"sections": {**case.sections, "overview": case.sections["overview"] + "\n" + LONG_LINE[:n]}})

    assert_grows_linearly(long_case, lambda c: expand_tuples([c], CATALOG, "regex"), len(LONG_LINE) // SCALE, "expanding a case")
