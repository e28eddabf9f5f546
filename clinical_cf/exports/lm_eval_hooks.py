"""Per-document scoring and aggregations that exported lm-evaluation-harness tasks call.

The exported `utils.py` re-exports these, so lm-eval scores a reply with the same parser and the
same utility as the Inspect scorers (the environment running lm-eval needs `clinical_cf`
installed). Each `process_*` returns one value per metric; a metric that does not apply to a
document (deactivation accuracy on a guideline-following question) is `None` and is left out by
`mean_present`, so lm-eval's per-metric lists stay aligned without inventing zeros.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from clinical_cf.scorers.medpic import parse_answer
from clinical_cf.scorers.workflow import utility
from clinical_cf.solvers.workflow import parse_decision


def mean_present(items: Sequence[float | None]) -> float:
    """Mean over the documents a metric applies to (NaN when none did, e.g. under a small --limit)."""
    values = [v for v in items if v is not None]
    return sum(values) / len(values) if values else math.nan


def pair_accuracy(items: Sequence[tuple[str | None, bool]]) -> float:
    """Share of pairs whose members were all answered correctly; pairs missing a member (a --limit cut) are skipped."""
    members: dict[str, list[bool]] = defaultdict(list)
    for pair_id, correct in items:
        if pair_id is not None:
            members[pair_id].append(bool(correct))
    complete = [all(v) for v in members.values() if len(v) >= 2]
    return sum(complete) / len(complete) if complete else math.nan


def gf_cf_gap(items: Sequence[tuple[str, bool]]) -> float:
    """Guideline-following accuracy minus counterfactual accuracy."""
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for kind, correct in items:
        by_kind[kind].append(bool(correct))
    if not by_kind.get("gf") or not by_kind.get("cf"):
        return math.nan
    return sum(by_kind["gf"]) / len(by_kind["gf"]) - sum(by_kind["cf"]) / len(by_kind["cf"])


def process_medpic(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """Exact set match of the parsed option letters, as the Inspect scorer does."""
    # lm-eval loads the JSONL through pyarrow, which gives every row the union of option letters
    # (missing ones as None) when questions have different numbers of options.
    options = {letter: text for letter, text in doc["options"].items() if text is not None}
    parsed = parse_answer(results[0], options)
    correct = parsed is not None and sorted(parsed) == sorted(doc["answer"])
    kind, operation = doc["kind"], doc.get("operation")
    return {
        "accuracy": float(correct),
        "gf_accuracy": float(correct) if kind == "gf" else None,
        "cf_accuracy": float(correct) if kind == "cf" else None,
        "activation_accuracy": float(correct) if operation == "activation" else None,
        "deactivation_accuracy": float(correct) if operation == "deactivation" else None,
        "gf_cf_gap": (kind, correct),
        "pair_accuracy": (doc.get("pair_id"), correct),
        "parse_rate": float(parsed is not None),
    }


def process_workflow(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """The action against the episode's acceptable set, and the cost-sensitive utility at the doc's cost ratio."""
    action = parse_decision(results[0]).action
    escalated = action == "ESCALATE"
    return {
        "accuracy": float(action in doc["acceptable_actions"]),
        "utility": utility(action, doc, doc["cost_ratio"]),
        "missed_escalation": float(not escalated) if doc["reference_action"] == "ESCALATE" else None,
        "unnecessary_escalation": float(escalated) if "ESCALATE" not in doc["acceptable_actions"] else None,
        "parse_rate": float(action is not None),
    }
