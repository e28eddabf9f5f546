"""Observation perturbations for the CSS chart agent: noise, contradiction, tool failure (seed 001 section 3.3).

    inspect eval tasks/css_agent_observation --model-role judge=<model> [-T kinds=tool_failure]
"""

from inspect_ai import Task, task

from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import RoleName, SelfJudging, UserFile, checked_paths
from clinical_cf.tasks.build import TaskSpec, build_task
from clinical_cf.tasks.css_observation_task import Kinds, Samples, inputs, parts
from clinical_cf.tasks.css_task import MaxMessages, SectionCap, Split


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_agent_observation(
    kinds: Kinds = "noise,contradiction,tool_failure",
    cases: UserFile = None,
    observations: UserFile = None,
    split: Split = "all",
    samples: Samples = 100,
    allow_unregistered: bool = False,
    section_cap_bytes: SectionCap = 8192,
    max_messages: MaxMessages = 40,
    baseline_cache: bool = True,
    json_schema: bool = True,
    reader: RoleName = "reader",
    self_judging: SelfJudging = "refuse",
) -> Task:
    """Noisy, contradictory or failing chart-tool returns (seed 001, section 3.3).

    Args:
        kinds: Comma-separated perturbation kinds: noise, contradiction, tool_failure.
        cases: JSONL file of cases (default: the bundled cohort).
        observations: Perturbation catalog YAML (default: catalog/css/observations.yaml; needs its lock).
        split: "dev", "test" or "all" cases.
        samples: A fixed subset of this many (case, perturbation) pairs, chosen by the SHA-256
            of their ids (None for all).
        allow_unregistered: Run even if the perturbation catalog does not match its lock.
        section_cap_bytes: Cap on each tool return.
        max_messages: Message limit per agent run.
        baseline_cache: Share the unperturbed run across a case's samples.
        json_schema: Ask the judge for structured output.
        reader: Model role that reads a reply the schema JSON or closed answer line does not state
            (default: the `reader` role, else the judge role, else off; never the model under test), each
            reading verified against the reply's own words; "none" turns the reader off.
        self_judging: With no judge role bound (`--model-role judge=...` or `grader=...`): "refuse" (default) does not
            start; "allow" lets the model under test judge its own process, and every score records `self_judged`.
    """
    return build_task(SPEC, **locals())


SPEC = TaskSpec(
    suite=CSS, arguments=css_agent_observation, inputs=inputs, parts=parts, setting=lambda args: "agent_observation",
    judged=lambda args: True,
)
