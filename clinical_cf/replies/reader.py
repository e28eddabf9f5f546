"""The reader role (step d): the prompt, the call and the quoted readings it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def resolve_reader(reader: str | None, judge_role: str = "judge", json_schema: bool = True) -> ReaderModel | None:
    """The reader model for `reader` (a model role name), or None when the reader is off.

    Opt-in: the bound role named `reader` (`--model-role reader=...`), else the bound judge role
    (`--model-role judge=...`), else off. The model under test never reads its own replies: a
    reader that resolves to it is off too. `reader=None` or "none" turns step (d) off.
    """
    if reader is None or str(reader).strip().lower() in ("", "none", "off", "false"):
        return None
    from inspect_ai.model import get_model, model_roles

    roles = model_roles()
    if reader in roles:
        model = get_model(role=reader, required=True)
    elif judge_role in roles:
        model = get_model(role=judge_role, required=True)
    else:
        return None
    under_test = get_model()
    if str(model) == str(under_test) and getattr(model.api, "base_url", None) == getattr(under_test.api, "base_url", None):
        return None
    return ReaderModel(model, json_schema)


async def ask_reader(model: Any, task: ReaderTask, final: str, conflict: str | None = None) -> ReaderOutcome:
    """One reader call (structured output, temperature 0); the reply parsed as JSON.

    Not cached: a cache keyed by the reader's model name would hand one run's reading to another
    run of a different model served under that name (the prompt is deterministic, so a provider's
    own prompt cache still applies).
    """
    from inspect_ai.model import GenerateConfig

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
