"""Inspect entry point: registers every public task so `inspect eval clinical_cf/<task>` works.

One import per task the suite specs declare (`Suite.tasks`): spelled out, not derived from the specs,
because the Register's linter (inspect-evals-lint IEFS004) reads this file statically.
`tests/test_specs.py` checks that the two agree.
"""

# ruff: noqa: F401
from clinical_cf.providers.gguf import GGUFModelAPI
from clinical_cf.tasks.css.css import css
from clinical_cf.tasks.css_agent.css_agent import css_agent
from clinical_cf.tasks.css_agent_family_d.css_agent_family_d import css_agent_family_d
from clinical_cf.tasks.css_agent_observation.css_agent_observation import css_agent_observation
from clinical_cf.tasks.css_editor_audit.css_editor_audit import css_editor_audit
from clinical_cf.tasks.css_family_a.css_family_a import css_family_a
from clinical_cf.tasks.css_family_b.css_family_b import css_family_b
from clinical_cf.tasks.css_family_c.css_family_c import css_family_c
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.css_family_e.css_family_e import css_family_e
from clinical_cf.tasks.css_judge_audit.css_judge_audit import css_judge_audit
from clinical_cf.tasks.css_reader_audit.css_reader_audit import css_reader_audit
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.medpic_cf.medpic_cf import medpic_cf
from clinical_cf.tasks.medpic_gf.medpic_gf import medpic_gf
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from clinical_cf.tasks.workflow.workflow import workflow
