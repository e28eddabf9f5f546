"""The CSS paper's agent experiment: Family D (surgery status), a fixed 100-tuple subset.

    inspect eval tasks/css_agent_family_d --model-role judge=<model>

The subset is the 100 Family D tuples whose ids have the smallest SHA-256 (`fixed_subset` in
`clinical_cf.tasks.css_task`): the same tuples on every machine and run. No negative controls
by default, as in the paper's experiment (`-T controls=per_case` adds them).

Every argument is `build_css_task`'s (clinical_cf/tasks/css_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.catalog.css.expand import MutationMode, ResidueMode
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.css_task import CMSMatching, Controls, MaxMessages, SectionCap, Split, Tuples, Unreviewed, build_css_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_agent_family_d(
    cases: UserFile = None,
    catalog: UserFile = None,
    mutation_mode: MutationMode = "auto",
    split: Split = "all",
    controls: Controls = "none",
    allow_unregistered: bool = False,
    cms_matching: CMSMatching = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    tuples: Tuples = 100,
    section_cap_bytes: SectionCap = 8192,
    max_messages: MaxMessages = 40,
    residue: ResidueMode = "drop",
    counterfactuals: UserFile = None,
    unreviewed: Unreviewed = "refuse",
    reader: RoleName = "reader",
) -> Task:
    """The paper's agent experiment: a fixed 100-tuple Family D subset."""
    return build_css_task(families="D", setting="agent", **locals())
