"""The `css_agent_family_d` task, exported so `inspect eval tasks/css_agent_family_d` and the package resolve it by name."""

from clinical_cf.tasks.css_agent_family_d.css_agent_family_d import css_agent_family_d

__all__ = ["css_agent_family_d"]
