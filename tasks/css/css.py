"""CSS over all intervention families (A-E) with negative controls; `-T families=AB` to choose.

    inspect eval tasks/css --model-role judge=<model> [--model-role judge_alt=<model>]

Every argument is `build_css_task`'s (clinical_cf/tasks/css_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.catalog.css.expand import MutationMode, ResidueMode
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.css_task import CMSMatching, Controls, Families, OutputTokens, Scale, Split, Unreviewed, build_css_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css(
    families: Families = "ABCDE",
    cases: UserFile = None,
    catalog: UserFile = None,
    mutation_mode: MutationMode = "auto",
    split: Split = "all",
    controls: Controls = "per_case",
    allow_unregistered: bool = False,
    scale: Scale = 1.0,
    cms_matching: CMSMatching = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    residue: ResidueMode = "drop",
    counterfactuals: UserFile = None,
    unreviewed: Unreviewed = "refuse",
    reader: RoleName = "reader",
    summary_max_tokens: OutputTokens = None,
    recommend_max_tokens: OutputTokens = None,
) -> Task:
    """All families A-E (`-T families=AB` to choose).

    Paired negative controls (family N) are scored but kept out of CSS.
    """
    return build_css_task(setting="single_shot", **locals())
