"""Expand cases x applicable interventions into scored tuples.

Mirrors the CSS paper's Table 1: a tuple is *eligible* when the applicability filter
passes; it is dropped as a *no-op* when the mutation leaves the packet unchanged, as
*incoherent* when the mutated record breaks a clinical invariant its baseline did not break
(`catalog.css.invariants`: dates out of order, therapy before the recurrence it treats, a
Whipple for a tail tumour, a drug without its marker ...; counted per rule), and as *residue* when a line of the
counterfactual packet still asserts or presupposes the original fact (see
`catalog.css.residue`; `residue="keep"` scores them and flags them instead). Only the rest
are *scored*. Every drop is counted per intervention, never silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Literal

from pydantic import ValidationError

from clinical_cf.catalog.css.dates import Order as DateOrder
from clinical_cf.catalog.css.dates import find_dates, numeric_order
from clinical_cf.catalog.css.interventions import Catalog, Intervention
from clinical_cf.catalog.css.invariants import Violation, new_violations, violations
from clinical_cf.catalog.css.mutate import (
    SHIFT_OPS,
    MutationError,
    Packet,
    apply_regex,
    apply_structured_ops,
    render_case,
    render_mutated,
)
from clinical_cf.catalog.css.residue import ResidueHit, find_residue, implication_hits
from clinical_cf.catalog.css.schema import Case
from clinical_cf.catalog.css.sentences import logical_lines

MutationMode = Literal["auto", "regex", "structured"]
"""`auto` (the default): a case with a structured record gets both arms rendered from the record (structured),
a case without one gets regex edits of its text; `regex` and `structured` force one route."""
Route = Literal["regex", "structured"]
ResidueMode = Literal["drop", "keep"]


@dataclass(frozen=True)
class CSSTuple:
    """One (case, intervention) pair with its baseline and counterfactual packets."""

    case: Case
    intervention: Intervention
    baseline: Packet
    counterfactual: Packet
    residue: tuple[ResidueHit, ...] = ()
    route: Route = "regex"
    """How the counterfactual was made: `structured` (the record edited and both arms re-rendered) or `regex`."""

    @property
    def id(self) -> str:
        return f"{self.case.case_id}:{self.intervention.id}"

    @property
    def verdict(self) -> Literal["complete", "residue"]:
        return "residue" if self.residue else "complete"


@dataclass
class InterventionCounts:
    family: str
    out_of_scope: int = 0
    """Cases the filter reaches but the intervention's scope leaves out (its direction does not hold there)."""
    eligible: int = 0
    noop: int = 0
    incoherent: int = 0
    residue: int = 0
    scored: int = 0
    invariants: dict[str, int] = field(default_factory=dict)
    """Tuples dropped as incoherent, per clinical invariant broken (`catalog.css.invariants`; a tuple breaking two counts under both)."""
    routes: dict[str, int] = field(default_factory=dict)
    """Scored tuples per route (structured / regex)."""
    incoherent_reasons: list[str] = field(default_factory=list)
    residue_lines: list[str] = field(default_factory=list)


@dataclass
class Expansion:
    tuples: list[CSSTuple]
    counts: dict[str, InterventionCounts]
    mode: MutationMode
    residue_mode: ResidueMode = "drop"
    dropped: list[CSSTuple] = field(default_factory=list)
    """Tuples dropped for residue, kept for `catalog summary --show` and the benchmark."""

    def summary(self) -> dict[str, dict[str, int | str | dict[str, int]]]:
        """Per-intervention counts, suitable for task metadata and the CLI table.

        `residue` counts tuples with residue: dropped (not in `scored`) under
        residue="drop", scored and flagged under residue="keep".
        """
        hidden = ("incoherent_reasons", "residue_lines")
        return {iid: {k: v for k, v in asdict(c).items() if k not in hidden} for iid, c in self.counts.items()}

    def invariant_drops(self) -> dict[str, int]:
        """Tuples dropped per clinical invariant, over all interventions (a tuple breaking two counts under both)."""
        totals: dict[str, int] = {}
        for c in self.counts.values():
            for rule, n in c.invariants.items():
                totals[rule] = totals.get(rule, 0) + n
        return dict(sorted(totals.items()))

    def routes(self) -> dict[str, int]:
        """Scored tuples per route (structured / regex)."""
        totals: dict[str, int] = {}
        for t in self.tuples:
            totals[t.route] = totals.get(t.route, 0) + 1
        return totals


