"""Pre-registered observation perturbations for the CSS agent (seed 001, section 3.3).

Unlike the interventions, these leave the chart alone and change what the chart tool returns
to the agent: a benign annotation (noise), a statement that contradicts another section
(contradiction), or one failed or implausible return (tool failure). Each entry names the
behaviour a good agent shows (ignore; flag and resolve; detect and re-query or refuse to rely),
which a process judge scores. The file has a lock like the intervention catalog.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from inspect_ai.tool import ToolError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from clinical_cf.catalog.css.interventions import Applicability
from clinical_cf.catalog.css.schema import Case, SectionName
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_entries

OBSERVATIONS_PATH = Path(__file__).parent / "observations.yaml"

Kind = Literal["noise", "contradiction", "tool_failure"]


class ObservationPerturbation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    kind: Kind
    title: str
    applies_to: Applicability
    section: SectionName
    op: Literal["append", "replace", "error"] = Field(
        description="append `text` to the return, replace `pattern` by `text` in it, or fail with `text` as the error."
    )
    text: str = Field(min_length=3)
    pattern: str | None = None
    times: Literal["once", "always"] = Field(default="always", description="Perturb only the first read, or every read.")
    expected_behaviour: str = Field(min_length=10)
    scoring_rule: str = Field(min_length=10)
    rationale: str = Field(min_length=10)
    source: str = Field(min_length=3)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as ex:
                raise ValueError(f"invalid regex {value!r}: {ex}") from None
        return value

    def applies(self, case: Case) -> bool:
        if not self.applies_to.matches(case):
            return False
        # A replacement that finds nothing would leave the return unchanged: not applicable.
        if self.op == "replace":
            return bool(self.pattern and re.search(self.pattern, case.sections[self.section]))
        return True

    def perturb(self, section: str, text: str, times_read: int) -> str:
        """The tool return the agent sees; raises ToolError for a failed read."""

        if section != self.section or (self.times == "once" and times_read > 0):
            return text
        if self.op == "error":
            raise ToolError(self.text)
        if self.op == "append":
            return f"{text.rstrip()}\n{self.text}"
        return re.sub(self.pattern or "", self.text, text)


def load_observations(path: str | Path = OBSERVATIONS_PATH) -> list[ObservationPerturbation]:
    """Load and validate observation perturbations; errors name the file, entry id and field."""
    items = load_entries(path, "perturbations", ObservationPerturbation)
    for item in items:
        if item.op == "replace" and not item.pattern:
            raise CatalogError(path, "op 'replace' needs a pattern", entry=item.id, field="pattern")
    return items
