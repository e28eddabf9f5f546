"""Inspect Flow spec: every clinical_cf suite over a list of models and a list of judges, as one resumable sweep.

    flow run flows/clinical_cf_sweep.py \
        -A models=openai/gpt-5.4,anthropic/claude-opus-4-7 \
        -A judges=anthropic/claude-opus-4-7,openai/gpt-5.4 \
        -A log_dir=logs/sweep [-A suites=css,medpic] [-A tasks=all] [-A limit=20]

What runs: each suite's main task (`css`, `sensitivity`, `medpic`, `workflow`; `tasks=all` adds
every registered task, e.g. the CSS families and the agent setting) for each model. Tasks that a
judge grades (the CSS tasks) run once per (model, judge) pair with the judge bound to the `judge`
role; when that judge is the model under test, the first other judge in the list is bound to
`judge_alt`, which the CSS scorers use instead (the self-judging fallback, as in the paper's
setup where claude-opus-4-7 judges gpt-5.4 itself). With no other judge the sample is judged by
the model itself and every score says so (`self_judged`). Tasks without a judge run once per model.

Resumable: the flow is Inspect's `eval_set` over a fixed log directory, so rerunning the same
command skips the (task, model, judges, version) combinations whose logs are complete and retries
the failed samples of the rest; `flow run --resume` picks up the last run's directory. A task's
`version=` is its suite's Register version, part of each task's identity, so a re-registered
catalog reruns exactly the suites it affects. `flow config` prints the resolved matrix without
running anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import Model
from inspect_flow import FlowOptions, FlowSpec, FlowTask

from clinical_cf.suites import SUITES

# The tasks whose scorer reads the `judge` role (and `judge_alt` for the self-judging fallback).
# MedPIC's rationale judge is off by default; `-A medpic_rationale_judge=true` turns it on.
JUDGED_SUITES = tuple(name for name, suite in SUITES.items() if suite.judged)

ModelRef = str | Model


def _names(value: str | Sequence[Any] | None) -> list[Any]:
    """A comma-separated `-A` argument, or a list from Python."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return list(value)


def _same(a: ModelRef, b: ModelRef) -> bool:
    """The same model by name (`provider/model`), whether given as a name or a `Model`."""
    return str(a) == str(b)


def judge_roles(model: ModelRef, judge: ModelRef, judges: Sequence[ModelRef]) -> dict[str, ModelRef]:
    """`judge`, plus `judge_alt` from the other judges when `judge` is the model under test."""
    roles: dict[str, ModelRef] = {"judge": judge}
    if _same(judge, model):
        alternative = next((j for j in judges if not _same(j, model)), None)
        if alternative is not None:
            roles["judge_alt"] = alternative
    return roles


def sweep_tasks(
    models: Sequence[ModelRef],
    judges: Sequence[ModelRef],
    suites: Sequence[str] | None = None,
    all_tasks: bool = False,
    task_args: dict[str, dict[str, Any]] | None = None,
    medpic_rationale_judge: bool = False,
) -> list[FlowTask]:
    """The (task, model, judge roles) matrix as Flow tasks."""
    if not models:
        raise ValueError("the sweep needs at least one model (-A models=provider/model,...)")
    unknown = sorted(set(suites or ()) - set(SUITES))
    if unknown:
        raise ValueError(f"unknown suites {unknown}; choose from {', '.join(SUITES)}")
    task_args = task_args or {}
    tasks: list[FlowTask] = []
    for suite_name in suites or list(SUITES):
        suite = SUITES[suite_name]
        judged = suite_name in JUDGED_SUITES or (suite_name == "medpic" and medpic_rationale_judge)
        for task_name in suite.tasks if all_tasks else (suite.main_task,):
            args = dict(task_args.get(task_name, {}))
            if suite_name == "medpic" and medpic_rationale_judge:
                args["rationale_judge"] = True
            for model in models:
                pairs = [judge_roles(model, judge, judges) for judge in judges] if judged and judges else [None]
                for roles in pairs:
                    tasks.append(
                        FlowTask(
                            name=f"clinical_cf/{task_name}",
                            args=args,
                            model=model,
                            model_roles=roles,
                            flow_metadata={"suite": suite_name},
                        )
                    )
    return tasks


def sweep_spec(
    models: Sequence[ModelRef],
    judges: Sequence[ModelRef] = (),
    log_dir: str = "logs/sweep",
    suites: Sequence[str] | None = None,
    all_tasks: bool = False,
    limit: int | None = None,
    task_args: dict[str, dict[str, Any]] | None = None,
    medpic_rationale_judge: bool = False,
    store: str | None = "auto",
    options: dict[str, Any] | None = None,
) -> FlowSpec:
    """The whole sweep as a `FlowSpec` (Python callers and tests pass `Model` objects; the CLI passes names)."""
    return FlowSpec(
        log_dir=log_dir,
        # One fixed directory: rerunning resumes instead of starting a new sweep.
        log_dir_create_unique=False,
        execution_type="inproc",
        store=store,
        options=FlowOptions(limit=limit, log_dir_allow_dirty=True, **(options or {})),
        tasks=sweep_tasks(models, judges, suites, all_tasks, task_args, medpic_rationale_judge),
    )


def clinical_cf_sweep(
    models: str,
    judges: str = "",
    log_dir: str = "logs/sweep",
    suites: str = "",
    tasks: str = "main",
    limit: str = "",
    medpic_rationale_judge: str = "false",
) -> FlowSpec:
    """`flow run` entry point; every `-A key=value` arrives as a string."""
    if tasks not in ("main", "all"):
        raise ValueError(f"tasks must be 'main' or 'all', got {tasks!r}")
    return sweep_spec(
        models=_names(models),
        judges=_names(judges),
        # Relative to where `flow run` is started, like Inspect's --log-dir (Flow would take it relative to this file).
        log_dir=log_dir if "://" in log_dir else str(Path(log_dir).resolve()),
        suites=_names(suites) or None,
        all_tasks=tasks == "all",
        limit=int(limit) if limit else None,
        medpic_rationale_judge=medpic_rationale_judge.lower() in ("1", "true", "yes"),
    )
