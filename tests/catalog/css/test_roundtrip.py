"""Issue 43: a record rendered as a packet (letter, worksheet, CSV, FHIR JSON; five languages) imports back to the record.

A field the import cannot read is asked (no pre-fill); a pre-fill that is not the record's is a silent wrong pre-fill,
the failure a clinician does not see. The generator is `roundtrip_corpus.py`; `python tests/catalog/css/roundtrip_corpus.py`
prints the accuracy per field.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.importer import import_packet
from clinical_cf.catalog.css.interventions import load_catalog
from tests.catalog.css.roundtrip_corpus import OTHER_TYPES, Truth, corpus, measure, render, score, truths

CATALOG = load_catalog(CATALOG_PATH)


def _verdicts(t: Truth) -> dict[str, str]:
    return score(t, import_packet(render(t), t.case_id, CATALOG, source=f"{t.structure}/{t.lang}"))


# Each import reads the packet through medspaCy (about 0.1 s): 10 examples keep this under the fast tier's 3 s.
@settings(max_examples=10)
@given(truths())
def test_no_pre_fill_is_wrong_and_every_reported_marker_is_kept(t):
    verdicts = _verdicts(t)
    bad = {k: v for k, v in verdicts.items() if v in ("wrong", "missing")}
    assert not bad, (t.lang, t.structure, bad, render(t))


@settings(max_examples=10)
@given(truths(OTHER_TYPES))
def test_types_outside_the_bundled_set_are_read_from_histology_and_codes(t):
    verdicts = _verdicts(t)
    assert verdicts["cancer_type"] == "ok", (t.cancer_type, t.lang, t.structure, render(t))


@pytest.mark.slow
def test_the_fixed_corpus_reads_back_with_no_wrong_pre_fill():
    result = measure(corpus(), CATALOG)
    assert result["total"]["wrong"] == 0 and result["total"]["missing"] == 0, result["failures"][:20]
    assert result["accuracy"] >= 0.9, result["per_field"]
