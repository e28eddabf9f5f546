"""Build the CSS agent observation-perturbation task (seed 001 section 3.3).

Each sample is (case, perturbation): the chart agent runs once unperturbed (shared per case) and
once with the perturbation applied to what the chart tool returns; `judge_process` scores the
perturbed run against the pre-registered expected behaviour.
"""

from __future__ import annotations

import hashlib
from functools import partial
from types import SimpleNamespace
from typing import get_args

from inspect_ai import Task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.observations import OBSERVATIONS_PATH, Kind, load_observations
from clinical_cf.catalog.validate import load_checked_cases
from clinical_cf.scorers.css_process import judge_process
from clinical_cf.solvers.css_agent import AGENT_REQUEST, perturbed_observation_agent
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import (
    MAX_COUNT,
    MAX_MESSAGES,
    MAX_SECTION_CAP_BYTES,
    choice,
    count,
    flag,
    input_file,
    model_role,
    selection,
)
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task
from clinical_cf.tasks.css_task import Split, select_split

KINDS: tuple[str, ...] = get_args(Kind)


def _parts(args: SimpleNamespace) -> TaskParts:
    path = args.observations or OBSERVATIONS_PATH
    perturbations = [p for p in load_observations(path) if p.kind in args.kinds]
    if not perturbations:
        raise ValueError(f"{path}: no perturbations of kinds {sorted(args.kinds)}")
    loaded = select_split(load_checked_cases(args.cases or CASES_PATH), args.split)

    pairs = [(c, p) for c in loaded for p in perturbations if p.applies(c)]
    if args.samples is not None and args.samples < len(pairs):
        pairs = sorted(pairs, key=lambda cp: hashlib.sha256(f"{cp[0].case_id}:{cp[1].id}".encode()).hexdigest())[: args.samples]
    order = {c.case_id: i for i, c in enumerate(loaded)}
    pairs.sort(key=lambda cp: (order[cp[0].case_id], cp[1].id))

    dataset = [
        Sample(
            id=f"{case.case_id}:{p.id}",
            input=AGENT_REQUEST.format(case_id=case.case_id),
            target=p.expected_behaviour,
            metadata={
                "case_id": case.case_id,
                "cancer_type": case.cancer_type,
                "split": case.split,
                "family": "O",
                "kind": p.kind,
                "perturbation_id": p.id,
                "perturbation": p.model_dump(mode="json"),
                "baseline_sections": dict(case.sections),
            },
        )
        for case, p in pairs
    ]
    return TaskParts(
        samples=dataset,
        solver=perturbed_observation_agent(args.baseline_cache, args.section_cap_bytes, args.max_messages, reader=args.reader),
        scorers=[judge_process(json_schema=args.json_schema)],
        dataset="css_agent_observation",
        metadata={
            "observations": str(path),
            "kinds": sorted(args.kinds),
            "samples": len(dataset),
            "per_perturbation": {p.id: sum(1 for _, q in pairs if q.id == p.id) for p in perturbations},
        },
    )


SPEC = TaskSpec(
    suite=CSS,
    arguments={
        "kinds": partial(selection, allowed=KINDS, all_word=False),
        "split": partial(choice, allowed=("dev", "test", "all")),
        "samples": partial(count, minimum=1, optional=True, maximum=MAX_COUNT),
        "allow_unregistered": flag,
        "section_cap_bytes": partial(count, minimum=256, maximum=MAX_SECTION_CAP_BYTES),
        "max_messages": partial(count, minimum=2, maximum=MAX_MESSAGES),
        "baseline_cache": flag,
        "json_schema": flag,
        "reader": model_role,
        "observations": input_file,
        "cases": input_file,
    },
    inputs=lambda args: TaskInputs(catalogs=[args.observations or OBSERVATIONS_PATH], data=[args.cases or CASES_PATH]),
    parts=_parts,
    setting=lambda args: "agent_observation",
)


def build_css_observation_task(
    kinds: str | list[str] = "noise,contradiction,tool_failure",
    cases: str | None = None,
    observations: str | None = None,
    split: Split = "all",
    samples: int | None = 100,
    allow_unregistered: bool = False,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    baseline_cache: bool = True,
    json_schema: bool = True,
    reader: str = "reader",
) -> Task:
    """Observation perturbations for the chart agent.

    Args:
        kinds: Comma-separated perturbation kinds: noise, contradiction, tool_failure.
        cases: JSONL file of cases (default: the bundled cohort).
        observations: Perturbation catalog YAML (default: catalog/css/observations.yaml; needs its lock).
        split: "dev", "test" or "all" cases.
        samples: A fixed subset of this many (case, perturbation) pairs, chosen by the SHA-256
            of their ids (None for all).
        allow_unregistered: Run even if the perturbation catalog does not match its lock.
        section_cap_bytes: Cap on each tool return.
        max_messages: Message limit per agent run.
        baseline_cache: Share the unperturbed run across a case's samples.
        json_schema: Ask the judge for structured output.
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
    """
    return build_task(SPEC, **locals())
