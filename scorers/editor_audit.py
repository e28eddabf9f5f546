"""Scorer of the editor audit: the editor's free-text edit against the structured route's correct counterfactual.

Bundled cases carry a structured record, so the structured route gives the correct and complete
counterfactual (`reference`). Statement by statement (`sentences.statements`, whitespace aside):

- a baseline statement the reference removed or rewrote must not survive in the editor's packet:
  one that does is `survived` (the edit is incomplete);
- a baseline statement the reference kept verbatim must be kept: one the editor changed or removed
  is `unwarranted` (a change it should not make);
- `passes_checks`: the deterministic checks of the frozen-set route (`verify_edit`: sections,
  residue, new form stated, size), as a build would apply them.

Value per sample: complete (1: no survivor and the new form stated); metadata: clean (no unwarranted
change), passes_checks and the statements. A reply that is not a JSON edit is unreadable: its metadata
says so with the reason, the rate metrics leave it out and `unreadable` counts it (never a 0 in a rate).
"""

from __future__ import annotations

import json
import math
import re
from functools import cache

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from clinical_cf.catalog.css.counterfactuals import parse_edit, verify_edit
from clinical_cf.catalog.css.interventions import load_catalog
from clinical_cf.catalog.css.schema import SECTIONS, load_cases
from clinical_cf.catalog.css.sentences import statements


def _norm(text: str) -> str:
    return " ".join(text.split())


def _statements(sections: dict[str, str]) -> list[str]:
    return [_norm(s) for name in SECTIONS for s in statements(sections.get(name, "")) if s.strip()]


def compare(baseline: dict[str, str], reference: dict[str, str], edited: dict[str, str]) -> tuple[list[str], list[str]]:
    """(survived, unwarranted) statements of the editor's packet against the reference."""
    ref_text = _norm("\n".join(reference.get(n, "") for n in SECTIONS))
    ed_text = _norm("\n".join(edited.get(n, "") for n in SECTIONS))
    survived, unwarranted = [], []
    for st in _statements(baseline):
        in_ref, in_ed = st in ref_text, st in ed_text
        if not in_ref and in_ed:
            survived.append(st)
        elif in_ref and not in_ed:
            unwarranted.append(st)
    return survived, unwarranted


@cache
def _inputs(catalog_path: str, cases_path: str):
    catalog = load_catalog(catalog_path)
    return catalog, {c.case_id: c for c in load_cases(cases_path)}


def _rate(key: str, scores: list[SampleScore]) -> float:
    values = [
        (s.score.metadata or {}).get(key) for s in scores
        if (s.score.metadata or {}).get("readable") == 1 and (s.score.metadata or {}).get(key) is not None
    ]
    return sum(float(v) for v in values) / len(values) if values else math.nan


@metric
def complete_rate() -> Metric:
    """Share of readable edits with nothing the correct counterfactual removed surviving and the new form stated."""
    def compute(scores: list[SampleScore]) -> float:  # annotated: Inspect passes SampleScores
        return _rate("complete", scores)

    return compute


@metric
def unwarranted_change_rate() -> Metric:
    """Share of readable edits that changed a statement the correct counterfactual keeps."""

    def compute(scores: list[SampleScore]) -> float:
        rate = _rate("clean", scores)
        return 1 - rate if not math.isnan(rate) else math.nan

    return compute


@metric
def passes_checks_rate() -> Metric:
    """Share of readable edits the deterministic checks of `counterfactuals build` would accept."""
    def compute(scores: list[SampleScore]) -> float:  # annotated: Inspect passes SampleScores
        return _rate("passes_checks", scores)

    return compute


@metric
def unreadable() -> Metric:
    """Replies that are not a JSON edit (unscored, counted)."""
    def compute(scores: list[SampleScore]) -> float:
        return float(sum(1 for s in scores if (s.score.metadata or {}).get("readable") == 0))

    return compute


@scorer(metrics=[complete_rate(), unwarranted_change_rate(), passes_checks_rate(), unreadable()])
def editor_fidelity(catalog: str, cases: str) -> Scorer:
    """Completeness and unwarranted changes of the editor's edit (see the module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        loaded_catalog, by_id = _inputs(catalog, cases)
        case = by_id[meta["case_id"]]
        intervention = loaded_catalog.by_id(meta["intervention_id"])
        baseline = json.loads(meta["baseline_sections"])
        reference = json.loads(meta["reference_sections"])
        try:
            edit = parse_edit(state.output.completion)
        except ValueError as ex:
            # Unscored: the value is a placeholder the metrics never read (they read `readable` and skip it).
            return Score(
                value=0, answer=state.output.completion[:200], explanation=f"unreadable: {ex}",
                metadata={"readable": 0, "complete": None, "clean": None, "passes_checks": None, "reason": str(ex)},
            )
        edited = {**baseline, **edit}
        survived, unwarranted = compare(baseline, reference, edited)
        text = "\n".join(edited[n] for n in SECTIONS)
        # The new form of the fact, as the build checks it (`expect_after`) - where the reference itself states it so.
        reference_text = "\n".join(reference.get(n, "") for n in SECTIONS)
        expected = [p for p in intervention.expect_after if re.search(p, reference_text)]
        stated = not expected or any(re.search(p, text) for p in expected)
        problems = verify_edit(case.model_copy(update={"sections": baseline}), intervention, edit)
        complete = not survived and stated
        explanation = "; ".join(
            [f"survived: {s[:120]}" for s in survived[:5]] + [f"unwarranted change: {s[:120]}" for s in unwarranted[:5]]
            + ([] if stated else ["the new form of the fact is not stated"]) + [f"check: {p[:120]}" for p in problems[:3]]
        ) or "complete, no unwarranted change"
        return Score(
            value=int(complete), answer=f"{len(edit)} section(s) edited", explanation=explanation,
            metadata={
                "readable": 1, "complete": int(complete), "clean": int(not unwarranted), "passes_checks": int(not problems),
                "survived": survived[:20], "unwarranted": unwarranted[:20], "checks": problems[:10],
            },
        )

    return score
