"""CSS in the agent setting: a ReAct agent reads the chart through `read_chart_section`.

    inspect eval tasks/css_agent --model-role judge=<model> [-T families=D]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, setting="agent")
def css_agent(**args: Any) -> Task:
    """The same interventions for a tool-using ReAct agent (`-T families=D`; CSS paper section 4.6)."""
