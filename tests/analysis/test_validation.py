"""Human validation: blinded export, and agreement computed from raters' sheets."""

import json

import pandas as pd
from inspect_ai import eval

from clinical_cf.analysis.validation import family_quota
from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.cli import main
from clinical_cf.tasks.css.css import css
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


def test_export_is_blinded_and_import_reports_agreement(tmp_path, capsys):
    verdicts = iter([0, 0.5, 1] * 20)
    judge = MockModel("mockllm/judge", lambda p: json.dumps({"score": next(verdicts), "rationale": "r"}))
    # Catalog v3 finds first-line progression incoherent on the hand-written packets (diagnosed too
    # recently for a first course), so one bundled case that takes family B joins them.
    cases = tmp_path / "cases.jsonl"
    bundled_b = next(line for line in CASES_PATH.read_text(encoding="utf-8").splitlines() if '"css-breast-020"' in line)
    cases.write_text(HANDWRITTEN_CASES.read_text(encoding="utf-8").rstrip("\n") + "\n" + bundled_b + "\n", encoding="utf-8")
    eval(css(cases=str(cases), unreviewed="allow", controls="none"), model=MockModel("mockllm/m", lambda p: recommendations_json("FOLFOX")).model,
         model_roles={"judge": judge.model}, display="none", log_dir=str(tmp_path / "logs"))

    out = tmp_path / "annotation"
    assert main(["annotate", "export", str(tmp_path / "logs"), "--out", str(out), "--n", "10"]) == 0
    sheet = pd.read_csv(out / "sheet.csv", dtype={"row_id": str})
    assert not {"model", "judge", "llm_score", "log"} & set(sheet.columns)
    assert "mockllm" not in (out / "sheet.csv").read_text() and "mockllm" not in (out / "sheet.html").read_text()
    assert {"A", "B", "C", "D"} <= set(sheet["family"])
    assert "Download my answers" in (out / "sheet.html").read_text()
    key = pd.read_csv(out / "key.csv", dtype={"row_id": str}).set_index("row_id")

    # Two raters agree with the judge, a third always says 0.5 and finds one row incoherent.
    for name, scores in (("r1", key["llm_score"]), ("r2", key["llm_score"]), ("r3", pd.Series(0.5, index=key.index))):
        filled = sheet.copy()
        filled["score"] = filled["row_id"].map(scores)
        filled["coherent"] = "yes"
        if name == "r3":
            filled.loc[0, "coherent"] = "no"
        filled.to_csv(tmp_path / f"{name}.csv", index=False)

    result = tmp_path / "validation"
    assert main(["annotate", "import", str(tmp_path / "r1.csv"), str(tmp_path / "r2.csv"), str(tmp_path / "r3.csv"),
                 "--key", str(out / "key.csv"), "--out", str(result)]) == 0
    pairwise = pd.read_csv(result / "validation_pairwise.csv")
    assert pairwise[(pairwise.rater_a == "r1") & (pairwise.rater_b == "r2")]["kappa"].iloc[0] == 1.0
    llm = pd.read_csv(result / "validation_llm_vs_humans.csv")
    overall = llm[(llm["rows"] == "all") & (llm["family"] == "all")].iloc[0]
    assert overall["llm_vs_majority_kappa"] == 1.0 and overall["exact_agreement"] == 1.0
    assert overall["llm_mean"] == overall["human_mean"]
    coherent = llm[(llm["rows"] == "coherent only") & (llm["family"] == "all")].iloc[0]
    assert coherent["n"] == len(sheet)  # one "no" out of three raters keeps the row coherent


def test_import_rejects_a_bad_score(tmp_path, capsys):
    pd.DataFrame({"row_id": ["a"], "llm_score": [1.0], "family": ["D"]}).to_csv(tmp_path / "key.csv", index=False)
    pd.DataFrame({"row_id": ["a"], "score": [0.7], "coherent": ["yes"]}).to_csv(tmp_path / "bad.csv", index=False)
    pd.DataFrame({"row_id": ["a"], "score": [1.0], "coherent": ["yes"]}).to_csv(tmp_path / "good.csv", index=False)
    assert (
        main(
            [
                "annotate",
                "import",
                str(tmp_path / "bad.csv"),
                str(tmp_path / "good.csv"),
                "--key",
                str(tmp_path / "key.csv"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "bad.csv" in err and "row a" in err and "score" in err


def test_the_sheet_fills_its_quota_across_families_or_says_why_not():
    quota, note = family_quota({"A": 50, "B": 50, "C": 50}, 100)
    assert sum(quota.values()) == 100 and sorted(quota.values()) == [33, 33, 34] and note == ""
    quota, note = family_quota({"A": 5, "B": 80, "C": 80}, 100)  # a short family's share goes to the others
    assert quota == {"A": 5, "B": 48, "C": 47} and "A (5)" in note
    quota, note = family_quota({"A": 30, "B": 25, "C": 30}, 100)
    assert sum(quota.values()) == 85 and "85 of the 100 rows" in note
