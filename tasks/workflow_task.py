"""Build the workflow escalation task (seed 004): episodes -> samples, multi-turn JSON decisions, utility."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.catalog.errors import CatalogError
from clinical_cf.catalog.loading import comma_list, resolve_user_path
from clinical_cf.catalog.lock import check_lock
from clinical_cf.catalog.workflow import EPISODES_PATH, SEEDS_PATH, TASK_CLASSES, VARIANTS
from clinical_cf.catalog.workflow.assemble import assemble, dumps
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.exports.register import published_version
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.solvers.workflow import CONDITIONS, workflow_decision


def _selection(value: str | list[str], allowed: tuple[str, ...], name: str) -> set[str]:
    wanted = comma_list(value)
    if not wanted or wanted == {"all"}:
        return set(allowed)
    unknown = wanted - set(allowed)
    if unknown:
        raise ValueError(f"{name}: unknown value(s) {sorted(unknown)}; choose from {', '.join(allowed)} or 'all'")
    return wanted


def load_workflow_episodes(
    episodes: str | None = None, seeds: str | None = None, allow_unregistered: bool = False
) -> tuple[list[Episode], dict]:
    """The episodes to run and their provenance (which file is pre-registered, its hash).

    Default: the bundled episodes, which must be exactly what the locked seeds assemble to.
    `seeds=`: assemble a user seeds YAML (needs its lock). `episodes=`: a user JSONL (needs its lock).
    """
    if episodes and seeds:
        raise ValueError("pass either episodes= or seeds=, not both")
    if episodes:
        path = resolve_user_path(episodes)
        lock = check_lock(path, allow_unregistered=allow_unregistered)
        items = load_episodes(path)
        source = {"catalog": str(path), "catalog_kind": "episodes"}
    else:
        path = resolve_user_path(seeds) if seeds else SEEDS_PATH
        lock = check_lock(path, allow_unregistered=allow_unregistered)
        items = assemble(load_seeds(path))
        source = {"catalog": str(path), "catalog_kind": "seeds"}
        if not seeds and EPISODES_PATH.read_text(encoding="utf-8") != dumps(items):
            raise CatalogError(
                EPISODES_PATH,
                "does not match what seeds.yaml assembles to; run `python -m clinical_cf.catalog.workflow.assemble`",
            )
    return items, {**source, "catalog_sha256": lock.catalog_sha256, "catalog_registered": lock.registered}


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
    """
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if split not in ("all", "dev", "test"):
        raise ValueError(f"split must be all, dev or test, got {split!r}")
    if float(cost_ratio) <= 0:
        raise ValueError("cost_ratio must be positive")
    classes = _selection(task_class, TASK_CLASSES, "task_class")
    variants = _selection(variant, VARIANTS, "variant")
    items, source = load_workflow_episodes(episodes, seeds, allow_unregistered)
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
            },
        )
        for e in chosen
    ]
    counts = Counter(e.variant for e in chosen)
    return Task(
        version=published_version("workflow"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(samples, name="workflow"),
        solver=workflow_decision(condition, json_schema),
        scorer=workflow_action(),
        metadata={
            "suite": "workflow", **source, "condition": condition, "cost_ratio": float(cost_ratio),
            "samples": len(samples), "variants": dict(counts),
            "escalate_required": sum(e.reference_action == "ESCALATE" for e in chosen),
        },
    )
