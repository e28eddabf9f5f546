"""The missing-information detectors and the two-threshold controller on scripted decisions (issue 47).

No model is called: each scripted policy's decisions are fixed, so the controller's utility with the lexical and
with the structural missing-information detector is compared on the same decisions. Policies:

    answers_everything   ANSWER with confidence 0.9 on every episode
    misses_gaps          the reference action (confidence 0.8) except on missing episodes, which it ANSWERs (0.9)
    escalates_late_only  ANSWER (0.9), except ESCALATE (0.7) when a later message arrived

The controller is tuned on dev and evaluated on test at 5:1 (docs/workflow.md); utilities are per episode.

    python bench/workflow_detectors.py [--out bench/results/workflow_detectors.txt]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from clinical_cf.analysis.tables import markdown_table
from clinical_cf.analysis.workflow_controller import MISSING_DETECTORS, controller_table, structure_audit
from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes

POLICIES = {
    "answers_everything": lambda e: ("ANSWER", 0.9),
    "misses_gaps": lambda e: ("ANSWER", 0.9) if e.variant == "missing" else (e.reference_action, 0.8),
    "escalates_late_only": lambda e: ("ESCALATE", 0.7) if e.variant == "late_risk" else ("ANSWER", 0.9),
}


def scripted_rows() -> pd.DataFrame:
    rows = []
    for model, policy in POLICIES.items():
        for e in load_episodes(EPISODES_PATH):
            action, confidence = policy(e)
            rows.append({"model": model, "condition": "neutral", "episode_id": e.id, "seed_id": e.seed_id, "task_class": e.task_class,
                         "variant": e.variant, "split": e.split, "reference_action": e.reference_action,
                         "acceptable_actions": tuple(e.acceptable_actions), "action": action, "confidence": confidence, "text": e.text(),
                         "escalate_required": e.reference_action == "ESCALATE",
                         "escalate_acceptable": "ESCALATE" in e.acceptable_actions, "parse_ok": True})
    return pd.DataFrame(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = scripted_rows()
    tables = [controller_table(rows, 5.0, 2000, missing)[0] for missing in MISSING_DETECTORS]
    controller = pd.concat(tables, ignore_index=True)[["model", "missing_detector", "policy", "accuracy", "utility", "utility_low",
                                                       "utility_high", "utility_10", "missed_escalation", "specificity"]]
    text = "\n\n".join(["## Missing-information detectors", markdown_table(structure_audit()),
                        "## Two-threshold controller on scripted decisions (tuned on dev, test split, 5:1)", markdown_table(controller)])
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
