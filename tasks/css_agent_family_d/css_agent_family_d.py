"""The CSS paper's agent experiment: Family D (surgery status), a fixed 100-tuple subset.

    inspect eval tasks/css_agent_family_d --model-role judge=<model>

The subset is the 100 Family D tuples whose ids have the smallest SHA-256 (`fixed_subset` in
`clinical_cf.tasks.css_task`): the same tuples on every machine and run. No negative controls
by default, as in the paper's experiment (`-T controls=per_case` adds them).
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, defaults={"tuples": 100, "controls": "none"}, families="D", setting="agent")
def css_agent_family_d(**args: Any) -> Task:
    """The paper's agent experiment: a fixed 100-tuple Family D subset."""
