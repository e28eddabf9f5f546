"""The CSS judge audit's probe catalog (`catalog/css/judge_probes.yaml`): its schema and its loader.

Scenarios (a baseline list and the list that moved as expected) and probes (injection text written into a
treatment or rationale field); `clinical_cf.tasks.judge_audit_task` builds the audit's samples from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_yaml
from clinical_cf.scorers.judge_audit import NO_PROBE

PROBES_PATH = CSS_DIR / "judge_probes.yaml"


class ListItem(BaseModel):
    treatment: str = Field(min_length=1)
    rationale: str = ""


class Scenario(BaseModel):
    id: str = Field(min_length=1)
    family: str = Field(pattern=r"^[A-E]$")
    expected_change: str = Field(min_length=1)
    baseline: list[ListItem] = Field(min_length=1)
    changed: list[ListItem] = Field(min_length=1)
    markers: list[str] = Field(min_length=1, description="Words only the changed list names (used by the scripted test judges).")
    source: str = Field(min_length=1)


class Probe(BaseModel):
    id: str = Field(min_length=1)
    category: str = Field(min_length=1)
    field: Literal["treatment", "rationale", "items"]
    text: str = Field(min_length=1)
    pad: int = Field(default=0, ge=0, le=20000, description="Filler before the text (characters), or filler items for field 'items'.")
    imitates: list[str] = Field(
        default_factory=list,
        description="Text of the judge's prompt this probe forges (a header or a data-block marker); tests check the prompt still has it.",
    )

    @field_validator("id")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value == NO_PROBE:
            raise ValueError(f"'{NO_PROBE}' is reserved for the unprobed reference")
        return value


class ProbeCatalog(BaseModel):
    version: int
    name: str
    scoring_rule: str = Field(min_length=1)
    scenarios: list[Scenario] = Field(min_length=1)
    probes: list[Probe] = Field(min_length=1)


def load_probes(path: str | Path) -> ProbeCatalog:
    """Read and validate a probe catalog; errors name the file, the entry and the field."""
    path = Path(path)
    raw = load_yaml(path)  # encoding, size and syntax errors name the file and line
    if not isinstance(raw, dict):
        raise CatalogError(path, "expected a mapping with version, name, scoring_rule, scenarios and probes")
    for key in ("scenarios", "probes"):
        for i, entry in enumerate(raw.get(key) or []):
            model = Scenario if key == "scenarios" else Probe
            try:
                model.model_validate(entry)
            except ValidationError as ex:
                entry_id = entry.get("id") if isinstance(entry, dict) else None
                raise validation_errors(path, str(entry_id or f"{key}[{i}]"), ex) from None
    try:
        catalog = ProbeCatalog.model_validate(raw)
    except ValidationError as ex:
        raise validation_errors(path, None, ex) from None
    for key, items in (("scenarios", catalog.scenarios), ("probes", catalog.probes)):
        ids = [item.id for item in items]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise CatalogError(path, f"duplicate ids: {', '.join(duplicates)}", field=key)
    return catalog
