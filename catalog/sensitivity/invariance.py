"""Invariance perturbations of diagnostic vignettes (issue 47): who the patient is and how the vignette is written.

The vignette is one paragraph (`Vignette.render`); each change rewrites its text so that one attribute differs and
nothing diagnostic does: a stated race, insurance, preferred language, occupation or name (added as the sentence a
clinician would write), the other sex where neither the candidates nor the pre-test probabilities depend on it (its
scope is the perturbation's `requires.presentations`), or a style (typos at a stated rate, telegraphic register,
hedged history, capitals). The style changes are the CSS ones (`catalog.css.invariance`), applied to the paragraph.
Sources: MedPerturb (Sridhar et al. 2025); The Medium is the Message (Gourabathina et al., FAccT 2025).
"""

from __future__ import annotations

import re

from clinical_cf.catalog.css.invariance import TELEGRAPHIC, seeded, typo_eligible, upper_keeping_values
from clinical_cf.catalog.sensitivity.vignettes import Vignette

_OPENING = re.compile(r"^A (\d+)-year-old (woman|man) presents")
_ARTICLE = re.compile(r"\b(?:the|a|an) (?=[a-z])", re.IGNORECASE)
HEDGE = "The patient is unsure of the exact timing. "


def _after_opening(text: str, sentence: str) -> str:
    """`sentence` inserted after the vignette's first sentence."""
    first, _, rest = text.partition(". ")
    return f"{first}. {sentence} {rest}" if rest else f"{text} {sentence}"


def _typos(text: str, key: str, rate: float) -> str:
    rng = seeded(key, "typos")

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        if not typo_eligible(word) or rng.random() >= rate:
            return word
        i = rng.randrange(1, len(word) - 2)
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]

    return re.sub(r"\b[a-z]+\b", one, text)


def apply_vignette_invariance(text: str, v: Vignette, attribute: str, value: str | None, rate: float | None) -> str:
    """The rendered vignette `text` with one attribute changed; every other character as rendered."""
    if attribute == "sex":
        return _OPENING.sub(lambda m: f"A {m.group(1)}-year-old {'man' if m.group(2) == 'woman' else 'woman'} presents", text, count=1)
    if attribute == "race_ethnicity":
        return _OPENING.sub(lambda m: f"A {m.group(1)}-year-old {value} {m.group(2)} presents", text, count=1)
    if attribute in ("insurance", "language", "occupation"):
        return _after_opening(text, str(value))
    if attribute == "name":
        female, _, male = str(value).partition("|")
        return f"Patient: {female if v.sex == 'F' else male}. {text}"
    if attribute == "typos":
        return _typos(text, v.vignette_id, rate or 0.05)
    if attribute == "telegraphic":
        return re.sub(r"(?<![\w/-])([a-z]+)(?![\w/-])", lambda m: TELEGRAPHIC.get(m.group(1), m.group(1)), _ARTICLE.sub("", text))
    if attribute == "hedged":
        return _after_opening(text, HEDGE.strip())
    if attribute == "all_caps":
        return upper_keeping_values(text)
    raise ValueError(f"unknown invariance attribute {attribute!r}")