def coherence_problems(case: Case) -> list[str]:
    """Every clinical invariant the case's record breaks, as 'rule: problem' (see `catalog.css.invariants`)."""
    return [str(v) for v in violations(case)]


_DIAGNOSIS_CUE = re.compile(r"(?i)\b(?:diagnos\w*|dx|biops\w*|histolog\w*|patholog\w*|cytology|TURBT|LLETZ|EBUS|OGD|colonoscopy)\b")


def _order_from_board_date(text: str, board: date) -> DateOrder | None:
    """Day- or month-first from the board date the user confirmed: "10/03/2026" on a board of 2026-03-10 is day-first."""
    for order in ("dmy", "mdy"):
        other = "mdy" if order == "dmy" else "dmy"
        readings = {d.text for d in find_dates(text, order) if d.form == "num" and d.value == board}  # type: ignore[arg-type]
        if readings and not any(d.value == board for d in find_dates(text, other) if d.form == "num" and d.text in readings):  # type: ignore[arg-type]
            return order  # type: ignore[return-value]
    return None


def packet_diagnosis_date(case: Case) -> date | None:
    """The earliest date written on a statement about the diagnosis (biopsy, histology, "dx ..."), if any."""
    text = "\n".join(case.sections.values())
    order = numeric_order(text) or _order_from_board_date(text, case.board_date)
    found = [
        d.value
        for line in logical_lines(text)
        if _DIAGNOSIS_CUE.search(line)
        for d in find_dates(line, order)
        if not d.ambiguous
    ]
    return min(found) if found else None


def text_coherence_problems(case: Case, intervention: Intervention) -> list[str]:
    """For a case without a structured record (an imported packet): do the injected events fit its own timeline?

    An event the intervention dates (a first line started, an operation, a scan) must fall
    after the diagnosis the packet itself records; otherwise the tuple is incoherent.
    """
    if case.record is not None or not intervention.dates:
        return []
    diagnosed = packet_diagnosis_date(case)
    if diagnosed is None:
        return []
    problems = []
    for name, offset in sorted(intervention.dates.items(), key=lambda kv: kv[1]):
        when = case.board_date + timedelta(days=offset)
        if when < diagnosed:
            problems.append(f"injected {name} {when.isoformat()} is before the packet's diagnosis ({diagnosed.isoformat()})")
            break
    return problems


def history_presupposes(case: Case, intervention: Intervention) -> list[str]:
    """Treatment lines of the mutated record that presuppose what the intervention negated.

    A HER2-negative record whose history holds trastuzumab, or an ER-negative one on
    letrozole, is incoherent: no re-rendering repairs a history. Structured mode drops such
    tuples as incoherent; regex mode finds the same lines as residue.
    """
    if case.record is None:
        return []
    problems = []
    for line in case.record.treatment_lines:
        text = f"{line.regimen} ({line.setting})"
        for name in intervention.residue:
            implication = intervention.implication(name)
            if any(term.kind in ("agent", "history") for term, _ in implication_hits(implication, text)):
                problems.append(f"treatment history presupposes {implication.fact}: {line.regimen}")
                break
    return problems


def route_for(case: Case, intervention: Intervention, mode: MutationMode) -> Route:
    """The route a tuple's counterfactual takes under `mode`."""
    if mode == "auto":
        return "structured" if case.record is not None and intervention.structured else "regex"
    return mode


def _baseline(case: Case, route: Route, scale: float) -> Packet:
    if route == "structured" or scale != 1.0:
        return render_case(case, scale=scale)
    return Packet(dict(case.sections))


def _structured_counterfactual(
    case: Case, intervention: Intervention, scale: float, route: Route = "structured"
) -> tuple[Packet | None, str | None, list[Violation]]:
    """The structured counterfactual, or the reason it is incoherent and the invariants it breaks.

    For the regex route the record twin leaves out the ops a text edit cannot mirror (`SHIFT_OPS`): the
    regex text keeps the chart's dates, so its twin must too."""
    try:
        mutated = apply_structured_ops(case, intervention, skip=SHIFT_OPS if route == "regex" else ())
    except ValidationError as ex:
        return None, "; ".join(e["msg"] for e in ex.errors()), [Violation("record_schema", "; ".join(e["msg"] for e in ex.errors()))]
    broken = new_violations(case, mutated)
    broken += [Violation("drug_needs_marker", p) for p in history_presupposes(mutated, intervention)]
    if broken:
        return None, "; ".join(str(v) for v in broken), broken
    return render_mutated(mutated, intervention, scale), None, []


