"""Observation perturbations for the CSS chart agent: noise, contradiction, tool failure.

    inspect eval tasks/css_agent_observation --model-role judge=<model> [-T kinds=tool_failure]

Arguments are those of `clinical_cf.tasks.css_observation_task.build_css_observation_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_observation_task import build_css_observation_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_agent_observation(
    kinds: str | list[str] = "noise,contradiction,tool_failure",
    cases: str | None = None,
    observations: str | None = None,
    split: Literal["dev", "test", "all"] = "all",
    samples: int | None = 100,
    allow_unregistered: bool = False,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    baseline_cache: bool = True,
    json_schema: bool = True,
) -> Task:
    """How the chart agent handles a noisy, contradictory or failing tool return (seed 001 section 3.3)."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_css_observation_task(**locals())
