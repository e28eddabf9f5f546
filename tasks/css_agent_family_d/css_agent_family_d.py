"""The CSS paper's agent experiment: Family D (surgery status), a fixed 100-tuple subset.

    inspect eval tasks/css_agent_family_d --model-role judge=<model>

The subset is the 100 Family D tuples whose ids have the smallest SHA-256 (`fixed_subset` in
`clinical_cf.tasks.css_task`): the same tuples on every machine and run. No negative controls
by default, as in the paper's experiment (`-T controls=per_case` adds them).
"""

from inspect_ai import Task, task

from clinical_cf.tasks.arguments import checked_paths
from clinical_cf.tasks.css_task import agent_css


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
@agent_css(families="D", defaults={"tuples": 100, "controls": "none"})
def css_agent_family_d() -> Task:
    """Agent CSS on the paper's 100-tuple Family D subset."""
