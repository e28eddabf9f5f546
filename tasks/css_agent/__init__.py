"""The `css_agent` task, exported so `inspect eval tasks/css_agent` and the package resolve it by name."""

from clinical_cf.tasks.css_agent.css_agent import css_agent

__all__ = ["css_agent"]
