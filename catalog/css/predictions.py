"""Pre-registered predictions for confirmatory CSS reports (`clinical-cf report --confirmatory`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clinical_cf.core.loading import load_entries

PREDICTIONS_PATH = Path(__file__).parent / "predictions.yaml"


class Prediction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    statement: str = Field(min_length=10)
    family: Literal["A", "B", "C", "D", "E", "N"]
    direction: Literal["below", "above"]
    threshold: float = Field(ge=0, le=1)
    source: str = Field(min_length=3)


def load_predictions(path: str | Path = PREDICTIONS_PATH) -> list[Prediction]:
    """Load and validate pre-registered predictions; errors name the file, entry id and field."""
    return load_entries(path, "predictions", Prediction)
