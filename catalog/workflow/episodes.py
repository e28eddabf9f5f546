"""Workflow episodes: the schema of one scored episode and its loader.

An episode is one seed, in one surface parameterization, under one variant. `turns` are the
user turns in order (the `late_risk` variant has a second turn, delivered after the request;
the solver generates after every turn and scores the last decision). `pair_key` is
`<seed_id>.p<parameterization>`: episodes sharing it differ only in the manipulated axis, so
clean-vs-perturbed comparisons are exact. `manipulated` is the text the variant deleted,
surfaced, appended or delivered late (None for clean).

User episode files (JSONL, one episode a line) use the same schema; errors name the file, the
episode id and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from clinical_cf.catalog.workflow import EPISODES_PATH  # noqa: F401  (re-exported)
from clinical_cf.catalog.workflow.seeds import Action, TaskClass, Variant
from clinical_cf.core.loading import load_jsonl


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user"] = "user"
    content: str = Field(min_length=1)


class Episode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    seed_id: str = Field(min_length=1)
    task_class: TaskClass
    parameterization: int = Field(ge=1)
    variant: Variant
    split: Literal["dev", "test"]
    pair_key: str = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1)
    reference_action: Action
    acceptable_actions: list[Action] = Field(min_length=1)
    rationale: str = Field(min_length=1)
    manipulated: str | None = Field(default=None, validate_default=True)

    # Field validators (not a model validator) so an error names the field it is about.
    @field_validator("acceptable_actions")
    @classmethod
    def _has_reference(cls, value: list[str], info: ValidationInfo) -> list[str]:
        reference = info.data.get("reference_action")
        if reference is not None and reference not in value:
            raise ValueError(f"must contain the reference_action {reference}")
        if len(set(value)) != len(value):
            raise ValueError("repeats an action")
        return value

    @field_validator("manipulated")
    @classmethod
    def _says_what_changed(cls, value: str | None, info: ValidationInfo) -> str | None:
        variant = info.data.get("variant")
        if variant not in (None, "clean") and not value:
            raise ValueError(f"a {variant} episode must say what its variant changed")
        return value

    @property
    def escalate_required(self) -> bool:
        return self.reference_action == "ESCALATE"

    def text(self) -> str:
        """All user turns, in order, separated by blank lines."""
        return "\n\n".join(t.content for t in self.turns)


def load_episodes(path: str | Path) -> list[Episode]:
    """Validate an episodes JSONL file record by record; duplicate ids are refused."""
    return load_jsonl(path, Episode, "id")
