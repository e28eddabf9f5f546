"""Pages built from templates: model output stays text, whatever it contains, in the HTML and in script data."""

import json
import re
import shutil

import pytest
from inspect_ai import eval
from playwright.sync_api import sync_playwright

from clinical_cf.analysis.html import script_json
from clinical_cf.cli import main
from clinical_cf.tasks.css.css import css
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# What a model might write: a script-block terminator, markup with a handler, an HTML comment, a line separator.
HOSTILE = "</script><script>window.pwned = 1</script><img src=x onerror='window.pwned=2'> <!-- & \u2028 done"


def test_script_json_round_trips_and_cannot_close_its_block():
    value = {"a": HOSTILE, "b": ["</SCRIPT >", "<\u0021--"]}
    text = str(script_json(value))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value


@pytest.fixture(scope="module")
def hostile_logs(tmp_path_factory):
    logs = tmp_path_factory.mktemp("hostile")
    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": 0.5, "rationale": HOSTILE}))
    eval(css(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"),
         model=MockModel("mockllm/m", lambda p: recommendations_json("FOLFOX", HOSTILE)).model,
         model_roles={"judge": judge.model}, display="none", log_dir=str(logs))
    return logs


def _open(page):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        tab = browser.new_page()
        tab.goto(page.as_uri())
        yield tab
        browser.close()


def _script_blocks(text: str) -> int:
    return len(re.findall(r"</script>", text, flags=re.I))


@pytest.mark.slow  # headless Chromium
def test_annotation_sheet_keeps_model_output_as_text(hostile_logs, tmp_path):
    assert main(["annotate", "export", str(hostile_logs), "--out", str(tmp_path), "--n", "4"]) == 0
    page = tmp_path / "sheet.html"
    text = page.read_text()
    assert _script_blocks(text) == 3  # only the page's own three script elements close
    assert CHROMIUM, "Debian's chromium is required for the browser test (make test installs it)"
    for tab in _open(page):
        assert tab.evaluate("window.pwned") is None
        rows = tab.evaluate("ROWS")
        # The reply reader drops invisible separators (U+2028) from model text; the markup itself stays, as text.
        assert any(HOSTILE.split(" \u2028")[0] in r["counterfactual_recommendations"] for r in rows)
        assert HOSTILE.split("<img")[0] in tab.locator("pre").nth(1).inner_text()


@pytest.mark.slow  # headless Chromium
def test_side_by_side_keeps_model_output_as_text(hostile_logs, tmp_path):
    assert main(["report", str(hostile_logs), "--out", str(tmp_path)]) == 0
    page = tmp_path / "side_by_side.html"
    assert _script_blocks(page.read_text()) == 2
    for tab in _open(page):
        assert tab.evaluate("window.pwned") is None
        tab.select_option("#score", "0.5")  # redrawn from the data by the page's script
        assert tab.evaluate("window.pwned") is None
        assert "window.pwned = 1" in tab.locator("p.why").first.inner_text()
        assert tab.locator("img").count() == 0
    assert "<img src=x" not in (tmp_path / "report.html").read_text()
