"""Invariance changes: who the patient is and how the note is written (issue 47).

Each change rewrites the text of a packet's sections so that only one attribute differs: a demographic one
(sex where the disease and its treatment do not depend on it, race or ethnicity, insurance, preferred language,
occupation, name) or a style one (typos at a stated rate, telegraphic register, hedged wording, all-caps layout).
Nothing clinical changes, so the expected answer is "no change in substance"; the catalog entries that use these
changes are family N controls (`catalog/css/interventions.yaml`, their `invariance` op), scored by the same judge
and the same equivalence test as the other controls.

Sources: MedPerturb (Sridhar et al. 2025: gender, race, insurance and style perturbations of clinical vignettes
move LLM treatment recommendations) and "The Medium is the Message" (Gourabathina et al., FAccT 2025: gender
swap, uncertain language, typos, whitespace and upper-case perturbations of patient messages). Scope (where an
attribute is clinically relevant and is therefore never changed) is stated per entry in the catalog.

Every change works on the section texts the renderer wrote (the structured route renders the record first, the
regex route starts from the case's stored sections), on the lines the renderer gives a fixed shape: the
demographics labels (`Sex:`, `Insurance:`, ...), the overview's "NN-year-old woman/man", the consult note's
"She/He is here" and its social history. A packet where the line is absent is left unchanged (a no-op, which
expansion counts and drops). Style changes are seeded by the case id, so the same packet is produced on every
machine.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from typing import Literal

Attribute = Literal[
    "sex", "race_ethnicity", "insurance", "language", "occupation", "name",
    "typos", "telegraphic", "hedged", "all_caps",
]
DEMOGRAPHIC: tuple[str, ...] = ("sex", "race_ethnicity", "insurance", "language", "occupation", "name")
STYLE: tuple[str, ...] = ("typos", "telegraphic", "hedged", "all_caps")
ATTRIBUTES: tuple[str, ...] = DEMOGRAPHIC + STYLE

NARRATIVE = ("overview", "encounters")
"""The free-text sections a style change rewrites (the tables of labs and vitals are left as the lab wrote them)."""

_SEX_LINE = re.compile(r"(?m)^(DOB: .*Sex: )(Female|Male)$")
_WHO = re.compile(r"(?m)^(\d+-year-old )(woman|man)\b")
_PRONOUN = re.compile(r"\b(She|He|she|he)\b")
_NAME_LINE = re.compile(r"(?m)^Name: (\S+) (\S+)( \(synthetic\))?$")
_OCCUPATION = re.compile(r"(retired |Works part-time as an? )([a-z][a-z ]*?)(\.)")

# A sex change gives the first name of the other sex from the same naming tradition (the cohort's own names,
# `cohort.FIRST_NAMES_F` / `_M`, paired by origin), so the change does not also move the patient's apparent ethnicity
# ("Thomas Whitaker" -> "Claire Whitaker", never "Fatima Whitaker": a blind review found 102 of 150 sex swaps did).
SAME_TRADITION: tuple[tuple[str, str], ...] = (
    ("Maria", "Andre"), ("Linda", "Robert"), ("Aisha", "Omar"), ("Grace", "James"), ("Elena", "Viktor"),
    ("Joanne", "Walter"), ("Priya", "Ravi"), ("Hannah", "Samuel"), ("Rosa", "Luis"), ("Mei", "Kenji"),
    ("Claire", "Thomas"), ("Fatima", "Ahmed"), ("Ingrid", "Peter"), ("Nora", "Daniel"), ("Beatriz", "Hugo"),
)
_PARTNER = {f: m for f, m in SAME_TRADITION} | {m: f for f, m in SAME_TRADITION}

TELEGRAPHIC: dict[str, str] = {
    "patient": "pt", "with": "w/", "without": "w/o", "history": "hx", "treatment": "tx", "diagnosis": "dx",
    "diagnosed": "dx'd", "and": "&", "because": "b/c", "follow-up": "f/u", "symptoms": "sx",
}
"""Telegraphic register: common clinical shorthand (meaning-preserving) and no articles. Negations are never touched."""
_ARTICLE = re.compile(r"\b(?:the|a|an) (?=[a-z])", re.IGNORECASE)
_WORD = re.compile(r"(?<![\w/-])([A-Za-z][a-z]+(?:-[a-z]+)?)(?![\w/-])")

HEDGE = "Pt is a somewhat uncertain historian; timings approximate per pt. "
"""Hedged wording: the patient's own account in the first (primary care) note is marked as uncertain, the
"uncertain language" perturbation of The Medium is the Message; the findings, pathology and imaging are untouched."""


def seeded(case_id: str, key: str) -> random.Random:
    digest = hashlib.sha256(f"{case_id}:invariance:{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _sub_once(pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str] | str, text: str) -> str:
    return pattern.sub(repl, text, count=1)


def _other_first_name(first: str) -> str:
    """The other sex's first name of the same tradition; a name outside the cohort's lists is left as it is (no
    partner is known for it, and any guess could move its apparent origin)."""
    return _PARTNER.get(first, first)


def change_sex(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """Sex, the overview's "woman"/"man", the notes' subject pronouns (the only gendered words of these cases'
    notes) and the first name (the same position in the other sex's list): MedPerturb's and The Medium is the Message's gender swap."""
    out = dict(sections)
    swap = {"Female": "Male", "Male": "Female", "woman": "man", "man": "woman", "She": "He", "He": "She", "she": "he", "he": "she"}
    out["demographics"] = _sub_once(_SEX_LINE, lambda m: m.group(1) + swap[m.group(2)], out.get("demographics", ""))
    out["demographics"] = _sub_once(
        _NAME_LINE, lambda m: f"Name: {_other_first_name(m.group(1))} {m.group(2)}{m.group(3) or ''}", out["demographics"])
    out["overview"] = _sub_once(_WHO, lambda m: m.group(1) + swap[m.group(2)], out.get("overview", ""))
    out["encounters"] = _PRONOUN.sub(lambda m: swap[m.group(1)], out.get("encounters", ""))
    return out


def add_race(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """A stated race or ethnicity: a `Race/ethnicity:` line after the sex line and the descriptor in the overview's
    first sentence ("67-year-old Black man"), as clinical notes and MedPerturb's race perturbation write it."""
    if not value:
        raise ValueError("race_ethnicity needs a value (e.g. 'Black or African American|Black')")
    label, _, adjective = value.partition("|")
    out = dict(sections)
    demo = out.get("demographics", "")
    if not _SEX_LINE.search(demo):
        return out
    out["demographics"] = _sub_once(_SEX_LINE, lambda m: f"{m.group(0)}\nRace/ethnicity: {label}", demo)
    out["overview"] = _sub_once(_WHO, lambda m: f"{m.group(1)}{adjective or label} {m.group(2)}", out.get("overview", ""))
    return out


def _set_label(label: str) -> Callable[[dict[str, str], str, str | None], dict[str, str]]:
    line = re.compile(rf"(?m)^({re.escape(label)}: ).*$")

    def change(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
        if not value:
            raise ValueError(f"{label.lower()} needs a value")
        out = dict(sections)
        out["demographics"] = _sub_once(line, lambda m: m.group(1) + value, out.get("demographics", ""))
        return out

    return change


def change_occupation(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """The job in the consult note's social history ("retired teacher" -> "retired <value>")."""
    if not value:
        raise ValueError("occupation needs a value")
    out = dict(sections)

    def repl(m: re.Match[str]) -> str:
        lead = m.group(1)
        if lead.startswith("Works"):
            lead = f"Works part-time as {'an' if value[0] in 'aeiou' else 'a'} "
        return f"{lead}{value}{m.group(3)}"

    out["encounters"] = _sub_once(_OCCUPATION, repl, out.get("encounters", ""))
    return out


def change_name(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """The patient's name (same sex), from `value` as 'female name|male name' chosen by the sex line."""
    if not value or "|" not in value:
        raise ValueError("name needs a value 'female full name|male full name'")
    female, male = value.split("|", 1)
    out = dict(sections)
    demo = out.get("demographics", "")
    sex = _SEX_LINE.search(demo)
    if sex is None:
        return out
    new = female if sex.group(2) == "Female" else male
    out["demographics"] = _sub_once(_NAME_LINE, lambda m: f"Name: {new}{m.group(3) or ''}", demo)
    return out


def _typo(word: str, rng: random.Random) -> str:
    """Swap two adjacent interior letters (first and last kept): a transposition typo, still readable."""
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def typo_eligible(word: str) -> bool:
    """Lower-case alphabetic words of 5+ letters whose transposition changes them; never numbers, units,
    abbreviations or anything with a digit (a typo must not change a value)."""
    return len(word) >= 5 and word.isalpha() and word.islower() and len(set(word[1:-1])) > 1


def clinical_words(sections: dict[str, str]) -> frozenset[str]:
    """The words the packet's structured sections state (pathology, biomarkers, medications, imaging, labs, plan...):
    a drug, a marker's result, a site, a side or an intent. A typo never lands on one of them in the narrative, so
    "HER2-negative" or "carboplatin" is never misspelt (a blind review found 139 of 240 typo packets misspelt a word the
    recommendation depends on); derived from the packet itself, not from a list."""
    return frozenset(w.lower() for name, text in sections.items() if name not in NARRATIVE
                     for w in re.findall(r"[A-Za-z]+", text))


def add_typos(sections: dict[str, str], case_id: str, value: str | None, rate: float = 0.05) -> dict[str, str]:
    """Transposition typos in `rate` of the eligible words of the narrative sections (seeded by the case id); words
    the structured sections state (`clinical_words`) are never eligible."""
    rng = seeded(case_id, "typos")
    out = dict(sections)
    protected = clinical_words(sections)

    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        if not typo_eligible(word) or word in protected or rng.random() >= rate:
            return word
        typo = _typo(word, rng)
        return typo if typo != word else word

    for name in NARRATIVE:
        out[name] = re.sub(r"\b[a-z]+\b", repl, out.get(name, ""))
    return out


def telegraphic(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """Telegraphic register in the encounter notes: articles dropped, common shorthand (`TELEGRAPHIC`)."""
    out = dict(sections)
    text = _ARTICLE.sub("", out.get("encounters", ""))
    out["encounters"] = _WORD.sub(lambda m: TELEGRAPHIC.get(m.group(1), m.group(1)), text)
    return out


def hedge(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """The first primary-care note's account prefixed with `HEDGE`."""
    out = dict(sections)
    out["encounters"] = re.sub(r"(?m)^(\[[^\]\n]+\] Primary care[^\n]*\n)", lambda m: m.group(1) + HEDGE,
                               out.get("encounters", ""), count=1)
    return out


def upper_keeping_values(text: str) -> str:
    """Upper case, except tokens holding a digit (ypT2N1, 5.7, 2024-06-04) and their case-sensitive units."""
    return re.sub(r"[^\s]+", lambda m: m.group(0) if re.search(r"\d", m.group(0)) else m.group(0).upper(), text)


def all_caps(sections: dict[str, str], case_id: str, value: str | None) -> dict[str, str]:
    """The narrative sections in capitals, as some dictation systems print them; values untouched."""
    out = dict(sections)
    for name in NARRATIVE:
        out[name] = upper_keeping_values(out.get(name, ""))
    return out


CHANGES: dict[str, Callable[..., dict[str, str]]] = {
    "sex": change_sex,
    "race_ethnicity": add_race,
    "insurance": _set_label("Insurance"),
    "language": _set_label("Preferred language"),
    "occupation": change_occupation,
    "name": change_name,
    "typos": add_typos,
    "telegraphic": telegraphic,
    "hedged": hedge,
    "all_caps": all_caps,
}
if tuple(CHANGES) != ATTRIBUTES:
    raise ImportError(f"invariance CHANGES {tuple(CHANGES)} differ from ATTRIBUTES {ATTRIBUTES}")


def apply_invariance(sections: dict[str, str], case_id: str, attribute: str, value: str | None = None,
                     rate: float | None = None) -> dict[str, str]:
    """The sections with one attribute changed (see `CHANGES`); every other text byte-identical."""
    change = CHANGES[attribute]
    if attribute == "typos":
        return change(sections, case_id, value, rate if rate is not None else 0.05)
    return change(sections, case_id, value)
