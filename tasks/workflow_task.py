"""Build the workflow escalation task (seed 004): episodes -> samples, multi-turn JSON decisions, utility."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import check_lock
from clinical_cf.catalog.workflow import EPISODES_PATH, SEEDS_PATH, TASK_CLASSES, VARIANTS
from clinical_cf.catalog.workflow.assemble import assemble, dumps
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.exports.register import published_version
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.registration import Registration, register_inputs, registration_check
from clinical_cf.solvers.workflow import CONDITIONS, workflow_decision
from clinical_cf.tasks.arguments import (
    GENERATE_DEFAULTS,
    choice,
    clean_task_errors,
    exclusive,
    flag,
    input_file,
    number,
    selection,
)


def load_workflow_episodes(
    episodes: str | None = None, seeds: str | None = None, allow_unregistered: bool = False
) -> tuple[list[Episode], dict, Registration]:
    """The episodes to run, their provenance (which file is pre-registered, its hash) and the files' registration.

    Default: the bundled episodes (locked), which must be exactly what the locked seeds assemble to.
    `seeds=`: assemble a user seeds YAML (needs its lock). `episodes=`: a user JSONL (needs its lock:
    it is itself the pre-registered catalog).
    """
    exclusive(episodes=episodes, seeds=seeds)
    episodes_path = input_file("episodes", episodes)
    seeds_path = input_file("seeds", seeds)
    if episodes_path:
        path = episodes_path
        registration = register_inputs([path], [], allow_unregistered)
        lock = check_lock(path, allow_unregistered=allow_unregistered)
        items = load_episodes(path)
        source = {"catalog": str(path), "catalog_kind": "episodes"}
    else:
        path = seeds_path or SEEDS_PATH
        registration = register_inputs([path], [] if seeds_path else [EPISODES_PATH], allow_unregistered)
        lock = check_lock(path, allow_unregistered=allow_unregistered)
        items = assemble(load_seeds(path))
        source = {"catalog": str(path), "catalog_kind": "seeds"}
        if not seeds_path and EPISODES_PATH.read_text(encoding="utf-8") != dumps(items):
            raise CatalogError(
                EPISODES_PATH,
                "does not match what seeds.yaml assembles to; run `python -m clinical_cf.catalog.workflow.assemble`",
            )
    source = {**source, "catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered}
    return items, source, registration


@clean_task_errors
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
        reader: Model role that reads replies the decision JSON or ACTION: line does not state; "none" turns it off.
    """
    condition = choice("condition", condition, CONDITIONS)  # type: ignore[assignment]
    split = choice("split", split, ("all", "dev", "test"))  # type: ignore[assignment]
    cost_ratio = number("cost_ratio", cost_ratio, positive=True)
    json_schema = flag("json_schema", json_schema)
    allow_unregistered = flag("allow_unregistered", allow_unregistered)
    classes = selection("task_class", task_class, TASK_CLASSES)
    variants = selection("variant", variant, VARIANTS)
    items, source, registration = load_workflow_episodes(episodes, seeds, allow_unregistered)
    chosen = [
        e for e in items
        if e.task_class in classes and e.variant in variants and (split == "all" or e.split == split)
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
                "turns": [t.model_dump() for t in e.turns], "condition": condition, "cost_ratio": float(cost_ratio),
                "catalog_sha256": source["catalog_sha256"], "catalog_registered": source["catalog_registered"],
                **registration.sample_metadata(),
            },
        )
        for e in chosen
    ]
    counts = Counter(e.variant for e in chosen)
    return Task(
        version=published_version("workflow"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(samples, name="workflow"),
        solver=workflow_decision(condition, json_schema, reader),
        scorer=[workflow_action(), registration_check()],
        config=GENERATE_DEFAULTS,
        metadata={
            "suite": "workflow", **source, "condition": condition, "cost_ratio": float(cost_ratio),
            "samples": len(samples), "variants": dict(counts),
            "escalate_required": sum(e.reference_action == "ESCALATE" for e in chosen),
            **registration.task_metadata(),
        },
    )
