"""MedPIC pairs and workflow episodes side by side: one row per pair / episode group, one column per model."""

import pandas as pd

from clinical_cf.analysis.paired_pages import medpic_pairs_page, workflow_episodes_page


def test_medpic_pairs_page_puts_both_members_of_a_pair_in_one_row(tmp_path):
    rows = pd.DataFrame([
        {"model": m, "pair_id": "p1", "rule_id": "r1", "operation": op, "answer": gold, "selected": sel, "correct": ok,
         "log": f"{m}.eval", "sample_id": f"q-{op}", "epoch": 1}
        for m, op, gold, sel, ok in (("a", "activation", "B", "B", 1.0), ("a", "deactivation", "E", "B", 0.0),
                                     ("b", "activation", "B", "E", 0.0))
    ] + [{"model": "a", "pair_id": None, "rule_id": "r2", "operation": "activation", "answer": "A", "selected": "A",
          "correct": 1.0, "log": "a.eval", "sample_id": "lone", "epoch": 1}])
    text = medpic_pairs_page(rows, tmp_path / "pairs.html").read_text()
    assert text.count("<tr><td><b>") == 1  # the unpaired question has no row
    assert "deactivation</b>: wrong" in text and "gold: E; selected: B" in text and "a.eval#q-deactivation (epoch 1)" in text
    assert "b.eval#q-activation" in text and "lone" not in text
    assert medpic_pairs_page(rows[rows["pair_id"].isna()], tmp_path / "none.html") is None


def test_workflow_page_groups_variants_of_one_seed(tmp_path):
    rows = pd.DataFrame([
        {"model": m, "seed_id": "s1", "parameterization": "p0", "task_class": "triage", "variant": v, "action": act,
         "acceptable_actions": ("ESCALATE",), "correct": float(act == "ESCALATE"), "log": f"{m}.eval", "episode_id": f"e-{v}", "epoch": 1}
        for m, v, act in (("x", "clean", "ESCALATE"), ("x", "stale", "ANSWER"), ("y", "clean", "ESCALATE"))
    ])
    text = workflow_episodes_page(rows, tmp_path / "episodes.html").read_text()
    assert text.count("<tr><td><b>") == 1 and "s1 / p0" in text
    assert "stale</b>: wrong" in text and "acceptable: ESCALATE; action: ANSWER" in text and "x.eval#e-stale" in text
