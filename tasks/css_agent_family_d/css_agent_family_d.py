"""The CSS paper's agent experiment: Family D (surgery status), a fixed 100-tuple subset.

    inspect eval tasks/css_agent_family_d --model-role judge=<model>

The subset is the 100 Family D tuples whose ids have the smallest SHA-256 (`fixed_subset` in
`clinical_cf.tasks.css_task`): the same tuples on every machine and run. No negative controls
by default, as in the paper's experiment (`-T controls=per_case` adds them).
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.css_task import build_css_task


@task
def css_agent_family_d(
    tuples: int | None = 100,
    cases: str | None = None,
    catalog: str | None = None,
    mutation_mode: Literal["regex", "structured"] = "regex",
    split: Literal["dev", "test", "all"] = "all",
    controls: Literal["per_case", "all", "none"] = "none",
    allow_unregistered: bool = False,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    cms_matching: Literal["lexicon", "judge"] = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    residue: Literal["drop", "keep"] = "drop",
    counterfactuals: str | None = None,
    reader: str = "reader",
) -> Task:
    """Agent CSS on the paper's 100-tuple Family D subset."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_css_task(families="D", setting="agent", **locals())
