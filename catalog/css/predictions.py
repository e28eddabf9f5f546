"""Pre-registered predictions for confirmatory CSS reports (`clinical-cf report --confirmatory`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_cf.catalog.errors import CatalogError, validation_errors

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
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as ex:
        raise CatalogError(path, f"cannot read: {ex}") from None
    entries = (raw or {}).get("predictions")
    if not isinstance(entries, list) or not entries:
        raise CatalogError(path, "'predictions' must be a non-empty list", field="predictions")
    out = []
    for index, entry in enumerate(entries):
        entry_id = str(entry.get("id")) if isinstance(entry, dict) and entry.get("id") else f"#{index}"
        try:
            out.append(Prediction.model_validate(entry))
        except ValidationError as ex:
            raise validation_errors(path, entry_id, ex) from None
    return out
