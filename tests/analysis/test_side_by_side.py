"""The side-by-side page: word diff of the edit, per-model columns, filters that work in a real browser."""

import json
import shutil

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log._util import thin_metadata
from playwright.sync_api import sync_playwright

from clinical_cf.analysis.side_by_side import _listed, word_diff, write_side_by_side
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
        eval(css(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"),
             model=MockModel(f"mockllm/{name}", lambda p, d=drug: recommendations_json(d)).model,
             model_roles={"judge": judge.model}, display="none", log_dir=str(tmp_path / "logs"))
    return write_side_by_side([str(tmp_path / "logs")], tmp_path / "side.html")


def test_page_is_self_contained_with_one_column_per_model(page):
    text = page.read_text()
    assert "<th data-model='mockllm/alpha'>" in text and "<th data-model='mockllm/beta'>" in text
    assert "<del>" in text and "<ins>" in text
    assert "http://" not in text and "https://" not in text and "<script src" not in text


@pytest.mark.slow  # headless Chromium
def test_filters_in_headless_chromium(page, tmp_path):
    assert CHROMIUM, "Debian's chromium is required for the browser test (make test installs it)"

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


def _rows(n_tuples: int):
    """Reader-shaped rows for two models on `n_tuples` tuples (what `read_logs(...).suite("css")` gives)."""

    rows = []
    for model in ("mockllm/left", "mockllm/right"):
        for i in range(n_tuples):
            family = "BCD"[i % 3]
            verdict = 1.0 if (model.endswith("left") and family == "B") else 0.0 if i % 2 else 0.5
            rows.append(
                {
                    "suite": "css",
                    "log": f"/logs/{model[8:]}.eval",
                    "model": model,
                    "task": "css",
                    "sample_id": f"t{i}",
                    "epoch": 1,
                    "input": f"Chart {i}: ECOG 1, stage IV.",
                    "metadata_case_id": f"case-{i:03d}",
                    "metadata_intervention_id": f"{family}{i % 4}",
                    "metadata_family": family,
                    "metadata_baseline_packet": f"Chart {i}: ECOG 0, stage IV.",
                    "metadata_expected_change": "de-escalate",
                    "score_judge_direction": verdict,
                    "score_judge_direction_metadata": {},
                    "score_judge_direction_explanation": f"reason {i}",
                    "score_judge_direction_answer": None,
                    "store_CSSArms:baseline": {"recommendations": [{"treatment": "FOLFOX"}]},
                    "store_CSSArms:counterfactual": {"recommendations": [{"treatment": "capecitabine"}]},
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.slow  # headless Chromium
def test_pages_and_filters_work_on_all_tuples(tmp_path):
    assert CHROMIUM, "Debian's chromium is required for the browser test (make test installs it)"

    page = write_side_by_side(_rows(130), tmp_path / "many.html")
    # 130 tuples ship as data; only the first page is drawn as HTML.
    assert page.read_text().count("<tr><td class='edit'>") == 50
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        tab = browser.new_page()
        tab.goto(page.as_uri())
        assert tab.locator("#count").inner_text() == "130 tuples match; showing 1-50"
        tab.click("#next")
        assert tab.locator("#count").inner_text() == "130 tuples match; showing 51-100"
        assert tab.locator("tbody tr").first.locator("b").inner_text() == "case-050:" + "BCD"[50 % 3] + str(50 % 4)
        tab.click("#next")
        assert tab.locator("tbody tr:visible").count() == 30 and tab.locator("#next").is_disabled()
        tab.select_option("#family", "B")  # 44 of the 130 tuples, counted from the data, not the drawn rows
        assert tab.locator("#count").inner_text() == "44 tuples shown"
        tab.select_option("#score", "1")
        tab.select_option("#model", "mockllm/right")  # right never scored 1: the score filter reads the chosen model
        assert tab.locator("#count").inner_text() == "0 tuples shown"
        tab.select_option("#model", "mockllm/left")
        assert tab.locator("#count").inner_text() == "44 tuples shown"
        assert tab.locator("td[data-model='mockllm/right']:visible").count() == 0
        browser.close()


def test_numbered_lists_are_read_whether_inspect_kept_their_lines_or_collapsed_them():
    lines = "1. FOLFOX — per guideline\n2. Radiation\n3. Trial 2. arm B — why\nNot recommended: Surgery; X"
    flat = " ".join(lines.split())
    for text in (lines, flat):
        assert [i["treatment"] for i in _listed(text)] == ["FOLFOX", "Radiation", "Trial 2. arm B"]
    assert _listed("(no recommendations)") == [] and _listed(None) is None and _listed("x" * 2000) is None


def test_a_long_first_item_with_no_spaces_keeps_the_second_item():
    first = "pembrolizumab+" * 80  # 1,120 characters, no space: Inspect's summary cuts it to "1. ..."
    text = f"1. {first} — per guideline\n2. Radiation — per guideline"
    shown = thin_metadata({"baseline_recommendations": text})["baseline_recommendations"]
    listed = _listed(shown)
    assert listed is None or [i["treatment"] for i in listed][1:] == ["Radiation"], listed
