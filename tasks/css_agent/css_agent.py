"""CSS in the agent setting: a ReAct agent reads the chart through `read_chart_section`.

    inspect eval tasks/css_agent --model-role judge=<model> [-T families=D]

Arguments are those of `clinical_cf.tasks.css_task.build_css_task`.
"""

from typing import Literal

from inspect_ai import Task, task

from clinical_cf.tasks.css_task import build_css_task


@task
def css_agent(
    families: str = "ABCDE",
    cases: str | None = None,
    catalog: str | None = None,
    mutation_mode: Literal["regex", "structured"] = "regex",
    split: Literal["dev", "test", "all"] = "all",
    controls: Literal["per_case", "all", "none"] = "per_case",
    allow_unregistered: bool = False,
    tuples: int | None = None,
    section_cap_bytes: int = 8192,
    max_messages: int = 40,
    cms_matching: Literal["lexicon", "judge"] = "lexicon",
    baseline_cache: bool = True,
    json_schema: bool = True,
    residue: Literal["drop", "keep"] = "drop",
    counterfactuals: str | None = None,
    reader: str = "reader",
) -> Task:
    """Causal Sensitivity Score of a tool-using ReAct agent (CSS paper section 4.6)."""
    # Every parameter is passed on as is; the signature above is what `-T` and `inspect list` show.
    return build_css_task(setting="agent", **locals())
