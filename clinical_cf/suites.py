"""The four suites as typed specs: what each is, which tasks it registers, which files define its results.

A `Suite` declares, with real references (never `"module:function"` strings), everything the tools
around a suite need: its input kinds with their loaders and schemas, how its records are loaded, its
typed solver state (`store_model`), its solvers, scorers (with their metrics) and its report section,
tables and banners. The exports (`clinical-cf export register|dataset|lm-eval`), the validator
(`clinical-cf validate`), the task builder (`clinical_cf.tasks.build`) and the report read this
table, so a suite added here is exported, validated and reported everywhere at once.

The catalog's schemas and loaders are imported directly (the catalog is the layer below). References
above it (task modules, solvers, scorers, the analysis) are small functions that import on call:
those modules import this table themselves, and what only building or reporting a task needs is
not loaded by whoever only reads the table (the validator, the exports).

A suite's *comparability files* are the pre-registered catalogs and the generated data its scores
are computed over: when any of their bytes change, results from before and after are no longer
comparable (see `clinical_cf.exports.register`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

import clinical_cf.catalog
from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.catalog.css.observations import load_observations
from clinical_cf.catalog.css.predictions import load_predictions
from clinical_cf.catalog.css.schema import Case, load_cases
from clinical_cf.catalog.medpic.questions import Question, load_questions
from clinical_cf.catalog.medpic.rules import load_rules
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import Vignette, load_vignettes
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds

if TYPE_CHECKING:
    import pandas as pd
    from inspect_ai.scorer import Scorer
    from inspect_ai.solver import Solver
    from inspect_ai.util import StoreModel

    from clinical_cf.analysis.sections import Section, SectionContext

# The catalog package, wherever it is installed (the checkout's catalog/ in an editable install).
CATALOG_DIR = Path(clinical_cf.catalog.__file__).resolve().parent

ReportTable = Callable[["pd.DataFrame"], "pd.DataFrame"]
"""A per-sample table of a report section: `(samples) -> table`; its docstring's first line is the title."""
ReportBanner = Callable[["pd.DataFrame", "pd.DataFrame"], list[str]]
"""A section banner: `(logs, samples) -> lines`."""


