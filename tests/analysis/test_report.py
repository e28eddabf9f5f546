"""`clinical-cf report` over real (mock-model) logs: tables, cross-judge, skipped logs named."""

import json

from inspect_ai import Task, eval, score
from inspect_ai.dataset import Sample

from clinical_cf.cli import main
from clinical_cf.scorers.css_judge import judge_direction
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json


def judge_reply(score_value):
    return lambda prompt: json.dumps({"score": 1 if "No change in substance" in prompt else score_value, "rationale": "r"})


def test_report_tables_and_cross_judge(tmp_path, capsys):
    logs = tmp_path / "logs"
    for name, verdict in (("alpha", 1), ("beta", 0.5), ("gamma", 0)):
        model = MockModel(f"mockllm/{name}", lambda p: recommendations_json("FOLFOX"))
        log = eval(
            css_family_d(cases=str(HANDWRITTEN_CASES)),
            model=model.model,
            model_roles={"judge": MockModel("mockllm/judge", judge_reply(verdict)).model},
            display="none",
            log_dir=str(logs),
        )[0]
        # Re-judge with a strict second judge, appended to the same log.
        strict = MockModel("mockllm/strict", judge_reply(0))
        rescored = score(log, judge_direction(), model_roles={"judge": strict.model}, action="append", display="none")
        from inspect_ai.log import write_eval_log

        write_eval_log(rescored, log.location)
    (logs / "notes.eval").write_text("not a log")
    eval(Task(dataset=[Sample(input="x")]), model=MockModel("mockllm/other", lambda p: "x").model, display="none", log_dir=str(logs))

    out = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "Skipped logs" in text and "notes.eval" in text and "is not a CSS log" in text
    # Every model has the same CMS here, so the rank correlation is reported as undefined, not as a number.
    assert "Rank correlation between CMS and CSS not computed: rank correlation is undefined" in text
    assert "Rank preservation between judges not computed" in text

    import pandas as pd

    table2 = pd.read_csv(out / "single_shot_cms_css.csv").set_index("model")
    assert table2.loc["mockllm/alpha", "css"] == 1.0 and table2.loc["mockllm/gamma", "css"] == 0.0
    assert table2.loc["mockllm/alpha", "css_rank"] == 1 and table2.loc["mockllm/gamma", "css_rank"] == 3
    verdicts = pd.read_csv(out / "single_shot_verdicts.csv").set_index("model")
    assert verdicts.loc["mockllm/beta", "partial"] == 1.0
    cross = pd.read_csv(out / "single_shot_cross_judge.csv").set_index("model")
    # Both judges said 0 everywhere: full agreement, and kappa is undefined (no variation).
    assert cross.loc["mockllm/gamma", "agreement"] == 1.0 and pd.isna(cross.loc["mockllm/gamma", "kappa"])
    assert cross.loc["mockllm/alpha", "shift"] == -1.0
    families = pd.read_csv(out / "single_shot_families.csv")
    assert set(families["family"]) == {"D", "N"}
