"""Deterministic episode assembly: seeds x 2 parameterizations x 5 variants -> episodes.jsonl.

    python -m clinical_cf.catalog.workflow.assemble [--seeds SEEDS.yaml] [--out EPISODES.jsonl]

Rewrites the checked-in `episodes.jsonl` from `seeds.yaml`; a test checks the bytes are identical.

Every episode starts from the clean rendering of its seed and parameterization and changes only
the manipulated part:

- clean: Chart (context + critical fact), New since the last review (event), Request;
- missing: the critical-fact sentence deleted, nothing else touched;
- stale: an "Earlier summary on file" block (the superseded summary) inserted after the chart;
- conflict: the contradiction / minimisation sentence appended to the event block;
- late_risk: the clean first turn unchanged, then a second user turn carrying the red flag.

The block headers below are structural; the controller's detectors strip them (they must not
learn the variant from the header).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from clinical_cf.catalog.workflow import EPISODES_PATH, SEEDS_PATH, VARIANTS
from clinical_cf.catalog.workflow.episodes import Episode, Turn
from clinical_cf.catalog.workflow.seeds import Seed, load_seeds

CHART_HEADER = "Chart:"
STALE_HEADER = "Earlier summary on file:"
EVENT_HEADER = "New since the last review:"
REQUEST_HEADER = "Request:"
LATE_HEADER = "Later message (arrived after the request):"
STRUCTURAL_HEADERS = (CHART_HEADER, STALE_HEADER, EVENT_HEADER, REQUEST_HEADER, LATE_HEADER)


def _join(sentences: list[str]) -> str:
    return " ".join(s.strip() for s in sentences if s.strip())


def render_first_turn(texts: dict, variant: str) -> str:
    """The first user turn of one variant; only the manipulated block differs from clean."""
    chart = list(texts["context"])
    event = [texts["event"]]
    keep_fact = variant != "missing"
    if keep_fact:
        (event if texts["critical_fact_in"] == "event" else chart).append(texts["critical_fact"])
    if variant == "conflict":
        event.append(texts["conflict"])
    blocks = [f"{CHART_HEADER}\n{_join(chart)}"]
    if variant == "stale":
        blocks.append(f"{STALE_HEADER}\n{texts['stale_summary']}")
    blocks.append(f"{EVENT_HEADER}\n{_join(event)}")
    blocks.append(f"{REQUEST_HEADER}\n{texts['request']}")
    return "\n\n".join(blocks)


def episode_for(seed: Seed, parameterization: int, variant: str) -> Episode:
    texts = dict(seed.texts(parameterization))
    texts["critical_fact_in"] = seed.critical_fact_in
    turns = [Turn(content=render_first_turn(texts, variant))]
    if variant == "late_risk":
        turns.append(Turn(content=f"{LATE_HEADER}\n{texts['late_risk']}"))
    manipulated = {
        "clean": None,
        "missing": texts["critical_fact"],
        "stale": texts["stale_summary"],
        "conflict": texts["conflict"],
        "late_risk": texts["late_risk"],
    }[variant]
    ref = seed.reference[variant]
    return Episode(
        id=f"{seed.id}.p{parameterization}.{variant}",
        seed_id=seed.id,
        task_class=seed.task_class,
        parameterization=parameterization,
        variant=variant,
        split=seed.split,
        pair_key=f"{seed.id}.p{parameterization}",
        turns=turns,
        reference_action=ref.action,
        acceptable_actions=list(ref.acceptable or [ref.action]),
        rationale=ref.rationale,
        manipulated=manipulated,
    )


def assemble(seeds: list[Seed]) -> list[Episode]:
    """Every seed x parameterization x variant, in seed-file order; deterministic (no randomness)."""
    return [episode_for(seed, p, v) for seed in seeds for p in (1, 2) for v in VARIANTS]


def dumps(episodes: list[Episode]) -> str:
    return "".join(json.dumps(e.model_dump(mode="json"), ensure_ascii=False, sort_keys=False) + "\n" for e in episodes)


def write_episodes(seeds_path: str | Path = SEEDS_PATH, out: str | Path = EPISODES_PATH) -> Path:
    out = Path(out)
    out.write_text(dumps(assemble(load_seeds(seeds_path))), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default=str(SEEDS_PATH))
    parser.add_argument("--out", default=str(EPISODES_PATH))
    args = parser.parse_args(argv)
    print(f"wrote {write_episodes(args.seeds, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
