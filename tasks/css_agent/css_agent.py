"""CSS in the agent setting: a ReAct agent reads the chart through `read_chart_section`.

    inspect eval tasks/css_agent --model-role judge=<model> [-T families=D]

Every argument is `build_css_task`'s (clinical_cf/tasks/css_task.py), described in docs/arguments.md.
"""

from inspect_ai import Task, task

from clinical_cf.catalog.css.expand import MutationMode, ResidueMode
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.css_task import CMSMatching, Controls, Families, MaxMessages, SectionCap, Split, Tuples, Unreviewed, build_css_task


@task
@checked_paths  # `-T cases=` / `=null` refused, a path with commas rejoined
def css_agent(
    families: Families = "ABCDE",
    cases: UserFile = None,
    catalog: UserFile = None,
    mutation_mode: MutationMode = "auto",
    split: Split = "all",
    controls: Controls = "per_case",
    allow_unregistered: bool = False,
    cms_matching: CMSMatching = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    tuples: Tuples = None,
    section_cap_bytes: SectionCap = 8192,
    max_messages: MaxMessages = 40,
    residue: ResidueMode = "drop",
    counterfactuals: UserFile = None,
    unreviewed: Unreviewed = "refuse",
    reader: RoleName = "reader",
) -> Task:
    """The same interventions for a tool-using ReAct agent (`-T families=D`; CSS paper section 4.6)."""
    return build_css_task(setting="agent", **locals())