@dataclass(frozen=True)
class InputKind:
    """One kind of input file a suite reads, as `clinical-cf validate --kind` knows it."""

    kind: str
    load: Callable[[Path], Any]
    """Validates a file of this kind (errors name file, entry, field) and returns its entries."""
    count: Callable[[Any], int] = len
    """How many entries `load` returned (for the validator's summary line)."""
    bundled: Path | None = None
    """The bundled file of this kind, when the suite ships one."""


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    description: str
    source: str
    """The paper (or write-up) the suite follows."""
    arxiv: str | None
    tags: tuple[str, ...]
    tasks: tuple[str, ...]
    """Registered task names (`clinical_cf/<name>`)."""
    main_task: str
    """The task whose samples a dataset export writes (every sample of the suite's default run)."""
    records: str
    """File name of the suite's source records in a dataset export (cases, vignettes, ...)."""
    data: Path
    """The bundled generated records."""
    schema: type[BaseModel]
    """The records' pydantic schema."""
    record_id: str
    loader: Callable[[Path], list[Any]]
    """Validates a records file against the schema (errors name file, entry, field)."""
    data_arg: str
    """The main task's argument that takes a user records file."""
    catalogs: tuple[Path, ...]
    generator: str
    """Dotted name of the module that regenerates `data` deterministically (`python -m <generator>`)."""
    breakdown: str
    """Sample metadata field the dataset card counts samples by."""
    inputs: tuple[InputKind, ...] = ()
    """Every input kind the suite's tasks read (the validator's kinds)."""
    store_model: Callable[[], type[StoreModel]] | None = None
    """The typed solver state its samples carry (`EvalSample.store_as(suite.store_model())`)."""
    solvers: Callable[[], tuple[Callable[..., Solver], ...]] = lambda: ()
    """The solver factories its tasks use."""
    scorers: Callable[[], tuple[Callable[..., Scorer], ...]] = lambda: ()
    """The scorer factories its tasks use; each declares its metrics (`@scorer(metrics=...)`)."""
    records_need_lock: bool = False
    """The task refuses a user records file without a `<file>.lock` (it is itself the pre-registered catalog)."""
    report_section: Callable[[SectionContext], Section] | None = None
    """Builds the suite's section of `clinical-cf report` (see `clinical_cf.analysis.sections`)."""
    report_tables: tuple[ReportTable, ...] = ()
    """Extra section tables over the suite's sample rows."""
    report_banners: tuple[ReportBanner, ...] = ()
    """Section banners over the suite's logs and sample rows."""

    def record_model(self) -> type[BaseModel]:
        return self.schema

    def load_records(self) -> Callable[[Path], list[Any]]:
        return self.loader

    def metrics(self) -> dict[str, list[str]]:
        """The metrics each of the suite's scorers reports, by scorer name (read from Inspect's registry)."""
        from inspect_ai.util import registry_info

        out: dict[str, list[str]] = {}
        for factory in self.scorers():
            info = registry_info(factory)
            metrics = info.metadata.get("metrics") or []
            out[info.name] = [registry_info(m).name if callable(m) else str(m) for m in _flatten(metrics)]
        return out

    @property
    def comparability_files(self) -> tuple[Path, ...]:
        return (*self.catalogs, self.data)

    def fingerprint(self) -> str:
        """SHA-256 over the comparability files' names and bytes: changes exactly when results stop being comparable."""
        digest = hashlib.sha256()
        for path in self.comparability_files:
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
        return digest.hexdigest()

    def file_hashes(self) -> dict[str, str]:
        return {_display_path(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in self.comparability_files}


def _flatten(metrics: Any) -> list[Any]:
    if isinstance(metrics, dict):
        return [m for value in metrics.values() for m in _flatten(value)]
    if isinstance(metrics, (list, tuple)):
        return [m for value in metrics for m in _flatten(value)]
    return [metrics]


def _display_path(path: Path) -> str:
    """`catalog/...` for bundled files (the same in a checkout and an install), the path itself otherwise."""
    if path.resolve().is_relative_to(CATALOG_DIR):
        return f"catalog/{path.resolve().relative_to(CATALOG_DIR).as_posix()}"
    return str(path)


# --- references imported on call (Inspect, solvers, scorers, analysis, task modules) -------------


def _css_arms() -> type[StoreModel]:
    from clinical_cf.solvers.css import CSSArms

    return CSSArms


def _sensitivity_arms() -> type[StoreModel]:
    from clinical_cf.solvers.sensitivity import SensitivityArms

    return SensitivityArms


def _workflow_decisions() -> type[StoreModel]:
    from clinical_cf.solvers.workflow import WorkflowDecisions

    return WorkflowDecisions


def _css_solvers() -> tuple[Callable[..., Solver], ...]:
    from clinical_cf.solvers.css import two_stage_recommendations
    from clinical_cf.solvers.css_agent import chart_agent_recommendations, perturbed_observation_agent
    from clinical_cf.solvers.judge_audit import audit_arms

    return (two_stage_recommendations, chart_agent_recommendations, perturbed_observation_agent, audit_arms)


def _css_scorers() -> tuple[Callable[..., Scorer], ...]:
    from clinical_cf.registration import registration_check
    from clinical_cf.scorers.cms import consensus_match
    from clinical_cf.scorers.css_judge import agent_judge_direction, judge_direction
    from clinical_cf.scorers.css_process import judge_process
    from clinical_cf.scorers.judge_audit import audited_judge

    return (judge_direction, agent_judge_direction, consensus_match, judge_process, audited_judge, registration_check)


def _sensitivity_solvers() -> tuple[Callable[..., Solver], ...]:
    from clinical_cf.solvers.sensitivity import candidate_distributions

    return (candidate_distributions,)


def _sensitivity_scorers() -> tuple[Callable[..., Scorer], ...]:
    from clinical_cf.registration import registration_check
    from clinical_cf.scorers.sensitivity import direction_consistency

    return (direction_consistency, registration_check)


def _workflow_solvers() -> tuple[Callable[..., Solver], ...]:
    from clinical_cf.solvers.workflow import workflow_decision

    return (workflow_decision,)


def _workflow_scorers() -> tuple[Callable[..., Scorer], ...]:
    from clinical_cf.registration import registration_check
    from clinical_cf.scorers.workflow import workflow_action

    return (workflow_action, registration_check)


def _medpic_solvers() -> tuple[Callable[..., Solver], ...]:
    from inspect_ai.solver import generate

    return (generate,)


def _medpic_scorers() -> tuple[Callable[..., Scorer], ...]:
    from clinical_cf.registration import registration_check
    from clinical_cf.scorers.medpic import medpic_exact_set, rationale_mentions_change

    return (medpic_exact_set, rationale_mentions_change, registration_check)


def css_section(ctx: SectionContext) -> Section:
    from clinical_cf.analysis.sections import css_section

    return css_section(ctx)


def sensitivity_section(ctx: SectionContext) -> Section:
    from clinical_cf.analysis.sections import sensitivity_section

    return sensitivity_section(ctx)


def workflow_section(ctx: SectionContext) -> Section:
    from clinical_cf.analysis.sections import workflow_section

    return workflow_section(ctx)


def medpic_section(ctx: SectionContext) -> Section:
    from clinical_cf.analysis.sections import medpic_section

    return medpic_section(ctx)


def parse_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Share of replies read each way (json, repaired, field, markdown, prose, invalid, unreadable) per model and suite."""
    from clinical_cf.analysis.parse_quality import parse_table

    return parse_table(samples)


def registration_banners(logs: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    """Logs whose inputs were unregistered, re-locked after release or mixed."""
    from clinical_cf.analysis.registration import report_banners

    return report_banners(logs, samples)


# Input kinds whose loaders live above the catalog (the judge-audit probes with their task, the lexical
# audit with the workflow controller that uses it): imported on call, as those modules import this table.
def _load_probes(path: Path) -> Any:
    from clinical_cf.tasks.judge_audit_task import load_probes

    return load_probes(path).probes


def _load_lexical_audit(path: Path) -> Any:
    from clinical_cf.analysis.workflow_controller import load_audit

    return load_audit(path)


# Every suite's report section shows how its replies were read (issue 14) and warns about logs whose
# inputs were unregistered, re-locked after release or mixed (issue 15).
REPORT_TABLES: tuple[ReportTable, ...] = (parse_table,)
REPORT_BANNERS: tuple[ReportBanner, ...] = (registration_banners,)


CSS = Suite(
    name="css",
    title="Causal Sensitivity Score (CSS): counterfactual interventions on oncology tumor-board packets",
    description=(
        "Pre-registered interventions (families A-E: biomarker flips, progression, missing biomarkers, "
        "resection status, new metastases) on synthetic tumor-board packets; a judge model scores in "
        "{0, 0.5, 1} whether the recommendations moved in the pre-registered direction, compared with CMS, "
        "a coverage score. Single-shot and ReAct-agent settings, plus agent observation perturbations."
    ),
    source="Counterfactual Evaluation Reveals Hidden Capability Profiles in Clinical LLMs and Agents (Turk 2026)",
    arxiv="https://arxiv.org/abs/2605.30590",
    tags=("Medical", "Counterfactual", "Model-graded", "Agent"),
    tasks=(
        "css", "css_family_a", "css_family_b", "css_family_c", "css_family_d", "css_family_e",
        "css_agent", "css_agent_family_d", "css_agent_observation", "css_judge_audit",
    ),
    main_task="css",
    records="cases",
    data=CATALOG_DIR / "css" / "cases.jsonl",
    schema=Case,
    record_id="case_id",
    loader=load_cases,
    data_arg="cases",
    catalogs=(
        CATALOG_DIR / "css" / "interventions.yaml",
        CATALOG_DIR / "css" / "observations.yaml",
        CATALOG_DIR / "css" / "lexicon.yaml",
    ),
    generator="clinical_cf.catalog.css.cohort",
    breakdown="family",
    inputs=(
        InputKind("cases", load_checked_cases, bundled=CATALOG_DIR / "css" / "cases.jsonl"),
        InputKind(
            "interventions", load_checked_interventions, lambda c: len(c.interventions), CATALOG_DIR / "css" / "interventions.yaml"
        ),
        InputKind("observations", load_observations, bundled=CATALOG_DIR / "css" / "observations.yaml"),
        InputKind("predictions", load_predictions, bundled=CATALOG_DIR / "css" / "predictions.yaml"),
        InputKind("judge_probes", _load_probes, bundled=CATALOG_DIR / "css" / "judge_probes.yaml"),
        # A frozen set is checked against its own lock when a task reads it; here only its records are.
        InputKind("counterfactuals", partial(load_counterfactuals, allow_unregistered=True)),
    ),
    store_model=_css_arms,
    solvers=_css_solvers,
    scorers=_css_scorers,
    report_section=css_section,
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)

SENSITIVITY = Suite(
    name="sensitivity",
    title="Clinical sensitivity: diagnostic distributions under pre-registered perturbations",
    description=(
        "Diagnostic vignettes under surface, clinical-semantic, background-injection, conflicting-result and "
        "timeline perturbations, each with a pre-registered expected direction (invariant, more confident, "
        "less confident, shifted); flip rate, Jensen-Shannon divergence, confidence and entropy change, "
        "and direction consistency."
    ),
    source="Practitioner write-up on counterfactual evaluation of clinical LLMs and ReAct agents (no arXiv paper)",
    arxiv=None,
    tags=("Medical", "Counterfactual", "Robustness"),
    tasks=("sensitivity",),
    main_task="sensitivity",
    records="vignettes",
    data=CATALOG_DIR / "sensitivity" / "vignettes.jsonl",
    schema=Vignette,
    record_id="vignette_id",
    loader=load_vignettes,
    data_arg="vignettes",
    catalogs=(CATALOG_DIR / "sensitivity" / "perturbations.yaml",),
    generator="clinical_cf.catalog.sensitivity.vignettes",
    breakdown="type",
    inputs=(
        InputKind("vignettes", load_vignettes, bundled=CATALOG_DIR / "sensitivity" / "vignettes.jsonl"),
        InputKind(
            "perturbations", load_perturbations, lambda loaded: len(loaded[0]), bundled=CATALOG_DIR / "sensitivity" / "perturbations.yaml"
        ),
    ),
    store_model=_sensitivity_arms,
    solvers=_sensitivity_solvers,
    scorers=_sensitivity_scorers,
    report_section=sensitivity_section,
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)


WORKFLOW = Suite(
    name="workflow",
    title="Workflow escalation: actions under missing, stale, conflicting and late information",
    description=(
        "Synthetic workflow episodes (documentation update, evidence retrieval, patient messaging, triage "
        "handoff) in clean, missing, stale, conflict and late-risk variants; the model chooses ANSWER, "
        "ASK_CLARIFICATION, ABSTAIN or ESCALATE with a stated confidence. Decision accuracy, a 5:1 "
        "cost-sensitive utility, missed and unnecessary escalation, ECE and failure AUROC, and a post-hoc "
        "workflow-aware controller with a lexical out-of-vocabulary audit."
    ),
    source="Auditing Escalation Reliability in Healthcare LLM Agents (Zheng et al. 2026)",
    arxiv="https://arxiv.org/abs/2610.21270",
    tags=("Medical", "Counterfactual", "Agent", "Calibration"),
    tasks=("workflow",),
    main_task="workflow",
    records="episodes",
    data=CATALOG_DIR / "workflow" / "episodes.jsonl",
    schema=Episode,
    record_id="id",
    loader=load_episodes,
    data_arg="episodes",
    catalogs=(CATALOG_DIR / "workflow" / "seeds.yaml",),
    generator="clinical_cf.catalog.workflow.assemble",
    breakdown="variant",
    records_need_lock=True,
    inputs=(
        InputKind("episodes", load_episodes, bundled=CATALOG_DIR / "workflow" / "episodes.jsonl"),
        InputKind("seeds", load_seeds, bundled=CATALOG_DIR / "workflow" / "seeds.yaml"),
        InputKind("lexical_audit", _load_lexical_audit, bundled=CATALOG_DIR / "workflow" / "lexical_audit.yaml"),
    ),
    store_model=_workflow_decisions,
    solvers=_workflow_solvers,
    scorers=_workflow_scorers,
    report_section=workflow_section,
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)


MEDPIC = Suite(
    name="medpic",
    title="MedPIC: counterfactual sensitivity to patient information in medication-safety reasoning",
    description=(
        "Multiple-choice medication-safety questions generated from sourced rules (AGS Beers 2023, pregnancy "
        "and lactation labelling, the KIDs List, renal dosing thresholds): guideline-following questions and "
        "counterfactual pairs that change only the rule-relevant patient information, so the rule activates "
        "or deactivates. Exact set match; GF, CF, activation, deactivation and pair accuracy with "
        "rule-clustered bootstrap CIs."
    ),
    source="Evaluating Counterfactual Sensitivity to Patient Information in Medication-Safety Reasoning (MedPIC-Bench, 2026)",
    arxiv="https://arxiv.org/abs/2608.03028",
    tags=("Medical", "Counterfactual", "Multiple-choice"),
    tasks=("medpic", "medpic_gf", "medpic_cf"),
    main_task="medpic",
    records="questions",
    data=CATALOG_DIR / "medpic" / "questions.jsonl",
    schema=Question,
    record_id="id",
    loader=load_questions,
    data_arg="questions",
    catalogs=(CATALOG_DIR / "medpic" / "rules.yaml",),
    generator="clinical_cf.catalog.medpic.generate",
    breakdown="kind",
    inputs=(
        InputKind("questions", load_questions, bundled=CATALOG_DIR / "medpic" / "questions.jsonl"),
        InputKind("rules", load_rules, bundled=CATALOG_DIR / "medpic" / "rules.yaml"),
    ),
    solvers=_medpic_solvers,
    scorers=_medpic_scorers,
    report_section=medpic_section,
    report_tables=REPORT_TABLES,
    report_banners=REPORT_BANNERS,
)

SUITES: dict[str, Suite] = {s.name: s for s in (CSS, SENSITIVITY, MEDPIC, WORKFLOW)}


def input_kinds() -> dict[str, InputKind]:
    """Every input kind any suite reads, by name (what `clinical-cf validate --kind` accepts)."""
    kinds: dict[str, InputKind] = {}
    for suite in SUITES.values():
        for item in suite.inputs:
            if item.kind in kinds:
                raise ValueError(f"input kind {item.kind!r} is declared by two suites")
            kinds[item.kind] = item
    return kinds


def suite_of_task(task: str) -> Suite:
    """The suite that registers `task`."""
    for suite in SUITES.values():
        if task in suite.tasks:
            return suite
    raise ValueError(f"no suite registers a task named {task!r}")


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}") from None


def create_task(name: str, **args: Any):
    """A registered task by name, built with `args` (as `-T` would)."""
    from clinical_cf import _registry

    factory = getattr(_registry, name, None)
    if factory is None:
        raise ValueError(f"no task named {name!r} in clinical_cf")
    return factory(**args)
