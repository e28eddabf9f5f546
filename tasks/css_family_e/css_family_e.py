"""CSS Family E: stage perturbation (new distant metastases).

    inspect eval tasks/css_family_e --model-role judge=<model> [--model-role judge_alt=<model>]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.css_task import build_css_task


@task
def css_family_e(
    cases: str | None = None,
    catalog: str | None = None,
    mutation_mode: Literal["regex", "structured"] = "regex",
    split: Literal["dev", "test", "all"] = "all",
    controls: Literal["per_case", "all", "none"] = "per_case",
    allow_unregistered: bool = False,
    scale: float = 1.0,
    cms_matching: Literal["lexicon", "judge"] = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    residue: Literal["drop", "keep"] = "drop",
    counterfactuals: str | None = None,
    reader: str = "reader",
    summary_max_tokens: int | None = None,
    recommend_max_tokens: int | None = None,
) -> Task:
    """CSS on Family E (stage perturbation (new distant metastases)) with paired negative controls."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_css_task(families="E", **locals())
