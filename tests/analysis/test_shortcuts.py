"""Shortcut audit: a templated insertion is flagged as detectable from the surface."""

from clinical_cf.analysis.shortcuts import audit, inserted_words
from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases


def test_inserted_words_skip_stopwords_and_numbers():
    assert inserted_words("Pt s/p Whipple.", "Pt s/p Whipple. Progression on FOLFOX in 2025.") == ["progression", "folfox"]


def test_insertions_are_flagged():
    # Catalog v3 drops first-line progression on the hand-written packets as incoherent (each was
    # diagnosed too recently for a first course to have run), so the audit uses bundled cases.
    tuples = expand_tuples(load_cases(CASES_PATH)[:30], load_catalog(CATALOG_PATH), families="B").tuples
    assert len(tuples) >= 5
    table = audit(tuples).set_index("family")
    # Injected progression always lengthens the packet: a length-only guess finds the edited one.
    assert table.loc["B", "length_2afc"] == 1.0
    assert table.loc["B", "flagged"] and "length-only 2AFC 1.00" in table.loc["B", "why"]
