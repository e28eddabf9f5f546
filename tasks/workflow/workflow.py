"""Workflow escalation suite: four actions under missing, stale, conflicting and late information.

    inspect eval tasks/workflow [-T condition=uncertainty] [-T split=test] [-T variant=clean,conflict] [-T cost_ratio=10]
"""

from inspect_ai import Task, task

from clinical_cf.solvers.workflow import Condition
from clinical_cf.suites import WORKFLOW
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.build import TaskSpec, build_task
from clinical_cf.tasks.workflow_task import CostRatio, Split, TaskClasses, Variants, one_source, parts, workflow_inputs


@task
@checked_paths  # `-T episodes=` / `=null` refused, a path with commas rejoined
def workflow(
    episodes: UserFile = None,
    seeds: UserFile = None,
    allow_unregistered: bool = False,
    task_class: TaskClasses = "all",
    variant: Variants = "all",
    split: Split = "all",
    condition: Condition = "neutral",
    cost_ratio: CostRatio = 5.0,
    json_schema: bool = True,
    reader: RoleName = "reader",
) -> Task:
    """The action (answer, ask, abstain, escalate) under missing, stale, conflicting and late information (seed 004).

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
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
    """
    return build_task(SPEC, **locals())


SPEC = TaskSpec(
    suite=WORKFLOW, arguments=workflow, before=one_source, inputs=lambda args: workflow_inputs(args.episodes, args.seeds), parts=parts
)
