"""CSS judge audit: how often do injection probes in a model's lists move the judge's verdict?

    inspect eval clinical_cf/css_judge_audit --model <any> --model-role judge=<judge to audit>
"""

from inspect_ai import Task, task

from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import UserFile, checked_paths
from clinical_cf.tasks.build import TaskInputs, TaskSpec, build_task
from clinical_cf.tasks.judge_audit_task import PROBES_PATH, Conditions, parts


@task
@checked_paths  # `-T probes=` / `=null` refused, a path with commas rejoined
def css_judge_audit(
    probes: UserFile = None,
    conditions: Conditions = "identical,changed",
    allow_unregistered: bool = False,
    json_schema: bool = True,
) -> Task:
    """The judge role itself: how often injection probes in a model's lists move its CSS verdict
    (see [Auditing the judge](docs/replies-and-judges.md#auditing-the-judge)).

    Args:
        probes: Probe catalog YAML (default: the bundled pre-registered catalog).
        conditions: "identical", "changed" or both (comma-separated).
        allow_unregistered: Run even if the probe catalog does not match its lock.
        json_schema: Ask the judge for structured output (`response_schema`).
    """
    return build_task(SPEC, **locals())


# No model under test is asked anything, so the audit has no setting (single-shot or agent) to log.
SPEC = TaskSpec(
    suite=CSS, arguments=css_judge_audit, inputs=lambda args: TaskInputs(catalogs=[args.probes or PROBES_PATH]), parts=parts,
    needs_model=False,
)
