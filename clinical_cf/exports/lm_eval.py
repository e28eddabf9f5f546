"""`clinical-cf export lm-eval`: lm-evaluation-harness tasks for the suites that fit its model.

lm-eval scores one generation per document with per-document `process_results` and per-metric
aggregations. Two suites fit:

- **MedPIC**: multiple choice with exact set match; GF, CF, activation/deactivation and the pair
  metric are aggregations over the documents (`clinical_cf.exports.lm_eval_hooks`).
- **Workflow**: four-way action classification, with the 5:1 cost-sensitive utility, missed and
  unnecessary escalation as aggregations. lm-eval gives one prompt per document, so an episode's
  turns are rendered in order into that prompt (a late-risk red flag is marked as a later
  message rather than sent as a later turn, as the Inspect task does).

CSS does not fit: each tuple needs two generations (baseline and counterfactual arms, the baseline
shared across tuples) and a judge model comparing them; neither exists in lm-eval's task model.
The sensitivity suite needs a distribution over candidates per arm and a paired comparison, so it
stays in Inspect too.

Layout of the export (point `lm_eval --include_path` at it):

    clinical_cf.yaml                 group `clinical_cf`: every suite group below
    clinical_cf_medpic.yaml          group `clinical_cf_medpic`
    clinical_cf_medpic_all.yaml      task (all questions), data in data/clinical_cf_medpic_all.jsonl
    clinical_cf_workflow.yaml        group `clinical_cf_workflow`
    clinical_cf_workflow_neutral.yaml / clinical_cf_workflow_uncertainty.yaml   the two prompt conditions
    utils.py                         re-exports clinical_cf.exports.lm_eval_hooks (needs clinical_cf installed)

`data_files` are absolute paths: re-export after moving the folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinical_cf.catalog.medpic.questions import QUESTIONS_PATH, load_questions
from clinical_cf.catalog.workflow.episodes import EPISODES_PATH, load_episodes
from clinical_cf.solvers.medpic import render_prompt
from clinical_cf.solvers.workflow import episode_messages

GROUP = "clinical_cf"
TASK_VERSION = 1.0

UTILS = '''"""lm-eval hooks for clinical_cf tasks (written by `clinical-cf export lm-eval`; needs clinical_cf installed)."""

from clinical_cf.exports.lm_eval_hooks import (  # noqa: F401
    gf_cf_gap,
    mean_present,
    pair_accuracy,
    process_medpic,
    process_workflow,
)
'''


@dataclass(frozen=True)
class ExportedTask:
    name: str
    suite: str
    docs: Callable[[], list[dict[str, Any]]]
    process_results: str
    metrics: tuple[tuple[str, str], ...]
    """(metric, aggregation): an lm-eval aggregation name or a hook in `utils.py`."""
    max_gen_toks: int


def medpic_docs() -> list[dict[str, Any]]:
    return [
        {
            "id": q.id,
            "prompt": render_prompt(q),
            "target": ",".join(q.answer),
            "answer": list(q.answer),
            "options": dict(q.options),
            "kind": q.kind,
            "operation": q.operation,
            "pair_id": q.pair_id,
            "rule_id": q.rule_id,
        }
        for q in load_questions(QUESTIONS_PATH)
    ]


def render_transcript(messages: list[dict[str, str]]) -> str:
    """Role/content messages as one prompt: the system text first, then each turn under its role."""
    return "\n\n".join(m["content"] if m["role"] == "system" else f"[{m['role']}]\n{m['content']}" for m in messages)


def workflow_docs(condition: str, cost_ratio: float = 5.0) -> list[dict[str, Any]]:
    return [
        {
            "id": e.id,
            "prompt": render_transcript(episode_messages(e, condition)),
            "target": e.reference_action,
            "cost_ratio": cost_ratio,
            "reference_action": e.reference_action,
            "acceptable_actions": list(e.acceptable_actions),
            "variant": e.variant,
            "task_class": e.task_class,
            "seed_id": e.seed_id,
            "split": e.split,
        }
        for e in load_episodes(EPISODES_PATH)
    ]


MEDPIC_METRICS = (
    ("accuracy", "mean"),
    ("gf_accuracy", "mean_present"),
    ("cf_accuracy", "mean_present"),
    ("gf_cf_gap", "gf_cf_gap"),
    ("activation_accuracy", "mean_present"),
    ("deactivation_accuracy", "mean_present"),
    ("pair_accuracy", "pair_accuracy"),
    ("parse_rate", "mean"),
)
WORKFLOW_METRICS = (
    ("accuracy", "mean"),
    ("utility", "mean"),
    ("missed_escalation", "mean_present"),
    ("unnecessary_escalation", "mean_present"),
    ("parse_rate", "mean"),
)

TASKS: tuple[ExportedTask, ...] = (
    ExportedTask("clinical_cf_medpic_all", "medpic", medpic_docs, "process_medpic", MEDPIC_METRICS, 384),
    ExportedTask(
        "clinical_cf_workflow_neutral", "workflow", lambda: workflow_docs("neutral"), "process_workflow",
        WORKFLOW_METRICS, 256,
    ),
    ExportedTask(
        "clinical_cf_workflow_uncertainty", "workflow", lambda: workflow_docs("uncertainty"), "process_workflow",
        WORKFLOW_METRICS, 256,
    ),
)
SUITES = tuple(dict.fromkeys(t.suite for t in TASKS))

# Metrics where lower is better.
LOWER_IS_BETTER = {"missed_escalation", "unnecessary_escalation"}


def _q(value: Any) -> str:
    """A YAML scalar (JSON is valid YAML)."""
    return json.dumps(value)


def task_yaml(task: ExportedTask, data_file: Path) -> str:
    lines = [
        f"task: {task.name}",
        f"tag: [{GROUP}_{task.suite}_tasks]",
        "dataset_path: json",
        "dataset_kwargs:",
        "  data_files:",
        f"    test: {_q(str(data_file.resolve()))}",
        "test_split: test",
        "output_type: generate_until",
        'doc_to_text: "{{prompt}}"',
        'doc_to_target: "{{target}}"',
        "generation_kwargs:",
        "  until: []",
        f"  max_gen_toks: {task.max_gen_toks}",
        "  do_sample: false",
        "  temperature: 0.0",
        f"process_results: !function utils.{task.process_results}",
        "metric_list:",
    ]
    for metric, aggregation in task.metrics:
        agg = aggregation if aggregation == "mean" else f"!function utils.{aggregation}"
        lines += [
            f"  - metric: {metric}",
            f"    aggregation: {agg}",
            f"    higher_is_better: {'false' if metric in LOWER_IS_BETTER else 'true'}",
        ]
    lines += ["metadata:", f"  version: {TASK_VERSION}", f"  suite: {task.suite}"]
    return "\n".join(lines) + "\n"


def group_yaml(group: str, members: list[str]) -> str:
    return f"group: {group}\ntask:\n" + "".join(f"  - {m}\n" for m in members) + f"metadata:\n  version: {TASK_VERSION}\n"


def export_lm_eval(out: Path, suites: list[str] | None = None) -> list[Path]:
    """Write task and group YAML, the documents as JSONL and the hook shim; returns the written files."""
    wanted = suites or list(SUITES)
    unknown = sorted(set(wanted) - set(SUITES))
    if unknown:
        raise ValueError(
            f"lm-eval export covers {', '.join(SUITES)}; not {', '.join(unknown)} "
            "(CSS needs two arms and a judge, sensitivity a distribution per arm: run those in Inspect)"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "data").mkdir(exist_ok=True)
    written = []
    for suite in wanted:
        members = []
        for task in (t for t in TASKS if t.suite == suite):
            data = out / "data" / f"{task.name}.jsonl"
            with data.open("w", encoding="utf-8") as f:
                for doc in task.docs():
                    f.write(json.dumps(doc, ensure_ascii=False) + "\n")
            path = out / f"{task.name}.yaml"
            path.write_text(task_yaml(task, data), encoding="utf-8")
            written += [data, path]
            members.append(task.name)
        group = out / f"{GROUP}_{suite}.yaml"
        group.write_text(group_yaml(f"{GROUP}_{suite}", members), encoding="utf-8")
        written.append(group)
    top = out / f"{GROUP}.yaml"
    top.write_text(group_yaml(GROUP, [f"{GROUP}_{s}" for s in wanted]), encoding="utf-8")
    utils = out / "utils.py"
    utils.write_text(UTILS, encoding="utf-8")
    return [*written, top, utils]
