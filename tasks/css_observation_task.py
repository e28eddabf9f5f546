"""Build the CSS agent observation-perturbation task (seed 001 section 3.3).

Each sample is (case, perturbation): the chart agent runs once unperturbed (shared per case) and
once with the perturbation applied to what the chart tool returns; `judge_process` scores the
perturbed run against the pre-registered expected behaviour.
"""

from __future__ import annotations

import hashlib
from typing import get_args

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.observations import OBSERVATIONS_PATH, Kind, load_observations
from clinical_cf.core.locking import check_lock
from clinical_cf.catalog.validate import load_checked_cases

from clinical_cf.registration import published_version, register_inputs, registration_check
from clinical_cf.scorers.css_process import judge_process
from clinical_cf.solvers.css_agent import AGENT_REQUEST, perturbed_observation_agent
from clinical_cf.tasks.arguments import GENERATE_DEFAULTS, choice, clean_task_errors, count, flag, input_file, selection
from clinical_cf.tasks.css_task import Split, select_split

KINDS: tuple[str, ...] = get_args(Kind)


@clean_task_errors
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
    """
    wanted = selection("kinds", kinds, KINDS, all_word=False)
    split = choice("split", split, ("dev", "test", "all"))  # type: ignore[assignment]
    samples = count("samples", samples, minimum=1, optional=True)
    allow_unregistered = flag("allow_unregistered", allow_unregistered)
    section_cap_bytes = count("section_cap_bytes", section_cap_bytes, minimum=256)  # type: ignore[assignment]
    max_messages = count("max_messages", max_messages, minimum=2)  # type: ignore[assignment]
    baseline_cache = flag("baseline_cache", baseline_cache)
    json_schema = flag("json_schema", json_schema)
    path = input_file("observations", observations) or OBSERVATIONS_PATH
    cases_path = input_file("cases", cases) or CASES_PATH
    registration = register_inputs([path], [cases_path], allow_unregistered)
    lock = check_lock(path, allow_unregistered=allow_unregistered)
    perturbations = [p for p in load_observations(path) if p.kind in wanted]
    if not perturbations:
        raise ValueError(f"{path}: no perturbations of kinds {sorted(wanted)}")
    loaded = select_split(load_checked_cases(cases_path), split)

    pairs = [(c, p) for c in loaded for p in perturbations if p.applies(c)]
    if samples is not None and samples < len(pairs):
        pairs = sorted(pairs, key=lambda cp: hashlib.sha256(f"{cp[0].case_id}:{cp[1].id}".encode()).hexdigest())[:samples]
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
                "catalog_sha256": lock.catalog_sha256,
                "catalog_registered": lock.registered,
                "baseline_sections": dict(case.sections),
                **registration.sample_metadata(),
            },
        )
        for case, p in pairs
    ]
    return Task(
        version=published_version("css"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(dataset, name="css_agent_observation"),
        solver=perturbed_observation_agent(baseline_cache, section_cap_bytes, max_messages),
        scorer=[judge_process(json_schema=json_schema), registration_check()],
        config=GENERATE_DEFAULTS,
        metadata={
            "suite": "css",
            "setting": "agent_observation",
            "observations": str(path),
            "catalog_sha256": lock.catalog_sha256,
            "catalog_registered": lock.registered,
            "kinds": sorted(wanted),
            "samples": len(dataset),
            "per_perturbation": {p.id: sum(1 for _, q in pairs if q.id == p.id) for p in perturbations},
            **registration.task_metadata(),
        },
    )
