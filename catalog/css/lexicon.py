"""Treatment lexicon: find the drugs, regimens and actions a piece of text names.

Used by CMS's deterministic matching. Overlapping aliases are resolved longest-first, so
"trastuzumab emtansine" is T-DM1 and not also trastuzumab. A regimen acronym names its
components ("FOLFOX" -> fluorouracil, leucovorin, oxaliplatin) and naming every component
names the regimen; a drug also names its classes ("letrozole" -> aromatase inhibitor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_yaml

LEXICON_PATH = Path(__file__).parent / "lexicon.yaml"


class ConceptSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    aliases: list[str] = Field(min_length=1)
    components: list[str] = Field(default_factory=list)
    classes: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Lexicon:
    concepts: dict[str, ConceptSpec]
    patterns: list[tuple[re.Pattern[str], str]] = field(repr=False)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, concept) matches in reading order, longest alias first."""
        found: list[tuple[int, int, str]] = []
        for pattern, concept in self.patterns:
            found.extend((m.start(), m.end(), concept) for m in pattern.finditer(text))
        # Longest match wins; a shorter alias inside a chosen span does not count.
        found.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
        chosen: list[tuple[int, int, str]] = []
        for span in found:
            if not any(span[0] < c[1] and span[1] > c[0] for c in chosen):
                chosen.append(span)
        return sorted(chosen)

    def find(self, text: str) -> set[str]:
        """Concepts named in `text`, after regimen and class closure."""
        return self.close({concept for _, _, concept in self.spans(_normalise(text))})

    def close(self, concepts: set[str]) -> set[str]:
        """Add regimen components, regimens whose components are all present, and classes."""
        out = set(concepts)
        for cid in list(out):
            out.update(self.concepts[cid].components)
        for cid, spec in self.concepts.items():
            if spec.components and set(spec.components) <= out:
                out.add(cid)
        for cid in list(out):
            out.update(self.concepts[cid].classes)
        return out

    def slots(self, treatment: str) -> list[set[str]]:
        """What a recommendation must name to cover a consensus treatment.

        Each slot must be covered by one of its concepts. Concepts joined by "/", "or" or
        a parenthesis are alternatives ("palbociclib/ribociclib", "CDK4/6 inhibitor
        (palbociclib or ribociclib)"); "+", "and", "with" join separate slots.
        """
        text = _normalise(treatment)
        slots: list[set[str]] = []
        previous_end: int | None = None
        for start, end, concept in self.spans(text):
            between = text[previous_end:start] if previous_end is not None else None
            if between is not None and _ALTERNATIVE.fullmatch(between):
                slots[-1].add(concept)
            else:
                slots.append({concept})
            previous_end = end
        return slots

    def covers(self, recommendation: str, treatment_slots: list[set[str]]) -> bool:
        named = self.find(recommendation)
        return bool(treatment_slots) and all(slot & named for slot in treatment_slots)


_ALTERNATIVE = re.compile(r"\s*(?:/|,?\s*or|\()\s*(?:e\.g\.,?\s*)?", re.IGNORECASE)


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def load_lexicon(path: str | Path = LEXICON_PATH) -> Lexicon:
    path = Path(path)
    raw = load_yaml(path)  # bounded: size, depth, aliases, duplicate keys, non-finite numbers
    concepts: dict[str, ConceptSpec] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    for cid, spec in (raw or {}).get("concepts", {}).items():
        try:
            concepts[cid] = ConceptSpec.model_validate(spec)
        except ValidationError as ex:
            raise validation_errors(path, cid, ex) from None
        for alias in concepts[cid].aliases:
            try:
                patterns.append((re.compile(rf"(?<![\w-])(?:{alias})(?![\w-])", re.IGNORECASE), cid))
            except re.error as ex:
                raise CatalogError(path, f"alias {alias!r} is not a valid regex: {ex}", entry=cid, field="aliases") from None
    for cid, spec in concepts.items():
        for ref in [*spec.components, *spec.classes]:
            if ref not in concepts:
                raise CatalogError(path, f"refers to unknown concept '{ref}'", entry=cid, field="components/classes")
    return Lexicon(concepts, patterns)


@lru_cache(maxsize=4)
def default_lexicon() -> Lexicon:
    return load_lexicon(LEXICON_PATH)
