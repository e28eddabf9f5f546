"""Build the CSS agent observation-perturbation task (seed 001 section 3.3).

Each sample is (case, perturbation): the chart agent runs once unperturbed (shared per case) and
once with the perturbation applied to what the chart tool returns; `judge_process` scores the
perturbed run against the pre-registered expected behaviour.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Annotated, get_args

from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.observations import OBSERVATIONS_PATH, Kind, load_observations
from clinical_cf.catalog.validate import load_checked_cases
from clinical_cf.scorers.css_process import judge_process
from clinical_cf.solvers.css_agent import AGENT_REQUEST, perturbed_observation_agent
from clinical_cf.tasks.arguments import MAX_COUNT, Between, CommaList
from clinical_cf.tasks.build import TaskInputs, TaskParts
from clinical_cf.tasks.css_task import select_split

KINDS: tuple[str, ...] = get_args(Kind)
Kinds = Annotated[str | list[str], CommaList(KINDS, all_word=False)]
Samples = Annotated[int | None, Between(1, MAX_COUNT)]


def parts(args: SimpleNamespace) -> TaskParts:
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


def inputs(args: SimpleNamespace) -> TaskInputs:
    return TaskInputs(catalogs=[args.observations or OBSERVATIONS_PATH], data=[args.cases or CASES_PATH])
