"""The side-by-side page: word diff of the edit, per-model columns, filters that work in a real browser."""

import json
import shutil

import pytest
from inspect_ai import eval

from clinical_cf.analysis.side_by_side import word_diff, write_side_by_side
from clinical_cf.tasks.css.css import css
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_word_diff_marks_only_the_changed_span():
    out = word_diff("Pt s/p Whipple 2025. Healing well.", "Pt is being evaluated for Whipple 2025. Healing well.")
    assert "<del>s/p</del>" in out and "<ins>is being evaluated for</ins>" in out
    assert word_diff("same text", "same text") == "(no textual change)"


@pytest.fixture
def page(tmp_path):
    for name, drug in (("alpha", "FOLFOX"), ("beta", "FOLFIRI")):
        judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 1 if "FOLFOX" in p else 0, "rationale": "because"}))
        eval(css(cases=str(HANDWRITTEN_CASES), controls="none"),
             model=MockModel(f"mockllm/{name}", lambda p, d=drug: recommendations_json(d)).model,
             model_roles={"judge": judge.model}, display="none", log_dir=str(tmp_path / "logs"))
    return write_side_by_side([str(tmp_path / "logs")], tmp_path / "side.html")


def test_page_is_self_contained_with_one_column_per_model(page):
    text = page.read_text()
    assert "<th data-model='mockllm/alpha'>" in text and "<th data-model='mockllm/beta'>" in text
    assert "<del>" in text and "<ins>" in text
    assert "http://" not in text and "https://" not in text and "<script src" not in text


def test_filters_in_headless_chromium(page, tmp_path):
    assert CHROMIUM, "Debian's chromium is required for the browser test (make test installs it)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )
        tab = browser.new_page()
        tab.goto(page.as_uri())
        total = tab.locator("tbody tr:visible").count()
        tab.select_option("#family", "D")
        d_rows = tab.locator("tbody tr:visible").count()
        assert 0 < d_rows < total
        assert tab.locator("#count").inner_text() == f"{d_rows} tuples shown"
        tab.select_option("#score", "0")
        assert tab.locator("tbody tr:visible").count() == d_rows  # beta (FOLFIRI) scored 0 on every tuple
        tab.select_option("#model", "mockllm/alpha")
        assert tab.locator("td[data-model='mockllm/beta']:visible").count() == 0
        tab.screenshot(path=str(tmp_path / "side_by_side.png"), full_page=True)
        browser.close()
    assert (tmp_path / "side_by_side.png").read_bytes().startswith(b"\x89PNG")
