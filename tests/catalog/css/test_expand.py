"""Expansion: applicability, no-op and incoherence counts, per-intervention totals."""

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import load_cases
from helpers import HANDWRITTEN_CASES

CASES = load_cases(HANDWRITTEN_CASES)
CATALOG = load_catalog(CATALOG_PATH)


def test_counts_add_up_and_only_scored_tuples_are_kept():
    expansion = expand_tuples(CASES, CATALOG)
    for iid, counts in expansion.counts.items():
        assert counts.eligible == counts.noop + counts.incoherent + counts.residue + counts.scored, iid
    assert len(expansion.tuples) == sum(c.scored for c in expansion.counts.values())
    assert all(t.counterfactual != t.baseline for t in expansion.tuples)


def test_applicability_filters_select_the_expected_cases():
    expansion = expand_tuples(CASES, CATALOG, families="ABCDE")
    ids = {t.id for t in expansion.tuples}
    assert "fx-breast-1:A1_her2_positive_to_negative" in ids
    assert "fx-lung-1:A4_pdl1_high_to_negative" in ids
    assert "fx-pancreas-1:D1_remove_resection" in ids
    assert "fx-breast-1:D1_remove_resection" in ids
    # Metastatic cases never get the resection toggle; HER2 flips only touch breast/gastric.
    assert not any(i.startswith(("fx-lung-1:D", "fx-colon-1:D", "fx-colon-1:A1")) for i in ids)
    assert expansion.counts["B1_first_line_progression"].eligible == 2  # lung and colon, both untreated


def test_noops_are_counted_not_scored():
    expansion = expand_tuples(CASES, CATALOG, families="N")
    n1 = expansion.counts["N1_date_format"]
    # Two fixture packets use ISO dates and two use US dates: the rewrite reaches both forms.
    assert (n1.eligible, n1.noop, n1.scored) == (4, 0, 4)


def test_family_selection_limits_interventions():
    expansion = expand_tuples(CASES, CATALOG, families=["D"])
    assert set(expansion.counts) == {"D1_remove_resection", "D2_add_resection"}
