"""Solver of the reader audit: the reader role reads each bundled reply; no model under test is called.

The reader gets exactly what a suite would send it for that reply (its `ReaderTask`, the final answer after
reasoning removal, the options or candidates, and the conflict flag when the reply's candidate answers
disagree), on every reply, whether or not the contract steps (a)-(c) could read it: what is audited is the
reader, not the replies' formats. Its reading is kept twice: as it stated it (`raw`) and after the suite's
deterministic verification (`verified`, None when refused).
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import get_model, model_roles
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel

from clinical_cf.replies import SECOND_READER_ROLE, ReaderModel, ask_reader, final_answer, is_conflict, quoted_items
from clinical_cf.solvers.css import CSS_READER, read_recommendations, verify_css_reading
from clinical_cf.solvers.medpic import MEDPIC_READER, read_answer, verify_medpic_reading
from clinical_cf.solvers.sensitivity import (
    LETTERS,
    SENSITIVITY_READER,
    options_text,
    read_distribution_reading,
    verify_distribution_reading,
)
from clinical_cf.solvers.workflow import WORKFLOW_READER, normalise_action, parse_decision, verify_workflow_reading

DIGITS = "7" * 5000


def expand(reply: str) -> str:
    """A corpus reply with its placeholders filled (`@@DIGITS5000@@`: a 5,000-digit integer)."""
    return reply.replace("@@DIGITS5000@@", DIGITS)


class ReaderAuditRead(StoreModel):
    """What the reader returned for one reply and what the verification made of it; the same for the second reader
    when one is bound (issue 37: a reading counts only when an independent second reading agrees)."""

    declined: bool = False
    raw: Any = None
    verified: Any = None
    verdict: str = ""
    reader_reply: str = ""
    error: str = ""
    reader_model: str = ""
    second_model: str | None = None
    second_declined: bool = False
    second_raw: Any = None
    second_verified: Any = None
    second_verdict: str = ""


def _raw(suite: str, data: dict[str, Any], candidates: list[str]) -> Any:
    """The reader's reading as it states it (no verification), in the corpus's truth form."""
    if suite in ("css", "agent"):
        lists = [quoted_items(data, "recommendations") or [], quoted_items(data, "not_recommended") or []]
        return {"recommended": [str(e.get("treatment", "")) for e in lists[0]],
                "not_recommended": [str(e.get("treatment", "")) for e in lists[1]]}
    if suite == "medpic":
        return sorted({str(e.get("letter", "")).strip().upper() for e in quoted_items(data, "answer") or []})
    if suite == "workflow":
        action = data.get("action") if isinstance(data.get("action"), dict) else {}
        confidence = data.get("confidence") if isinstance(data.get("confidence"), dict) else {}
        value = confidence.get("value")
        return {"action": normalise_action(action.get("value")),
                "confidence": round(float(value), 4) if isinstance(value, (int, float)) and not isinstance(value, bool) else None}
    probs = [0.0] * len(candidates)
    for e in quoted_items(data, "probabilities") or []:
        letter = str(e.get("candidate", "")).strip().upper()
        if letter in LETTERS[: len(candidates)] and isinstance(e.get("probability"), (int, float)):
            probs[LETTERS.index(letter)] = round(float(e["probability"]), 2)
    return probs


def _conflict(suite: str, reply: str, options: dict[str, str], candidates: list[str]) -> str | None:
    """The contract reading's conflict reason, when the reply's candidate answers disagree (the flag a suite sends)."""
    if suite in ("css", "agent"):
        reason = read_recommendations(reply).reason
    elif suite == "medpic":
        reason = read_answer(reply, options).reason
    elif suite == "workflow":
        reason = parse_decision(reply).unreadable_reason
    else:
        reason = read_distribution_reading(reply, candidates).reason
    return reason if is_conflict(reason) else None


def _verify(suite: str, data: dict[str, Any], final: str, options: dict[str, str], candidates: list[str], flagged: bool) -> tuple[Any, str]:
    """A reading after the suite's structural checks (None when refused), in the corpus's truth form, and why refused."""
    if suite in ("css", "agent"):
        rec, avoid, why = verify_css_reading(data, final, flagged)
        return (None if why else {"recommended": [r.treatment for r in rec], "not_recommended": [r.treatment for r in avoid]}), why
    if suite == "medpic":
        letters, why = verify_medpic_reading(data, final, options, flagged)
        return (sorted(letters) if letters else None), why
    if suite == "workflow":
        action, confidence, why = verify_workflow_reading(data, final, flagged)
        return ({"action": action, "confidence": None if confidence is None else round(confidence, 4)} if action else None), why
    probs, why = verify_distribution_reading(data, final, candidates, flagged)
    return ([round(p, 2) for p in probs] if probs else None), why


@solver
def audit_reader(reader_role: str = "reader", json_schema: bool = True, second_role: str = SECOND_READER_ROLE) -> Solver:
    """Ask the reader role to read the sample's reply, and the second reader role when it is bound; keep each
    reading raw and verified (the scorer reports their agreement and the lie rate of the pair).

    Args:
        reader_role: The model role audited; without it bound, the model given by `--model` is audited.
        json_schema: Send the reader's schema as `response_schema` (off for servers that reject it).
        second_role: The second reader's role (`second_reader` by default; `judge` audits the judge as the second
            reader); unbound, only the first reader is audited.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        suite, reply = meta["suite"], expand(meta["reply"])
        options, candidates = meta.get("options") or {}, meta.get("candidates") or []
        model = ReaderModel(get_model(role=reader_role, required=True) if reader_role in model_roles() else get_model(), json_schema)
        final = final_answer(reply)
        conflict = _conflict(suite, reply, options, candidates)
        task, shown = {
            "css": (CSS_READER, final), "agent": (CSS_READER, final),
            "medpic": (MEDPIC_READER, f"Options: {json.dumps(options)}\n\n{final}"),
            "workflow": (WORKFLOW_READER, final),
            "sensitivity": (SENSITIVITY_READER, f"Candidates: {options_text(candidates)}\n\n{final}"),
        }[suite]
        read = state.store_as(ReaderAuditRead)
        second = (ReaderModel(get_model(role=second_role, required=True), json_schema)
                  if second_role and second_role != reader_role and second_role in model_roles() else None)
        read.reader_model, read.second_model = str(model), (str(second) if second else None)
        flagged = conflict is not None
        try:
            outcome = await ask_reader(model, task, shown, conflict=conflict)
            other = await ask_reader(second, task, shown, conflict=conflict) if second else None
        except Exception as ex:  # a provider error on one sample is that sample's failure, recorded
            read.error = f"{type(ex).__name__}: {str(ex)[:200]}"
            return state
        read.reader_reply = outcome.reply[:4000]
        if other is not None:
            if other.data is None:
                read.second_declined, read.second_verdict = True, other.reason or "declined"
            else:
                read.second_raw = _raw(suite, other.data, candidates)
                read.second_verified, why = _verify(suite, other.data, final, options, candidates, flagged)
                read.second_verdict = "accepted" if read.second_verified is not None else f"rejected: {why}"
        if outcome.data is None:
            read.declined, read.verdict = True, outcome.reason or "declined"
            return state
        read.raw = _raw(suite, outcome.data, candidates)
        verified, why = _verify(suite, outcome.data, final, options, candidates, flagged)
        read.verified, read.verdict = verified, ("accepted" if verified is not None else f"rejected: {why}")
        state.output.completion = outcome.reply
        return state

    return solve
