"""`clinical-cf report` over real (mock-model) logs: tables, cross-judge, skipped logs named."""

import dataclasses
import json
import re
from collections import Counter

import pandas as pd
import pytest
from inspect_ai import Task, eval, score
from inspect_ai.dataset import Sample
from inspect_ai.log import write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.analysis import sections
from clinical_cf.analysis.report import confirmatory, load_css_rows
from clinical_cf.catalog.css.predictions import PREDICTIONS_PATH
from clinical_cf.cli import main
from clinical_cf.scorers.css_judge import judge_direction
from clinical_cf.suites import SUITES
from clinical_cf.tasks.css_agent.css_agent import css_agent
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from clinical_cf.tasks.workflow.workflow import workflow
from helpers import HANDWRITTEN_CASES, MockModel, clinician, recommendations_json
from report_extensions import catalog_banner, unscored_per_model


def judge_reply(score_value):
    return lambda prompt: json.dumps({"score": 1 if "No change in substance" in prompt else score_value, "rationale": "r"})


@pytest.mark.slow  # two evals, then the report
def test_report_tables_and_cross_judge(tmp_path, capsys):
    logs = tmp_path / "logs"
    for name, verdict in (("alpha", 1), ("beta", 0.5), ("gamma", 0)):
        model = MockModel(f"mockllm/{name}", lambda p: recommendations_json("FOLFOX"))
        log = eval(
            css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow"),
            model=model.model,
            model_roles={"judge": MockModel("mockllm/judge", judge_reply(verdict)).model},
            display="none",
            log_dir=str(logs),
        )[0]
        # Re-judge with a strict second judge, appended to the same log.
        strict = MockModel("mockllm/strict", judge_reply(0))
        rescored = score(log, judge_direction(), model_roles={"judge": strict.model}, action="append", display="none")

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

    table2 = pd.read_csv(out / "single_shot_cms_css.csv").set_index("model")
    assert table2.loc["mockllm/alpha", "css"] == 1.0 and table2.loc["mockllm/gamma", "css"] == 0.0
    assert table2.loc["mockllm/alpha", "css_rank"] == 1 and table2.loc["mockllm/gamma", "css_rank"] == 3
    verdicts = pd.read_csv(out / "single_shot_verdicts.csv").set_index("model")
    assert verdicts.loc["mockllm/beta", "partial"] == 1.0 and verdicts.loc["mockllm/beta", "partial_ci"] == "1.00-1.00"
    cross = pd.read_csv(out / "single_shot_cross_judge.csv").set_index("model")
    # Both judges said 0 everywhere: full agreement, and kappa is undefined (no variation).
    assert cross.loc["mockllm/gamma", "agreement"] == 1.0 and pd.isna(cross.loc["mockllm/gamma", "kappa"])
    assert cross.loc["mockllm/alpha", "shift"] == -1.0
    controls = pd.read_csv(out / "single_shot_controls.csv").set_index("model")
    assert controls["equivalent"].all()  # every judge scored the controls 1: no movement
    paired = pd.read_csv(out / "single_shot_paired.csv")
    ab = paired[(paired.model_a == "mockllm/alpha") & (paired.model_b == "mockllm/gamma")].iloc[0]
    assert ab["difference"] == 1.0 and ab["mcnemar_p"] == 0.5  # 2 discordant pairs, both for alpha
    assert "Not measured: run with --epochs 2" in text
    families = pd.read_csv(out / "single_shot_families.csv")
    assert set(families["family"]) == {"D", "N"}
    for figure in ("single_shot_figure1_rank_disagreement.png", "single_shot_figure2_families.png"):
        assert (out / figure).read_bytes().startswith(b"\x89PNG")
        assert figure in text
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "<table" in html and "http" not in html.lower()


