"""The one validator: every bundled file validates as its detected kind; the CLI reports hash, lock and publication."""

from __future__ import annotations

import json

import pytest

from clinical_cf.catalog.validate import check_replacement
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.inputs import detect_kind, validate_file
from clinical_cf.suites import CATALOG_DIR, input_kinds
from helpers import HANDWRITTEN_CASES

# Kinds with no bundled file: a frozen counterfactual set is built by the user (`counterfactuals build`).
# Every bundled file is detected and validated as its kind by tests/test_specs.py, from the suites' specs.
USER_BUILT = ("counterfactuals",)


def test_every_kind_has_a_bundled_example():
    assert [k for k, item in input_kinds().items() if item.bundled is None] == list(USER_BUILT)


def test_a_frozen_counterfactual_set_is_detected_and_validated(tmp_path, capsys):
    assert main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--out", str(tmp_path)]) == 0
    frozen = tmp_path / "counterfactuals.jsonl"
    assert detect_kind(frozen) == "counterfactuals"
    assert validate_file(frozen).entries == len(frozen.read_text(encoding="utf-8").splitlines())
    broken = tmp_path / "broken.jsonl"
    record = json.loads(frozen.read_text(encoding="utf-8").splitlines()[0])
    del record["counterfactual_sections"]
    broken.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="counterfactual_sections"):
        validate_file(broken, kind="counterfactuals")


def test_cli_reports_kind_hash_lock_and_publication(capsys):
    assert main(["validate", str(CATALOG_DIR / "medpic" / "questions.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "questions, 439 entries, valid" in out and "registered: yes" in out and "published: yes" in out


def test_user_file_without_lock_is_valid_but_unregistered(tmp_path, capsys):
    path = tmp_path / "vignettes.jsonl"
    path.write_text((CATALOG_DIR / "sensitivity" / "vignettes.jsonl").read_text())
    assert main(["validate", str(path), "--kind", "vignettes"]) == 0
    out = capsys.readouterr().out
    assert "vignettes, 60 entries, valid" in out and "registered: no" in out


@pytest.mark.parametrize("pattern,replacement,ok", [
    (r"(a)(b)", r"\2\1", True),
    (r"(?P<word>a)", r"\g<word>!", True),
    (r"(a)", r"\2", False),
    (r"(a)", r"\g<2>", False),
    (r"(?P<word>a)", r"\g<other>", False),
    (r"a", r"\1", False),
    (r"(a", "x", False),
])
def test_replacement_backreferences_are_checked_against_the_pattern(pattern, replacement, ok):
    assert (check_replacement(pattern, replacement) is None) is ok
