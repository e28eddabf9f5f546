"""Build a CSS task: expand cases x catalog interventions into tuples, wire solver and scorers.

Every public CSS task but the audits and the observation agent is a variant of `build_css_task`
(`clinical_cf.tasks.build.variant`: its setting, its families, perhaps its interventions); this
module is the one place the suite's tuples are assembled and its arguments declared (the annotations
below: each alias is the argument's type, range and choices), and `clinical_cf.tasks.build.build_task`
does what every task does (argument checks, registration and locks, stamping, version, metadata).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Literal

from inspect_ai import Task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.cohort import COHORT_VERSION
from clinical_cf.catalog.css.counterfactuals import GENERATED_REVIEW, frozen_for_task, load_counterfactuals, runtime_drafts
from clinical_cf.catalog.css.expand import CSSTuple, Expansion, MutationMode, ResidueMode, expand_tuples
from clinical_cf.catalog.css.interventions import FAMILY_NAMES, Catalog, Intervention
from clinical_cf.catalog.css.lexicon import LEXICON_PATH
from clinical_cf.catalog.css.schema import Case
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.core.loading import comma_list
from clinical_cf.scorers.cms import consensus_match
from clinical_cf.scorers.css_judge import agent_judge_direction, judge_direction
from clinical_cf.solvers.css import two_stage_recommendations
from clinical_cf.solvers.css_agent import AGENT_REQUEST, chart_agent_recommendations
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import (
    MAX_COUNT,
    MAX_MESSAGES,
    MAX_SCALE,
    MAX_SECTION_CAP_BYTES,
    Between,
    Checked,
    Only,
    RoleName,
    SelfJudging,
    TaskInputError,
    UserFile,
)
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task

MAX_OUTPUT_TOKENS = 32_768
"""The largest per-stage output cap a task accepts."""

# Each CSS argument's type, range and choices, declared once: the builder and every public CSS task annotate with these.
Families = Annotated[
    str | list[str], Checked(lambda name, value: css_families(value), "letters among A, B, C, D, E (e.g. D or ABCDE)")
]
Controls = Literal["per_case", "all", "invariance", "none"]
Split = Literal["dev", "test", "all"]
Setting = Literal["single_shot", "agent"]
CMSMatching = Literal["lexicon", "judge"]
Unreviewed = Literal["refuse", "allow"]
INTERVENTIONS_EXPECTED = "a comma list of intervention ids of the families (e.g. D2_add_resection), or none for all"


def intervention_ids(name: str, value: object) -> list[str] | None:
    """A comma list of intervention ids (checked against the catalog when it is read), or None for every one."""
    if value is not None and not (isinstance(value, str) or (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value))):
        raise TaskInputError(f"task argument '{name}': got {value!r}; expected {INTERVENTIONS_EXPECTED}")
    return sorted(comma_list(value)) or None  # type: ignore[arg-type]


Interventions = Annotated[str | list[str] | None, Checked(intervention_ids, INTERVENTIONS_EXPECTED)]
# What only one setting takes (a variant fixing the other setting does not show it).
Scale = Annotated[float, Between(1, MAX_SCALE), Only(setting="single_shot")]  # below 1 cannot shorten a packet
Tuples = Annotated[int | None, Between(1, MAX_COUNT), Only(setting="agent")]
SectionCap = Annotated[int, Between(256, MAX_SECTION_CAP_BYTES), Only(setting="agent")]
MaxMessages = Annotated[int, Between(2, MAX_MESSAGES), Only(setting="agent")]
OutputTokens = Annotated[int | None, Between(16, MAX_OUTPUT_TOKENS), Only(setting="single_shot")]


def _inputs(args: SimpleNamespace) -> TaskInputs:
    return TaskInputs(
        catalogs=[args.catalog or CATALOG_PATH, LEXICON_PATH],
        data=[args.cases or CASES_PATH, *([args.counterfactuals] if args.counterfactuals else [])],
    )


def _parts(args: SimpleNamespace) -> TaskParts:
    selected, mutation_mode, scale, residue = args.families, args.mutation_mode, args.scale, args.residue
    catalog_path = args.catalog or CATALOG_PATH
    loaded_catalog = load_checked_interventions(catalog_path)
    loaded_cases = select_split(load_checked_cases(args.cases or CASES_PATH), args.split)

    expansion = expand_tuples(loaded_cases, loaded_catalog, mutation_mode, scale, families=selected, residue=residue)
    wanted = chosen_interventions(args.interventions, selected, loaded_catalog, catalog_path)
    agent = args.setting == "agent"
    frozen: list[CSSTuple] | None = None
    review_metadata: dict[str, dict] = {}
    review_counts: dict[str, int] | None = None
    if args.counterfactuals:
        frozen, review_metadata, review_counts = _frozen(
            args.counterfactuals, loaded_cases, loaded_catalog, selected + ["N"], args.allow_unregistered, args.unreviewed
        )
        chosen = fixed_subset([t for t in frozen if t.intervention.family != "N" and t.intervention.id in wanted], args.tuples)
    else:
        chosen = fixed_subset([t for t in expansion.tuples if t.intervention.id in wanted], args.tuples)
        # Regex edits of a user's free text (no record) are drafts: refused unless -T unreviewed=allow (issue 28).
        review_metadata = runtime_drafts(chosen, args.unreviewed, args.cases or CASES_PATH)
    control_expansion: Expansion | None = None
    if args.controls != "none" and frozen is not None and any(t.intervention.family == "N" for t in frozen):
        evaluated = {t.case.case_id for t in chosen}
        chosen += _choose_controls([t for t in frozen if t.intervention.family == "N" and t.case.case_id in evaluated], args.controls)
    elif args.controls != "none":
        evaluated = {t.case.case_id for t in chosen}
        control_cases = [c for c in loaded_cases if c.case_id in evaluated]
        control_expansion = expand_tuples(
            control_cases, loaded_catalog, mutation_mode, scale, families=["N"], residue=residue
        )
        control_tuples = control_expansion.tuples
        if agent:
            # The agent reads sections one at a time: a change of section order is invisible to it.
            control_tuples = [t for t in control_tuples if t.counterfactual.sections != t.baseline.sections]
        chosen += _choose_controls(control_tuples, args.controls)
    # Group each case's tuples (its control last) so a case's baseline is generated once and
    # read from the cache while still fresh, and a small --limit sees controls too.
    case_order = {c.case_id: i for i, c in enumerate(loaded_cases)}
    chosen.sort(key=lambda t: (case_order[t.case.case_id], t.intervention.family == "N", t.intervention.id))

    samples = [_sample(t, loaded_catalog, mutation_mode, agent) for t in chosen]
    for sample in samples:
        # How far each counterfactual was verified and reviewed (a generated one: deterministic checks only).
        sample.metadata = {**(sample.metadata or {}), **review_metadata.get(str(sample.id), GENERATED_REVIEW)}
        if frozen is not None:
            sample.metadata["counterfactual_route"] = "frozen"  # a frozen set's texts are used verbatim
    counts = expansion.summary() | (control_expansion.summary() if control_expansion else {})
    return TaskParts(
        samples=samples,
        solver=(
            chart_agent_recommendations(args.baseline_cache, args.section_cap_bytes, args.max_messages, reader=args.reader)
            if agent
            else two_stage_recommendations(
                args.baseline_cache, args.json_schema, args.reader, args.summary_max_tokens, args.recommend_max_tokens
            )
        ),
        scorers=[
            (agent_judge_direction if agent else judge_direction)(json_schema=args.json_schema),
            consensus_match(matching=args.cms_matching),
        ],
        dataset=f"css_{''.join(selected).lower()}",
        metadata={
            "families": selected,
            "interventions": args.interventions,
            "catalog": str(catalog_path),
            "catalog_version": loaded_catalog.version,
            "cohort_version": COHORT_VERSION if args.cases is None else None,  # the bundled cohort's generator version
            "mutation_mode": mutation_mode,
            # Issue 27: which route made the counterfactuals, and what the clinical invariants dropped, per rule.
            "counterfactual_routes": {"frozen": len(samples)} if frozen is not None else expansion.routes(),
            "invariant_drops": expansion.invariant_drops(),
            "residue": residue,
            "counterfactuals": str(args.counterfactuals) if args.counterfactuals else None,
            "counterfactuals_frozen": len(frozen) if frozen is not None else None,
            "counterfactuals_review": review_counts,
            "unreviewed_scored": sum(1 for m in review_metadata.values() if str(m.get("counterfactual_review")).startswith("unreviewed")),
            "unreviewed": args.unreviewed,
            "split": args.split,
            "controls": args.controls,
            "cases": len(loaded_cases),
            "tuples": len(samples),
            "intervention_counts": counts,
        },
    )


def build_css_task(
    families: Families = "ABCDE",
    interventions: Interventions = None,
    cases: UserFile = None,
    catalog: UserFile = None,
    mutation_mode: MutationMode = "auto",
    split: Split = "all",
    controls: Controls = "per_case",
    allow_unregistered: bool = False,
    scale: Scale = 1.0,
    cms_matching: CMSMatching = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    setting: Setting = "single_shot",
    tuples: Tuples = None,
    section_cap_bytes: SectionCap = 8192,
    max_messages: MaxMessages = 40,
    residue: ResidueMode = "drop",
    counterfactuals: UserFile = None,
    unreviewed: Unreviewed = "refuse",
    reader: RoleName = "reader",
    summary_max_tokens: OutputTokens = None,
    recommend_max_tokens: OutputTokens = None,
    self_judging: SelfJudging = "refuse",
) -> Task:
    """A CSS task over the given intervention families.

    Args:
        families: Families to evaluate, e.g. "D" or "ABCDE".
        interventions: Only these interventions of the families, by catalog id (e.g. D2_add_resection);
            none (default) evaluates every intervention of the families.
        cases: JSONL file of cases (default: the bundled synthetic cohort).
        catalog: Intervention catalog YAML (default: the bundled pre-registered catalog).
        mutation_mode: "auto" (default): a case with a structured record gets both arms rendered from
            the edited record, a case without one gets regex edits of its text; "regex" edits packet text
            (the CSS paper); "structured" edits the patient record and re-renders the packet.
        split: Restrict to the fixed "dev" or "test" cases, or use "all".
        controls: Negative controls (family N): "per_case" adds one control tuple per
            evaluated case (chosen by a hash of the case id among the controls that are not
            invariance changes), "all" adds every control, "invariance" adds the per-case control
            and every invariance change (demographic and style, issue 47) of the evaluated cases,
            "none" adds none. Controls are scored but kept out of CSS.
        allow_unregistered: Run even if the catalog does not match its lock.
        scale: Re-render packets at this length multiple, 1 to 5 (`MAX_SCALE`; needs structured records).
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
        unreviewed: With `counterfactuals`: "refuse" (default) refuses a set with entries no
            reviewer approved; "allow" scores them and marks each such sample unreviewed.
            Rejected entries are never scored. Without `counterfactuals`, regex edits of cases that
            have no structured record (a user's free text) are drafts: "refuse" refuses them,
            "allow" scores them marked as unreviewed drafts.
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
        summary_max_tokens: Single-shot setting: output-token cap for stage 1 (the case summary).
        recommend_max_tokens: Single-shot setting: output-token cap for stage 2 (the recommendations).
        self_judging: With no judge role bound (`--model-role judge=...` or `grader=...`): "refuse" (default) does not
            start; "allow" lets the model under test judge its own replies, and every score records `self_judged`.
    """
    return build_task(SPEC, **locals())


SPEC = TaskSpec(
    suite=CSS, arguments=build_css_task, inputs=_inputs, parts=_parts, setting=lambda args: args.setting, judged=lambda args: True
)

def _frozen(
    path: Path, cases: list[Case], catalog: Catalog, families: list[str], allow_unregistered: bool, unreviewed: str
) -> tuple[list[CSSTuple], dict[str, dict], dict[str, int]]:
    return frozen_for_task(load_counterfactuals(path, allow_unregistered), cases, catalog, families, path, unreviewed)  # type: ignore[arg-type]


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


def chosen_interventions(ids: list[str] | None, families: list[str], catalog: Catalog, path: Path) -> set[str]:
    """The intervention ids to evaluate: every one of the families when `ids` is None, else `ids`, each checked against
    the catalog (an unknown id or one outside the families names the ids it could have been)."""
    offered = [i.id for i in catalog.interventions if i.family in families]
    if ids is None:
        return set(offered)
    unknown = [i for i in ids if i not in offered]
    if unknown:
        raise TaskInputError(
            f"task argument 'interventions': {', '.join(map(repr, unknown))} is not an intervention of families "
            f"{''.join(families)} in {path}; choose from {', '.join(offered)}"
        )
    return set(ids)


def fixed_subset(tuples: list[CSSTuple], size: int | None) -> list[CSSTuple]:
    """`size` tuples chosen by the SHA-256 of their ids (all of them when size is None)."""
    if size is None or size >= len(tuples):
        return list(tuples)
    return sorted(tuples, key=lambda t: hashlib.sha256(t.id.encode()).hexdigest())[:size]


def invariance_metadata(intervention: Intervention) -> dict[str, str]:
    """The attribute an invariance control changes (issue 47), for the report's per-attribute table; {} otherwise."""
    op = intervention.invariance
    return {"invariance_attribute": op.attribute, "invariance_kind": op.kind} if op is not None else {}


def select_split(cases: list[Case], split: Split) -> list[Case]:
    """The cases of a split (already checked against `Split` with the task's other arguments)."""
    return cases if split == "all" else [c for c in cases if c.split == split]


def _choose_controls(control_tuples: list[CSSTuple], controls: Controls) -> list[CSSTuple]:
    if controls == "all":
        return control_tuples
    invariance = [t for t in control_tuples if t.intervention.invariance is not None]
    # The per-case rotation is over the classic controls only, so adding invariance entries leaves its choice as it was.
    chosen = _one_control_per_case([t for t in control_tuples if t.intervention.invariance is None])
    return chosen + invariance if controls == "invariance" else chosen


def _one_control_per_case(control_tuples: list[CSSTuple]) -> list[CSSTuple]:
    by_case: dict[str, list[CSSTuple]] = {}
    for t in control_tuples:
        by_case.setdefault(t.case.case_id, []).append(t)
    chosen = []
    for case_id, options in by_case.items():
        # Rotate deterministically through the controls so each is used about equally.
        index = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % len(options)
        chosen.append(options[index])
    return chosen


def _sample(t: CSSTuple, catalog: Catalog, mode: MutationMode, agent: bool = False) -> Sample:
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
            "counterfactual_route": t.route,
            "counterfactual_verdict": t.verdict,
            **invariance_metadata(intervention),
            "residue": [h.as_dict() for h in t.residue],
            "consensus": [c.model_dump(mode="json") for c in case.consensus],
            **packets,
        },
    )
