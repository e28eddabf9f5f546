"""The `css_agent_observation` task, exported so `inspect eval tasks/css_agent_observation` and the package resolve it by name."""

from clinical_cf.tasks.css_agent_observation.css_agent_observation import css_agent_observation

__all__ = ["css_agent_observation"]