def expand_tuples(
    cases: Iterable[Case],
    catalog: Catalog,
    mode: MutationMode = "auto",
    scale: float = 1.0,
    families: Iterable[str] | None = None,
    residue: ResidueMode = "drop",
) -> Expansion:
    """Expand cases into tuples for the selected families, counting every drop."""
    if residue not in ("drop", "keep"):
        raise ValueError(f"residue must be 'drop' or 'keep', not {residue!r}")
    wanted = set(families) if families is not None else None
    interventions = [i for i in catalog.interventions if wanted is None or i.family in wanted]
    counts = {i.id: InterventionCounts(family=i.family) for i in interventions}
    tuples: list[CSSTuple] = []
    dropped: list[CSSTuple] = []
    if mode not in ("auto", "regex", "structured"):
        raise ValueError(f"mutation mode must be 'auto', 'regex' or 'structured', not {mode!r}")
    for case in cases:
        baselines: dict[Route, Packet] = {}
        for intervention in interventions:
            if not intervention.applies_to.matches(case):
                continue
            if intervention.excluded_by(case) is not None:
                # Outside the setting where the expected direction holds (the catalog's scope): left out, counted.
                counts[intervention.id].out_of_scope += 1
                continue
            count = counts[intervention.id]
            count.eligible += 1
            route = route_for(case, intervention, mode)
            baseline = baselines.get(route) or baselines.setdefault(route, _baseline(case, route, scale))

            structured: Packet | None = None
            if case.record is not None and intervention.structured:
                # The record is checked whichever route makes the text: a regex edit of a case with a record is
                # dropped when its structured twin breaks a clinical invariant.
                structured, reason, broken = _structured_counterfactual(case, intervention, scale, route)
                if reason is not None:
                    count.incoherent += 1
                    for rule in dict.fromkeys(v.rule for v in broken):
                        count.invariants[rule] = count.invariants.get(rule, 0) + 1
                    count.incoherent_reasons.append(f"{case.case_id}: {reason}")
                    continue
            elif case.record is None and (problems := text_coherence_problems(case, intervention)):
                count.incoherent += 1
                count.invariants["dates_run_forward"] = count.invariants.get("dates_run_forward", 0) + 1
                count.incoherent_reasons.append(f"{case.case_id}: {problems[0]}")
                continue
            elif route == "structured":
                raise MutationError(
                    f"structured mode needs a record on case '{case.case_id}' and structured ops on "
                    f"intervention '{intervention.id}'"
                )

            counterfactual = structured if route == "structured" else apply_regex(case, intervention, baseline)
            assert counterfactual is not None
            if counterfactual == baseline or counterfactual.same_content(baseline):
                count.noop += 1
                continue
            hits = tuple(find_residue(counterfactual.sections, intervention, case.board_date, case.cancer_type))
            result = CSSTuple(case, intervention, baseline, counterfactual, hits, route)
            if hits:
                count.residue += 1
                count.residue_lines.extend(f"{case.case_id} {h.describe()}" for h in hits)
                if residue == "drop":
                    dropped.append(result)
                    continue
            count.scored += 1
            count.routes[route] = count.routes.get(route, 0) + 1
            tuples.append(result)
    return Expansion(tuples, counts, mode, residue, dropped)


def mode_differences(cases: list[Case], catalog: Catalog, families: Iterable[str] | None = None) -> dict[str, int]:
    """How many tuples' counterfactual packets differ between regex and structured mode."""
    regex = {t.id: t.counterfactual.text for t in expand_tuples(cases, catalog, "regex", families=families).tuples}
    structured = {
        t.id: t.counterfactual.text for t in expand_tuples(cases, catalog, "structured", families=families).tuples
    }
    ids = set(regex) | set(structured)
    return {
        "tuples_regex": len(regex),
        "tuples_structured": len(structured),
        "only_regex": len(set(regex) - set(structured)),
        "only_structured": len(set(structured) - set(regex)),
        "differ": sum(1 for i in ids if regex.get(i) != structured.get(i)),
    }
