"""The reader role (step d): the prompt, the call and the quoted readings it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import GenerateConfig, get_model, model_roles

from clinical_cf.replies.contract import as_flag
from clinical_cf.replies.final import MAX_REPLY_CHARS, final_answer, number_problem
from clinical_cf.replies.json_answers import json_objects, lowered_keys
from clinical_cf.replies.judge_input import DATA_NOTICE, boundary, data_block

# --------------------------------------------------------------------------- the reader role (step d)

READER_ROLE = "reader"

READER_PROMPT = """You convert a reply written by another model into a fixed JSON form. You do not judge the reply, correct it or add to it: you only record what it states.

{task}
{conflict}
For every value you record, copy into "quote" the exact words of the reply that state it, including the words that say whether it is chosen, recommended or avoided. Copy them character for character from the reply; every quote is checked against the reply and a reading with a quote that is not in the reply is thrown away. Record nothing the reply does not state. If the reply states no answer, contradicts itself, or takes its answer back without giving another, set "unreadable" to true and say why in "reason".

{notice}

{reply}"""


@dataclass(frozen=True)
class ReaderTask:
    """What the reader extracts for one suite: instructions in words and the schema of its reply."""

    name: str
    instructions: str
    schema: Any  # inspect_ai.model.ResponseSchema


@dataclass
class ReaderOutcome:
    """The reader's reply to one request: its parsed JSON (None when it is not usable) and why not."""

    data: dict[str, Any] | None
    reply: str
    model: str
    reason: str = ""

    def record(self, verdict: str) -> dict[str, Any]:
        """What a score keeps about the reader call: model, its reply (capped) and the verification's verdict."""
        return {"model": self.model, "reply": self.reply[:4000], "verdict": verdict}


CONFLICT_NOTE = (
    "\nThe reply states more than one answer, and they disagree. Record an answer only if the reply itself marks "
    "its last answer as replacing the earlier ones (a correction or revision in its own words), quoting that "
    "revision; otherwise set \"unreadable\" to true.\n"
)


def reader_prompt(task: ReaderTask, final: str, conflict: str | None = None) -> str:
    """The reader's prompt: the task in words (with the conflict flag when the reply's answers disagree), then
    the reply as delimited, content-derived data."""
    body = final[:MAX_REPLY_CHARS]
    tag = boundary(task.instructions, body)
    return READER_PROMPT.format(task=task.instructions, conflict=CONFLICT_NOTE if conflict else "",
                                notice=DATA_NOTICE.format(tag=tag), reply=data_block("REPLY", body, tag))


@dataclass(frozen=True)
class ReaderModel:
    """The reader role's model and whether it may be sent `response_schema` (`-T json_schema=false`
    is for providers that reject it: then the reader is asked for the JSON in the prompt only)."""

    model: Any
    json_schema: bool = True

    def __str__(self) -> str:
        return str(self.model)


SECOND_READER_ROLE = "second_reader"
"""The model role of the second, independent reader whose reading must agree with the reader's (issue 37)."""


@dataclass(frozen=True)
class ReaderPanel:
    """The readers of step (d): the reader and, when one is bound, an independent second reader. A reading counts
    only when both read the reply and their verified readings agree."""

    first: ReaderModel
    second: ReaderModel | None = None

    def __str__(self) -> str:
        return f"{self.first} + {self.second}" if self.second else str(self.first)


def _same_model(a: Any, b: Any) -> bool:
    return str(a) == str(b) and getattr(getattr(a, "api", None), "base_url", None) == getattr(getattr(b, "api", None), "base_url", None)


def resolve_reader(reader: str | None, judge_role: str = "judge", json_schema: bool = True,
                   second_role: str = SECOND_READER_ROLE) -> ReaderPanel | None:
    """The readers for `reader` (a model role name), or None when step (d) is off.

    Opt-in: the bound role named `reader` (`--model-role reader=...`), else the bound judge role
    (`--model-role judge=...`), else off. The second reader is the bound `second_reader` role, else the
    bound judge role when it is another model than the reader (the judge reading the same reply). The model
    under test never reads its own replies: a reader that resolves to it is off too. `reader=None` or "none"
    turns step (d) off. With no second reader a reading is `unconfirmed` (unreadable, counted).
    """
    if reader is None or str(reader).strip().lower() in ("", "none", "off", "false"):
        return None
    roles = model_roles()
    if reader in roles:
        model = get_model(role=reader, required=True)
    elif judge_role in roles:
        # The judge's model reads, under the reader role (Inspect's copy of the default, given the role), so its
        # reading calls are billed to `reader` in the log's role usage, never counted as judge calls.
        model = get_model(role=reader, default=get_model(role=judge_role, required=True))
    else:
        return None
    under_test = get_model()
    if _same_model(model, under_test):
        return None
    second = None
    for role in (second_role, judge_role):
        if role in roles and role != reader:
            candidate = get_model(role=role, required=True)
            if not _same_model(candidate, under_test) and not _same_model(candidate, model):
                # Billed to the second reader's role even when the judge's model reads (as above).
                second = ReaderModel(candidate if role == second_role else get_model(role=second_role, default=candidate), json_schema)
                break
    return ReaderPanel(ReaderModel(model, json_schema), second)


