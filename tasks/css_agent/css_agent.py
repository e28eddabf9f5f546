"""CSS in the agent setting: a ReAct agent reads the chart through `read_chart_section`.

    inspect eval tasks/css_agent --model-role judge=<model> [-T families=D]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`, in the agent setting.
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import agent_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@agent_css()
def css_agent() -> Task:
    """Causal Sensitivity Score of a tool-using ReAct agent (CSS paper section 4.6)."""
