"""Observation perturbations for the CSS chart agent: noise, contradiction, tool failure.

    inspect eval tasks/css_agent_observation --model-role judge=<model> [-T kinds=tool_failure]

Arguments are those of `clinical_cf.tasks.css_observation_task.build_css_observation_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_observation_task import build_css_observation_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@variant(build_css_observation_task)
def css_agent_observation() -> Task:
    """How the chart agent handles a noisy, contradictory or failing tool return (seed 001 section 3.3)."""
