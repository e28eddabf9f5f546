"""CSS Family C: biomarker strip, HER2/ER/PR, NSCLC drivers and PD-L1, RAS/BRAF/MSI results deleted.

    inspect eval tasks/css_family_c --model-role judge=<model> [--model-role judge_alt=<model>]
"""

from typing import Any

from inspect_ai import Task, task

from clinical_cf.tasks.build import variant
from clinical_cf.tasks.css_task import build_css_task


@task
@variant(build_css_task, families="C", setting="single_shot")
def css_family_c(**args: Any) -> Task:
    """Biomarker strip: HER2/ER/PR, NSCLC drivers and PD-L1, RAS/BRAF/MSI deleted.

    Paired negative controls (family N) are scored but kept out of CSS.
    """
