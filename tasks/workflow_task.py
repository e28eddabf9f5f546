"""Build the workflow escalation task (seed 004): episodes -> samples, multi-turn JSON decisions, utility."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from inspect_ai import Task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.workflow import EPISODES_PATH, SEEDS_PATH, TASK_CLASSES, VARIANTS
from clinical_cf.catalog.workflow.assemble import assemble, dumps
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.core.errors import CatalogError
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.solvers.workflow import CONDITIONS, workflow_decision
from clinical_cf.suites import WORKFLOW
from clinical_cf.tasks.arguments import choice, exclusive, flag, input_file, model_role, number, selection
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task


def workflow_inputs(episodes: Path | None, seeds: Path | None) -> TaskInputs:
    """What the task reads: a user episodes JSONL (itself the pre-registered catalog), or seeds (user or bundled)
    with, for the bundled seeds, the bundled episodes they must assemble to."""
    if episodes:
        return TaskInputs(catalogs=[episodes])
    return TaskInputs(catalogs=[seeds or SEEDS_PATH], data=[] if seeds else [EPISODES_PATH])


def load_workflow_episodes(episodes: Path | None, seeds: Path | None) -> tuple[list[Episode], dict[str, str]]:
    """The episodes to run and where they came from.

    Default: the bundled episodes (locked), which must be exactly what the locked seeds assemble to.
    `seeds`: assemble a user seeds YAML (needs its lock). `episodes`: a user JSONL (needs its lock:
    it is itself the pre-registered catalog).
    """
    if episodes:
        return load_episodes(episodes), {"catalog": str(episodes), "catalog_kind": "episodes"}
    path = seeds or SEEDS_PATH
    items = assemble(load_seeds(path))
    if not seeds and EPISODES_PATH.read_text(encoding="utf-8") != dumps(items):
        raise CatalogError(
            EPISODES_PATH,
            "does not match what seeds.yaml assembles to; run `python -m clinical_cf.catalog.workflow.assemble`",
        )
    return items, {"catalog": str(path), "catalog_kind": "seeds"}


def _one_source(args: Mapping[str, Any]) -> None:
    exclusive(episodes=args["episodes"], seeds=args["seeds"])


def _parts(args: SimpleNamespace) -> TaskParts:
    items, source = load_workflow_episodes(args.episodes, args.seeds)
    chosen = [
        e for e in items
        if e.task_class in args.task_class and e.variant in args.variant and (args.split == "all" or e.split == args.split)
    ]
    if not chosen:
        raise ValueError("no episodes match the selection (task_class, variant, split)")
    samples = [
        Sample(
            id=e.id,
            input=e.turns[0].content,
            target=e.reference_action,
            metadata={
                "episode_id": e.id, "seed_id": e.seed_id, "task_class": e.task_class, "variant": e.variant,
                "parameterization": e.parameterization, "split": e.split, "pair_key": e.pair_key,
                "reference_action": e.reference_action, "acceptable_actions": list(e.acceptable_actions),
                "turns": [t.model_dump() for t in e.turns], "condition": args.condition, "cost_ratio": float(args.cost_ratio),
            },
        )
        for e in chosen
    ]
    return TaskParts(
        samples=samples,
        solver=workflow_decision(args.condition, args.json_schema, args.reader),
        scorers=[workflow_action()],
        dataset="workflow",
        metadata={
            **source, "condition": args.condition, "cost_ratio": float(args.cost_ratio),
            "samples": len(samples), "variants": dict(Counter(e.variant for e in chosen)),
            "escalate_required": sum(e.reference_action == "ESCALATE" for e in chosen),
        },
    )


SPEC = TaskSpec(
    suite=WORKFLOW,
    before=_one_source,
    arguments={
        "condition": partial(choice, allowed=CONDITIONS),
        "split": partial(choice, allowed=("all", "dev", "test")),
        "cost_ratio": partial(number, minimum=1, maximum=1000),  # finite utilities: no -inf, no inversion
        "json_schema": flag,
        "reader": model_role,
        "allow_unregistered": flag,
        "task_class": partial(selection, allowed=TASK_CLASSES),
        "variant": partial(selection, allowed=VARIANTS),
        "episodes": input_file,
        "seeds": input_file,
    },
    inputs=lambda args: workflow_inputs(args.episodes, args.seeds),
    parts=_parts,
)


def build_workflow_task(
    episodes: str | None = None,
    seeds: str | None = None,
    allow_unregistered: bool = False,
    task_class: str | list[str] = "all",
    variant: str | list[str] = "all",
    split: Literal["all", "dev", "test"] = "all",
    condition: Literal["neutral", "uncertainty"] = "neutral",
    cost_ratio: float = 5.0,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Workflow escalation (seed 004): four actions under missing, stale, conflicting and late information.

    Args:
        episodes: JSONL of episodes in the documented schema (needs `<file>.lock`).
        seeds: Seeds YAML to assemble episodes from (default: the bundled, locked 40 seeds).
        allow_unregistered: Run a catalog that does not match its lock.
        task_class: Comma list of task classes, or "all".
        variant: Comma list of variants (clean, missing, stale, conflict, late_risk), or "all".
        split: "dev" (8 seeds), "test" (32 seeds) or "all".
        condition: "neutral" action definitions or "uncertainty" prompting.
        cost_ratio: Missed-escalation cost relative to an unnecessary escalation (5; 10 for robustness).
        json_schema: Send the decision JSON Schema as `response_schema`.
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
    """
    return build_task(SPEC, **locals())
