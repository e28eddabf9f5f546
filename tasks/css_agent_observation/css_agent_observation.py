"""Observation perturbations for the CSS chart agent: noise, contradiction, tool failure.

    inspect eval tasks/css_agent_observation --model-role judge=<model> [-T kinds=tool_failure]

Arguments are those of `clinical_cf.tasks.css_observation_task.build_css_observation_task`.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.css_observation_task import build_css_observation_task


@task
def css_agent_observation(
    kinds: str = "noise,contradiction,tool_failure",
    cases: str | None = None,
    observations: str | None = None,
    split: str = "all",
    samples: int | None = 100,
    allow_unregistered: bool = False,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    baseline_cache: bool = True,
    json_schema: bool = True,
) -> Task:
    """How the chart agent handles a noisy, contradictory or failing tool return (seed 001 section 3.3)."""
    return build_css_observation_task(
        kinds=kinds,
        cases=cases,
        observations=observations,
        split=split,  # type: ignore[arg-type]
        samples=samples,
        allow_unregistered=allow_unregistered,
        section_cap_bytes=section_cap_bytes,
        max_messages=max_messages,
        baseline_cache=baseline_cache,
        json_schema=json_schema,
    )
