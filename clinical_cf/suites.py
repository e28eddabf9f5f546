"""The four suites as typed specs: what each is, which tasks it registers, which files define its results.

A `Suite` declares, with real references (never `"module:function"` strings), everything the tools
around a suite need: its input kinds with their loaders and schemas, how its records are loaded, its
scorers (with their metrics), the pre-registered files beyond its comparability files, whether a Flow
sweep needs a judge, and its report section, tables and banners. Its tasks are its folders under
tasks/ (`task_folders`). The exports (`clinical-cf export register|dataset|lm-eval`), the validator
(`clinical-cf validate`), the task builder (`clinical_cf.tasks.build`), the Flow sweep and the report
read this table, so a suite added here is exported, validated and reported everywhere at once.

Everything is imported at module level, except what imports this table itself (a cycle: the report
sections of `clinical_cf.analysis.sections`, the registration banners of `clinical_cf.analysis.registration`
via `clinical_cf.registration`, the judge-audit probe loader via `clinical_cf.tasks.build`) and what
needs pandas (the parse-quality table, the lexical-audit loader): small functions that import on call.

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

from inspect_ai.scorer import Scorer
from inspect_ai.util import registry_info
from pydantic import BaseModel

import clinical_cf.catalog
import clinical_cf.tasks
from clinical_cf.catalog.css.counterfactuals import load_counterfactuals
from clinical_cf.catalog.css.observations import load_observations
from clinical_cf.catalog.css.predictions import load_predictions
from clinical_cf.catalog.css.schema import Case, load_cases
from clinical_cf.catalog.medpic.questions import Question, load_questions
from clinical_cf.catalog.medpic.rules import load_rules
from clinical_cf.catalog.sensitivity.perturbations import load_perturbations
from clinical_cf.catalog.sensitivity.vignettes import Vignette, load_vignettes
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.catalog.workflow import LEXICAL_AUDIT_PATH
from clinical_cf.catalog.workflow.episodes import Episode, load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.scorers.cms import consensus_match
from clinical_cf.scorers.css_judge import agent_judge_direction, judge_direction
from clinical_cf.scorers.css_process import judge_process
from clinical_cf.scorers.editor_audit import editor_fidelity
from clinical_cf.scorers.judge_audit import audited_judge
from clinical_cf.scorers.medpic import medpic_exact_set, rationale_mentions_change
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.scorers.sensitivity import direction_consistency
from clinical_cf.scorers.workflow import workflow_action
from clinical_cf.scoring_contract import scoring_fingerprint

if TYPE_CHECKING:
    import pandas as pd

    from clinical_cf.analysis.sections import Section, SectionContext

# The catalog package, wherever it is installed (the checkout's catalog/ in an editable install).
CATALOG_DIR = Path(clinical_cf.catalog.__file__).resolve().parent
# The tasks package: one folder per public task, `tasks/<name>/<name>.py` (the checkout's tasks/ in an editable install).
TASKS_DIR = Path(clinical_cf.tasks.__file__).resolve().parent


def task_folders() -> tuple[str, ...]:
    """Every public task, by its folder `tasks/<name>/` (a package holding `<name>.py`): the one list of tasks.

    A task belongs to the suite its name starts with (`css_family_d` to `css`); `clinical_cf/_registry.py`
    imports each (tests/test_specs.py names a folder it misses), setup.py packages each.
    """
    return tuple(sorted(p.parent.name for p in TASKS_DIR.glob("*/__init__.py") if (p.parent / f"{p.parent.name}.py").is_file()))

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
    scorers: tuple[Callable[..., Scorer], ...] = ()
    """The scorer factories its tasks use; each declares its metrics (`@scorer(metrics=...)`). Every task also
    gets `clinical_cf.registration.registration_check` from `build_task`."""
    extra_published: tuple[Path, ...] = ()
    """Pre-registered files it reads beyond its comparability files (judged against the published hashes too)."""
    judged: bool = False
    """Its main task needs a judge role (`--model-role judge=...`): the Flow sweep binds one."""
    records_need_lock: bool = False
    """The task refuses a user records file without a `<file>.lock` (it is itself the pre-registered catalog)."""
    report_section: Callable[[SectionContext], Section] | None = None
    """Builds the suite's section of `clinical-cf report` (see `clinical_cf.analysis.sections`)."""
    report_tables: tuple[ReportTable, ...] = ()
    """Extra section tables over the suite's sample rows."""
    report_banners: tuple[ReportBanner, ...] = ()
    """Section banners over the suite's logs and sample rows."""

    @property
    def tasks(self) -> tuple[str, ...]:
        """Its registered tasks (`clinical_cf/<name>`): the task folders named after it, its main task first."""
        mine = [t for t in task_folders() if t == self.name or t.startswith(f"{self.name}_")]
        return tuple(sorted(mine, key=lambda t: t != self.main_task))

    @property
    def main_task(self) -> str:
        """The task whose samples a dataset export writes (every sample of the suite's default run): the suite's name."""
        return self.name

    def metrics(self) -> dict[str, list[str]]:
        """The metrics each of the suite's scorers reports, by scorer name (read from Inspect's registry)."""
        out: dict[str, list[str]] = {}
        for factory in self.scorers:
            info = registry_info(factory)
            metrics = info.metadata.get("metrics") or []
            out[info.name] = [registry_info(m).name if callable(m) else str(m) for m in _flatten(metrics)]
        return out

    @property
    def comparability_files(self) -> tuple[Path, ...]:
        return (*self.catalogs, self.data)

    def fingerprint(self) -> str:
        """SHA-256 over the comparability files' names and bytes and the suite's scoring contract
        (`clinical_cf.scoring_contract`: prompts, schemas, score sets, reading rules, scoring constants):
        changes exactly when results stop being comparable."""
        digest = hashlib.sha256()
        for path in self.comparability_files:
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
        digest.update(b"scoring\0" + scoring_fingerprint(self.name).encode() + b"\n")
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


