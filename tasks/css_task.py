"""Build a CSS task: load and lock the catalog, expand tuples, wire solver and scorers.

Every public CSS task (`css`, `css_family_a` ... `css_family_e`, `css_agent`, `css_agent_family_d`) is a thin `@task` that
calls `build_css_task`; this module is the one place the suite is assembled.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, Literal

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.lexicon import LEXICON_PATH
from clinical_cf.catalog.css.expand import CSSTuple, Expansion, MutationMode, ResidueMode, expand_tuples
from clinical_cf.catalog.css.interventions import FAMILY_NAMES, Catalog
from clinical_cf.catalog.css.schema import Case
from clinical_cf.core.locking import check_lock
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.exports.register import published_version
from clinical_cf.registration import register_inputs, registration_check
from clinical_cf.scorers.cms import consensus_match
from clinical_cf.scorers.css_judge import agent_judge_direction, judge_direction
from clinical_cf.solvers.css import two_stage_recommendations
from clinical_cf.solvers.css_agent import AGENT_REQUEST, chart_agent_recommendations
from clinical_cf.tasks.arguments import (
    GENERATE_DEFAULTS,
    TaskInputError,
    choice,
    clean_task_errors,
    count,
    flag,
    input_file,
    number,
)

Controls = Literal["per_case", "all", "none"]
Split = Literal["dev", "test", "all"]


@clean_task_errors
def build_css_task(
    families: str | Iterable[str] = "ABCDE",
    cases: str | None = None,
    catalog: str | None = None,
    mutation_mode: MutationMode = "regex",
    split: Split = "all",
    controls: Controls = "per_case",
    allow_unregistered: bool = False,
    scale: float = 1.0,
    cms_matching: Literal["lexicon", "judge"] = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    setting: Literal["single_shot", "agent"] = "single_shot",
    tuples: int | None = None,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    residue: ResidueMode = "drop",
    counterfactuals: str | None = None,
    reader: str = "reader",
    summary_max_tokens: int | None = None,
    recommend_max_tokens: int | None = None,
) -> Task:
    """A CSS task over the given intervention families.

    Args:
        families: Families to evaluate, e.g. "D" or "ABCDE".
        cases: JSONL file of cases (default: the bundled synthetic cohort).
        catalog: Intervention catalog YAML (default: the bundled pre-registered catalog).
        mutation_mode: "regex" edits packet text (the CSS paper); "structured" edits the
            patient record and re-renders the packet.
        split: Restrict to the fixed "dev" or "test" cases, or use "all".
        controls: Negative controls (family N): "per_case" adds one control tuple per
            evaluated case (chosen by a hash of the case id), "all" adds every control,
            "none" adds none. Controls are scored but kept out of CSS.
        allow_unregistered: Run even if the catalog does not match its lock.
        scale: Re-render packets at this length multiple (needs structured records).
        cms_matching: "lexicon" (deterministic) or "judge" coverage matching for CMS.
        baseline_cache: Share the baseline arm across a case's tuples via Inspect's
            generate cache (False regenerates it per tuple).
        json_schema: Ask for structured output (`response_schema`) from the model under
            test and the judge; turn off for servers that reject it.
        setting: "single_shot" (two-stage generation with the packet in context) or "agent"
            (a ReAct agent that reads the chart through `read_chart_section`).
        tuples: Evaluate a fixed subset of this many A-E tuples: the first in order of the
            SHA-256 of their ids, so the subset is the same on every machine and run.
        section_cap_bytes: Agent setting: cap on each tool return.
        max_messages: Agent setting: message limit per agent run.
        residue: "drop" (default) drops and counts tuples whose counterfactual still asserts or
            presupposes the original fact somewhere in the packet; "keep" scores them, with the
            offending lines in sample metadata (`residue`), to study their effect.
        counterfactuals: A frozen, locked counterfactuals.jsonl (`clinical-cf counterfactuals
            build`): its texts are used verbatim instead of mutating the packets, so every
            model sees the same counterfactuals. Its negative controls are used when it has them.
        reader: Model role that reads replies the recommendation JSON or answer lines do not state
            (default: the `reader` role, else the judge role); "none" turns the reader off.
        summary_max_tokens: Single-shot setting: output-token cap for stage 1 (the case summary).
        recommend_max_tokens: Single-shot setting: output-token cap for stage 2 (the recommendations).
    """
    selected = css_families(families)
    mutation_mode = choice("mutation_mode", mutation_mode, ("regex", "structured"))  # type: ignore[assignment]
    split = choice("split", split, ("dev", "test", "all"))  # type: ignore[assignment]
    controls = choice("controls", controls, ("per_case", "all", "none"))  # type: ignore[assignment]
    allow_unregistered = flag("allow_unregistered", allow_unregistered)
    scale = number("scale", scale, positive=True, maximum=100)
    cms_matching = choice("cms_matching", cms_matching, ("lexicon", "judge"))  # type: ignore[assignment]
    baseline_cache = flag("baseline_cache", baseline_cache)
    json_schema = flag("json_schema", json_schema)
    setting = choice("setting", setting, ("single_shot", "agent"))  # type: ignore[assignment]
    tuples = count("tuples", tuples, minimum=1, optional=True)
    section_cap_bytes = count("section_cap_bytes", section_cap_bytes, minimum=256)  # type: ignore[assignment]
    max_messages = count("max_messages", max_messages, minimum=2)  # type: ignore[assignment]
    catalog_path = input_file("catalog", catalog) or CATALOG_PATH
    cases_path = input_file("cases", cases) or CASES_PATH
    residue = choice("residue", residue, ("drop", "keep"))  # type: ignore[assignment]
    counterfactuals_path = input_file("counterfactuals", counterfactuals)
    registration = register_inputs(
        [catalog_path, LEXICON_PATH], [cases_path, *([counterfactuals_path] if counterfactuals_path else [])], allow_unregistered
    )

    lock = check_lock(catalog_path, allow_unregistered=allow_unregistered)
    loaded_catalog = load_checked_interventions(catalog_path)
    loaded_cases = select_split(load_checked_cases(cases_path), split)

    expansion = expand_tuples(loaded_cases, loaded_catalog, mutation_mode, scale, families=selected, residue=residue)
    agent = setting == "agent"
    frozen: list[CSSTuple] | None = None
    if counterfactuals_path:
        frozen = _frozen(counterfactuals_path, loaded_cases, loaded_catalog, selected + ["N"], allow_unregistered)
        chosen = fixed_subset([t for t in frozen if t.intervention.family != "N"], tuples)
    else:
        chosen = fixed_subset(expansion.tuples, tuples)
    control_expansion: Expansion | None = None
    if controls != "none" and frozen is not None and any(t.intervention.family == "N" for t in frozen):
        evaluated = {t.case.case_id for t in chosen}
        chosen += _choose_controls([t for t in frozen if t.intervention.family == "N" and t.case.case_id in evaluated], controls)
    elif controls != "none":
        evaluated = {t.case.case_id for t in chosen}
        control_cases = [c for c in loaded_cases if c.case_id in evaluated]
        control_expansion = expand_tuples(
            control_cases, loaded_catalog, mutation_mode, scale, families=["N"], residue=residue
        )
        control_tuples = control_expansion.tuples
        if agent:
            # The agent reads sections one at a time: a change of section order is invisible to it.
            control_tuples = [t for t in control_tuples if t.counterfactual.sections != t.baseline.sections]
        chosen += _choose_controls(control_tuples, controls)
    # Group each case's tuples (its control last) so a case's baseline is generated once and
    # read from the cache while still fresh, and a small --limit sees controls too.
    case_order = {c.case_id: i for i, c in enumerate(loaded_cases)}
    chosen.sort(key=lambda t: (case_order[t.case.case_id], t.intervention.family == "N", t.intervention.id))

    samples = [_sample(t, loaded_catalog, lock.catalog_sha256, lock.registered, mutation_mode, agent) for t in chosen]
    counts = expansion.summary() | (control_expansion.summary() if control_expansion else {})
    for sample in samples:
        sample.metadata = {**(sample.metadata or {}), **registration.sample_metadata()}
    return Task(
        version=published_version("css"),  # the suite's Register version N-X, so the log names it
        dataset=MemoryDataset(samples, name=f"css_{''.join(selected).lower()}"),
        solver=(
            chart_agent_recommendations(baseline_cache, section_cap_bytes, max_messages, reader=reader)
            if agent
            else two_stage_recommendations(baseline_cache, json_schema, reader, count("summary_max_tokens", summary_max_tokens, minimum=16, optional=True), count("recommend_max_tokens", recommend_max_tokens, minimum=16, optional=True))
        ),
        scorer=[
            (agent_judge_direction if agent else judge_direction)(json_schema=json_schema),
            consensus_match(matching=cms_matching),
            registration_check(),
        ],
        config=GENERATE_DEFAULTS,
        metadata={
            "suite": "css",
            "setting": setting,
            "families": selected,
            "catalog": str(catalog_path),
            "catalog_version": loaded_catalog.version,
            "catalog_sha256": lock.catalog_sha256,
            "catalog_registered": lock.registered,
            "mutation_mode": mutation_mode,
            "residue": residue,
            "counterfactuals": str(counterfactuals) if counterfactuals else None,
            "counterfactuals_frozen": len(frozen) if frozen is not None else None,
            "split": split,
            "controls": controls,
            "cases": len(loaded_cases),
            "tuples": len(samples),
            "intervention_counts": counts,
            **registration.task_metadata(),
        },
    )


def _frozen(path: Path, cases: list[Case], catalog: Catalog, families: list[str], allow_unregistered: bool) -> list[CSSTuple]:
    from clinical_cf.catalog.css.counterfactuals import frozen_tuples, load_counterfactuals

    return frozen_tuples(load_counterfactuals(path, allow_unregistered), cases, catalog, families, path)


def css_families(families: object) -> list[str]:
    """The families argument ("D", "ABCDE", "A,B" or Inspect's list for `-T families=A,B`) as sorted letters among A-E."""
    if isinstance(families, str):
        letters = [c for c in families if c.isalnum()]
    elif isinstance(families, (list, tuple)) and all(isinstance(f, str) for f in families):
        letters = [c for f in families for c in f if c.isalnum()]
    else:
        letters = []
    selected = sorted({f.upper() for f in letters})
    unknown = [f for f in selected if f not in FAMILY_NAMES or f == "N"]
    if unknown or not selected:
        raise TaskInputError(
            f"task argument 'families': got {families!r}; expected letters among A, B, C, D, E (e.g. D or ABCDE)"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
        )
    return selected


def fixed_subset(tuples: list[CSSTuple], size: int | None) -> list[CSSTuple]:
    """`size` tuples chosen by the SHA-256 of their ids (all of them when size is None)."""
    if size is None or size >= len(tuples):
        return list(tuples)
    return sorted(tuples, key=lambda t: hashlib.sha256(t.id.encode()).hexdigest())[:size]


def select_split(cases: list[Case], split: Split) -> list[Case]:
    if split == "all":
        return cases
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev', 'test' or 'all', not {split!r}")
    return [c for c in cases if c.split == split]


def _choose_controls(control_tuples: list[CSSTuple], controls: Controls) -> list[CSSTuple]:
    if controls == "all":
        return control_tuples
    by_case: dict[str, list[CSSTuple]] = {}
    for t in control_tuples:
        by_case.setdefault(t.case.case_id, []).append(t)
    chosen = []
    for case_id, options in by_case.items():
        # Rotate deterministically through the controls so each is used about equally.
        index = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % len(options)
        chosen.append(options[index])
    return chosen


def _sample(
    t: CSSTuple, catalog: Catalog, sha256: str, registered: bool, mode: MutationMode, agent: bool = False
) -> Sample:
    case, intervention = t.case, t.intervention
    expected = intervention.expected_change_for(case)
    # The agent reads the chart through its tool: both packets travel as sections, and the
    # input is the request it answers.
    packets = (
        {"baseline_sections": t.baseline.sections, "counterfactual_sections": t.counterfactual.sections}
        if agent
        else {"baseline_packet": t.baseline.text}
    )
    return Sample(
        id=t.id,
        input=AGENT_REQUEST.format(case_id=case.case_id) if agent else t.counterfactual.text,
        target=expected,
        metadata={
            "case_id": case.case_id,
            "cancer_type": case.cancer_type,
            "split": case.split,
            "family": intervention.family,
            "family_name": FAMILY_NAMES[intervention.family],
            "intervention_id": intervention.id,
            "intervention": intervention.title,
            "expected_change": expected,
            "scoring_rule": catalog.scoring_rule_for(intervention),
            "mutation_mode": mode,
            "counterfactual_verdict": t.verdict,
            "residue": [h.as_dict() for h in t.residue],
            "catalog_sha256": sha256,
            "catalog_registered": registered,
            "consensus": [c.model_dump(mode="json") for c in case.consensus],
            **packets,
        },
    )