def test_single_shot_and_agent_logs_give_the_lift_figure(tmp_path):
    def agent(messages, tools, tool_choice, config):
        if not any(m.role == "tool" for m in messages):
            out = ModelOutput.for_tool_call("mockllm/m", "read_chart_section", {"section": "procedures"})
        else:
            out = ModelOutput.for_tool_call("mockllm/m", "submit", json.loads(recommendations_json("FOLFOX")))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    def single(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/m", recommendations_json("FOLFOX"))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    roles = {"judge": MockModel("mockllm/judge", judge_reply(0)).model}
    eval(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"), model=get_model("mockllm/m", custom_outputs=single),
         model_roles=roles, display="none", log_dir=str(tmp_path / "logs"))
    roles = {"judge": MockModel("mockllm/judge", judge_reply(1)).model}
    eval(css_agent(families="D", cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"), model=get_model("mockllm/m", custom_outputs=agent),
         model_roles=roles, display="none", log_dir=str(tmp_path / "logs"))

    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0

    lift = pd.read_csv(out / "agent_lift.csv")
    assert lift.loc[0, "lift"] == 1.0 and lift.loc[0, "n"] == 2
    assert (out / "figure3_agent_lift.png").exists()
    assert "Single-shot vs agent (Figure 3)" in (out / "report.md").read_text()


def test_instability_floor_from_two_epochs(tmp_path):
    seen: Counter[str] = Counter()

    def flipping_judge(prompt):
        # Count per judged content: each judge prompt has its own random data-block boundary.
        key = re.sub(r" DATA \w+>>>", " DATA>>>", prompt)
        seen[key] += 1
        return json.dumps({"score": 1 if seen[key] % 2 else 0, "rationale": "r"})

    eval(
        css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"),
        # Case-specific replies, so each sample has its own judge prompt.
        model=MockModel(
            "mockllm/m", lambda p: recommendations_json("FOLFIRINOX" if "ancrea" in p or "FOLFIRINOX" in p else "FOLFOX")
        ).model,
        model_roles={"judge": MockModel("mockllm/judge", flipping_judge).model},
        epochs=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0

    floor = pd.read_csv(out / "single_shot_instability.csv").set_index("family")
    assert floor.loc["D", "instability"] == 1.0 and floor.loc["D", "samples"] == 2
    families = pd.read_csv(out / "single_shot_families.csv").set_index("family")
    assert families.loc["D", "instability"] == 1.0  # the effect is printed next to its floor


def test_rewards_export_and_regression_gate(tmp_path, capsys):
    def run(name, verdict, where):
        eval(
            css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"),
            model=MockModel(f"mockllm/{name}", lambda p: recommendations_json("FOLFOX")).model,
            model_roles={"judge": MockModel("mockllm/judge", judge_reply(verdict)).model},
            display="none",
            log_dir=str(tmp_path / where),
        )

    run("reference", 1, "reference")
    run("candidate", 0, "candidate")
    rewards = tmp_path / "rewards.jsonl"
    code = main(["report", str(tmp_path / "candidate"), "--out", str(tmp_path / "out"), "--rewards", str(rewards),
                 "--gate", "--baseline", str(tmp_path / "reference")])
    assert code == 1
    assert "gate failed: mockllm/candidate (judge mockllm/judge) vs baseline mockllm/reference (judge mockllm/judge), family D" \
        in capsys.readouterr().out
    records = [json.loads(line) for line in rewards.read_text().splitlines()]
    assert len(records) == 2 and {r["css"] for r in records} == {0.0}
    assert all(len(r["prompt_sha256"]) == 64 and r["judge"] == "mockllm/judge" and r["output"] for r in records)
    # Against itself the candidate passes.
    assert (
        main(["report", str(tmp_path / "candidate"), "--out", str(tmp_path / "out2"), "--gate", "--baseline", str(tmp_path / "candidate")])
        == 0
    )


@pytest.mark.slow  # an eval, then the bootstrap
def test_confirmatory_predictions_on_the_test_split(tmp_path):
    eval(
        css_family_d(controls="none", split="test"),
        model=MockModel("mockllm/m", lambda p: recommendations_json("FOLFOX")).model,
        model_roles={"judge": MockModel("mockllm/judge", judge_reply(0)).model},
        limit=30,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    rows = load_css_rows([str(tmp_path / "logs")]).rows
    table = confirmatory(rows, PREDICTIONS_PATH).set_index("prediction")
    # Every Family D verdict is 0: "D below 0.5" is supported; nothing else was run.
    assert list(table.index) == ["P1_surgery_blind_spot"]
    assert table.loc["P1_surgery_blind_spot", "verdict"] == "supported"
    assert table.loc["P1_surgery_blind_spot", "p_bh"] < 0.05


def test_sensitivity_logs_get_their_profile(tmp_path):
    eval(sensitivity(types="surface,background"), model=MockModel("mockllm/model", clinician).model, limit=20,
         display="none", log_dir=str(tmp_path / "logs"))
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0

    profile = pd.read_csv(out / "sensitivity_profile.csv").set_index("type")
    assert profile.loc["surface", "consistency"] == 1.0 and profile.loc["background", "consistency"] == 0.0
    assert "Skipped logs" not in (out / "report.md").read_text()


@pytest.mark.slow  # several evals, then the report
def test_medpic_and_workflow_logs_get_their_sections(tmp_path):
    def always_none(prompt: str) -> str:
        # Picks "None of the above" whatever it is lettered: right on deactivation members only.
        letter = next(line[0] for line in prompt.splitlines() if line[1:3] in (". ", ") ") and "None of the above" in line)
        return f"No rule applies here.\nANSWER: {letter}"

    def escalate_on_later_message(prompt: str) -> str:
        action = "ESCALATE" if "Later message" in prompt or "Update from the ward" in prompt else "ANSWER"
        return f'{{"action": "{action}", "confidence": 0.7, "reason": "-"}}'

    logs = tmp_path / "logs"
    eval(medpic(kinds="cf"), model=MockModel("mockllm/model", always_none).model, display="none", log_dir=str(logs))
    eval(workflow(split="test", task_class="triage_handoff"), model=MockModel("mockllm/model", escalate_on_later_message).model,
         display="none", log_dir=str(logs))
    out = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "## MedPIC suite" in text and "## Workflow escalation suite (test split)" in text
    assert "Skipped logs" not in text

    medpic_table = pd.read_csv(out / "medpic.csv")
    # Every deactivation member right, every activation member wrong: no complete pair correct.
    assert medpic_table.loc[0, "deactivation"].startswith("100") and medpic_table.loc[0, "activation"].startswith("0")
    assert medpic_table.loc[0, "pair"].startswith("0")
    flow = pd.read_csv(out / "workflow_by_variant.csv").set_index("variant")
    assert flow.loc["clean", "accuracy"] == 1.0 and flow.loc["late_risk", "accuracy"] == 1.0
    assert flow.loc["missing", "accuracy"] == 0.0
    assert (out / "workflow_summary.csv").exists() and (out / "workflow_paired.csv").exists()
    # Pairs and episodes side by side, like CSS tuples, linked from the report.
    pairs = (out / "medpic_pairs.html").read_text()
    assert "[MedPIC pairs side by side](medpic_pairs.html)" in text and "deactivation</b>: right" in pairs
    assert "activation</b>: wrong" in pairs and "mockllm/model" in pairs
    episodes = (out / "workflow_episodes.html").read_text()
    assert "[Workflow episodes side by side](workflow_episodes.html)" in text
    assert "late_risk</b>: right" in episodes and "missing</b>: wrong" in episodes


def test_a_table_and_a_banner_are_one_line_registrations_on_the_suite(tmp_path, monkeypatch):
    extended = dataclasses.replace(SUITES["css"], report_tables=(unscored_per_model,), report_banners=(catalog_banner,))
    monkeypatch.setattr(sections, "SUITES", {**SUITES, "css": extended})
    eval(css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow", controls="none"),
         model=MockModel("mockllm/m", lambda p: recommendations_json("FOLFOX")).model,
         model_roles={"judge": MockModel("mockllm/judge", lambda p: "not json at all").model},
         display="none", log_dir=str(tmp_path / "logs"))
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "### Unscored judge verdicts per model (test extension)" in text
    assert "suite css, 1 catalog hash(es), 2 samples**" in text
    table = pd.read_csv(out / "css_unscored_per_model.csv")
    assert table.loc[0, "model"] == "mockllm/m" and table.loc[0, "unscored"] == 2  # the judge never replied in JSON
    assert "class=\"banner\"" in (out / "report.html").read_text()
