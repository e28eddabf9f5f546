"""The review page in a real browser (headless Debian chromium): highlight, approve, reject, comment, save, record."""

import json
import shutil

import pytest
from playwright.sync_api import sync_playwright

from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.cli import main
from tests.helpers import HANDWRITTEN_CASES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow  # headless Chromium
def test_a_reviewer_approves_rejects_comments_and_saves_and_the_set_records_it(tmp_path):
    assert CHROMIUM, "Debian's chromium is required for the browser test (apt-get install -y chromium)"

    out = tmp_path / "cf"
    assert main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "AD",
                 "--out", str(out)]) == 0
    entries = load_counterfactuals(out / "counterfactuals.jsonl")
    assert len(entries) >= 2 and all(e.draft for e in entries)
    saved = tmp_path / "decisions.jsonl"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        tab = browser.new_page(accept_downloads=True)
        tab.goto((out / "review.html").as_uri())
        # Suspected residue is on the page, visible, with why.
        marks = tab.locator("ol.suspects mark.suspect")
        assert marks.count() >= 1 and marks.first.is_visible() and marks.first.get_attribute("data-why")
        boxes = tab.locator("fieldset.review")
        assert boxes.count() == len(entries)
        tab.fill("#reviewer", "Dr B")
        boxes.nth(0).locator("input[value=approved]").check()
        boxes.nth(1).locator("input[value=rejected]").check()
        boxes.nth(1).locator("textarea").fill("the plan still presupposes the operation")
        assert tab.locator("#decided").inner_text() == "2"
        with tab.expect_download() as download:
            tab.click("#save-button")
        download.value.save_as(saved)
        browser.close()
    lines = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
    assert [d["decision"] for d in lines] == ["approved", "rejected"] and {d["reviewer"] for d in lines} == {"Dr B"}
    assert lines[1]["comment"] == "the plan still presupposes the operation"
    assert [d["content_sha256"] for d in lines] == [e.content_sha256 for e in entries[:2]]
    assert main(["counterfactuals", "review", str(out / "counterfactuals.jsonl"), "--decisions", str(saved)]) == 0
    recorded = load_counterfactuals(out / "counterfactuals.jsonl")
    assert [e.review for e in recorded[:2]] == ["approved", "rejected"] and recorded[0].reviewer == "Dr B"
    assert all(e.review == "unreviewed" for e in recorded[2:])