# --- references imported on call: these modules import this table (a cycle) -------------------------


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


def registration_banners(logs: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    """Logs whose inputs were unregistered, re-locked after release or mixed."""
    from clinical_cf.analysis.registration import report_banners

    return report_banners(logs, samples)


# pandas (0.8 s to import) is loaded only by whoever reports or audits, not by every task and validator: these
# two import on call for that reason, not for a cycle.
def parse_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Parse quality: samples scored, errored or stopped by a limit, and replies read each way, per model, judge, run and suite."""
    from clinical_cf.analysis.parse_quality import parse_table

    return parse_table(samples)


def _load_lexical_audit(path: Path) -> Any:
    from clinical_cf.analysis.workflow_controller import load_audit

    return load_audit(path)


def _load_reader_corpus(path: Path) -> Any:
    """The reader-audit corpus (its loader lives with its task, which imports this table)."""
    from clinical_cf.tasks.css_reader_audit.css_reader_audit import load_corpus

    return load_corpus(path)


def _load_probes(path: Path) -> Any:
    """The judge-audit probes (their loader lives with their task, which imports this table)."""
    from clinical_cf.tasks.judge_audit_task import load_probes

    return load_probes(path).probes


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
        InputKind("reader_corpus", _load_reader_corpus, bundled=CATALOG_DIR / "css" / "reader_audit_replies.yaml"),
        # A frozen set is checked against its own lock when a task reads it; here only its records are.
        InputKind("counterfactuals", partial(load_counterfactuals, allow_unregistered=True)),
    ),
    scorers=(judge_direction, agent_judge_direction, consensus_match, judge_process, audited_judge, editor_fidelity, reader_accuracy),
    extra_published=(
        CATALOG_DIR / "css" / "predictions.yaml",
        CATALOG_DIR / "css" / "judge_probes.yaml",
        CATALOG_DIR / "css" / "reader_audit_replies.yaml",
    ),
    judged=True,
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
    scorers=(direction_consistency,),
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
        InputKind("lexical_audit", _load_lexical_audit, bundled=LEXICAL_AUDIT_PATH),
    ),
    scorers=(workflow_action,),
    extra_published=(LEXICAL_AUDIT_PATH,),
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
    scorers=(medpic_exact_set, rationale_mentions_change),
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
    from clinical_cf import _registry  # the tasks import this table (a cycle)

    factory = getattr(_registry, name, None)
    if factory is None:
        raise ValueError(f"no task named {name!r} in clinical_cf")
    return factory(**args)