def readers_of(reader: Any) -> list[Any]:
    """The reader models a caller passed: a `ReaderPanel`'s two, a list or tuple of models, or one model."""
    if reader is None:
        return []
    if isinstance(reader, ReaderPanel):
        return [reader.first, *([reader.second] if reader.second else [])]
    if isinstance(reader, (list, tuple)):
        return list(reader)
    return [reader]


@dataclass(frozen=True)
class Agreement:
    """What step (d) came to: the agreed, verified value (None when none), why not, and the record a score keeps
    (both readers' model, reply and verdict, and `agreement`: agreed, unconfirmed, disagree, refused, declined)."""

    value: Any
    reason: str
    record: dict[str, Any]


async def agreed_reading(reader: Any, task: ReaderTask, final: str, shown: str | None = None, conflict: str | None = None, *,
                         verify: Callable[[dict[str, Any]], tuple[Any, str]], same: Callable[[Any, Any], bool]) -> Agreement:
    """Step (d): the reading two independent readers agree on, or None with the reason (its code first).

    The first reader reads the reply (`shown`, the final answer with the suite's options, by default the final
    answer); the structural checks (`verify`, which may only refuse) check its quotes; the second reader reads the
    same reply the same way and its reading is checked too; the reading counts when `same` says the two agree.
    One reader alone proves nothing: its reading is `unconfirmed`, never scored.
    """
    models = readers_of(reader)[:2]
    prompt_text = final if shown is None else shown
    first = await ask_reader(models[0], task, prompt_text, conflict=conflict)
    if first.data is None:
        return Agreement(None, first.reason, {**first.record(first.reason), "agreement": "declined"})
    value, why = verify(first.data)
    if why:
        return Agreement(None, f"reader reading rejected: {why}", {**first.record(f"rejected: {why}"), "agreement": "refused"})
    if len(models) < 2:
        return Agreement(None, "unconfirmed: one reader's reading, and no second reader to agree with it "
                               "(bind --model-role second_reader=... or a judge role)",
                         {**first.record("accepted, unconfirmed"), "agreement": "unconfirmed"})
    second = await ask_reader(models[1], task, prompt_text, conflict=conflict)
    if second.data is None:
        return Agreement(None, f"readers disagree: the second reader declined ({second.reason[:120]})",
                         {**first.record("accepted"), "second": second.record(second.reason), "agreement": "disagree"})
    other, why_other = verify(second.data)
    if why_other:
        return Agreement(None, f"readers disagree: the second reader's reading was refused ({why_other[:120]})",
                         {**first.record("accepted"), "second": second.record(f"rejected: {why_other}"), "agreement": "disagree"})
    if not same(value, other):
        return Agreement(None, "readers disagree: the two readings differ",
                         {**first.record("accepted"), "second": second.record("accepted"), "agreement": "disagree"})
    return Agreement(value, "", {**first.record("accepted"), "second": second.record("accepted"), "agreement": "agreed"})


async def ask_reader(model: Any, task: ReaderTask, final: str, conflict: str | None = None) -> ReaderOutcome:
    """One reader call (structured output, temperature 0); the reply parsed as JSON.

    Not cached: a cache keyed by the reader's model name would hand one run's reading to another
    run of a different model served under that name (the prompt is deterministic, so a provider's
    own prompt cache still applies).
    """

    schema = task.schema
    if isinstance(model, ReaderModel):
        model, schema = model.model, (task.schema if model.json_schema else None)
    output = await model.generate(
        reader_prompt(task, final, conflict),
        config=GenerateConfig(response_schema=schema, temperature=0.0),
        cache=False,
    )
    reply = output.completion or ""
    problem = number_problem(final_answer(reply))
    if problem:
        return ReaderOutcome(None, reply, str(model), f"reader reply: {problem}")
    objects = json_objects(final_answer(reply))
    name = str(model)
    if not objects:
        return ReaderOutcome(None, reply, name, "reader reply is not JSON")
    data = lowered_keys(objects[-1].value)
    if as_flag(data.get("unreadable")) is True:
        return ReaderOutcome(None, reply, name, "reader: " + str(data.get("reason") or "no answer stated")[:200])
    return ReaderOutcome(data, reply, name)


def quoted_items(data: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    """The reader's list under `key` (each entry a dict with a quote), [] when absent, None when malformed."""
    value = data.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return [lowered_keys(v) for v in value]
