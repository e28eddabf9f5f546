"""Workflow solver: the decision reading on messy outputs and the pure episode rendering.

Issue 21 changed the reading deliberately: `parse_decision` (steps a-c) reads the decision JSON and
a closing `ACTION:` line only; prose, nested or renamed fields go to the reader role, whose reading
is verified against the reply's words. Where an expectation below moved from the closed grammar to
the reader, the same action is asserted through a faithful scripted reader; a confidence stated on
no scale (65, 80) is no longer divided by 100.
"""

import functools
import json
import re

import anyio
import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.replies import number_grounded
from clinical_cf.solvers.workflow import (
    ACTION_STEMS,
    CLASS_SEMANTICS,
    UNCERTAINTY_CHECKLIST,
    episode_messages,
    normalise_action,
    parse_confidence,
    parse_decision,
    parse_decision_with_reader,
    system_prompt,
)


def faithful_reader(text: str, action: str, confidence: float | None):
    """A mockllm reader quoting the clause that states the action (and the line with the confidence)."""

    stems = ACTION_STEMS[action] + (action.lower(),)
    clauses = [c.strip() for c in re.split(r"[\n.;:]", text) if any(w.startswith(stems) for w in re.findall(r"[a-z_']+", c.lower()))]
    data: dict = {"action": {"value": action, "quote": clauses[-1] if clauses else action}}
    if confidence is not None:
        lines = [line for line in text.splitlines() if number_grounded(confidence, line)]
        data["confidence"] = {"value": confidence, "quote": lines[-1] if lines else ""}

    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/model", json.dumps(data))
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    # Two independent readers giving the same reading (issue 37: one reader's reading is only `unconfirmed`).
    return (get_model("mockllm/model", custom_outputs=respond, memoize=False),
            get_model("mockllm/second_reader", custom_outputs=respond, memoize=False))


def read_in_full(text: str, action: str, confidence: float | None, **whole):
    return anyio.run(functools.partial(parse_decision_with_reader, text, faithful_reader(text, action, confidence), **whole))


@pytest.mark.parametrize(
    "text, action, confidence, method",
    [
        ('{"action": "ESCALATE", "confidence": 0.9, "reason": "red flag"}', "ESCALATE", 0.9, "json"),
        ('```json\n{"action": "ask clarification", "confidence": "80%", "reason": "dose missing"}\n```', "ASK_CLARIFICATION", 0.8, "json"),
        ('Sure! Here is my decision:\n{"Action": "Escalate", "Confidence": "0.75"}\nThanks.', "ESCALATE", 0.75, "json"),
        ('{"decision": {"action": "ask_for_clarification", "confidence": 65}}', "ASK_CLARIFICATION", None, "reader"),
        ('{"action": "ANSWER", "reason": "routine"}', "ANSWER", None, "json"),
        ('{"action": "abstain", "confidence": "high"}', "ABSTAIN", None, "json"),
        ('<think>maybe ANSWER? no</think>{"action": "ESCALATE", "confidence": 1}', "ESCALATE", 1.0, "json"),
        ('{"note": "x"} then {"action": "Ask-Clarification", "confidence": 0.4}', "ASK_CLARIFICATION", 0.4, "json"),
        ("Action: Escalate\nConfidence: 0.7\nThe patient is hypotensive.", "ESCALATE", 0.7, "reader"),
        ("**ESCALATE**\n\nThis is a red flag.", "ESCALATE", None, "reader"),
        ("Action: Escalate\nConfidence: 0.7\nReason: the patient is hypotensive.", "ESCALATE", 0.7, "keyword"),
        ("The patient is hypotensive.\n\n**ESCALATE**", "ESCALATE", None, "keyword"),
        ("Final decision: ask clarification", "ASK_CLARIFICATION", None, "keyword"),
    ],
)
def test_parse_messy_outputs(text, action, confidence, method):
    closed = parse_decision(text)
    decision = read_in_full(text, action, confidence) if method == "reader" else closed
    if method == "reader":
        assert closed.action is None and closed.needs_reader  # left to the reader, never read otherwise
    assert decision.parse_ok and decision.action == action and decision.method == method
    assert decision.confidence == (pytest.approx(confidence) if confidence is not None else None)


@pytest.mark.parametrize(
    "text, stop_reason",
    [
        # Cut off inside the reason: the action field is complete, the object is not. Before issue 37 this was read
        # ("partial_json"); what followed the cut might have been "... but ESCALATE".
        ('{"action": "ANSWER","confidence":0.5,"reason":"The potassium is 5.7 mmol/L; the potassium is 5.7', None),
        ('```json\n{\n  "decision": "escalate",\n  "reason": "hypotension after the handoff and', "max_tokens"),
        ('{"action": "ESCALATE", "confidence": 0.8, "reason": "new troponin rise"}', "max_tokens"),  # whole-looking, but cut
        ("ACTION: ESCALATE, CONFIDENCE: 0.8", "model_length"),
    ],
)
def test_a_cut_reply_is_unreadable_truncated_and_never_read(text, stop_reason):
    decision = read_in_full(text, "ESCALATE", 0.8, stop_reason=stop_reason, max_tokens=64)
    assert decision.action is None and not decision.parse_ok and decision.reader is None  # the reader is not asked
    assert decision.unreadable == "truncated" and decision.as_dict()["unreadable"] == "truncated"
    assert decision.max_tokens == 64


def test_a_filtered_reply_is_unreadable_filtered():
    decision = parse_decision("ACTION: ANSWER, CONFIDENCE: 0.9", stop_reason="content_filter")
    assert decision.action is None and decision.unreadable == "filtered" and decision.max_tokens is None


@pytest.mark.parametrize(
    "text",
    ["", "I am not sure what to do here.", "I could ANSWER or ESCALATE depending on the labs.", '{"action": "page the registrar"}'],
)
def test_unreadable_or_ambiguous_replies_do_not_parse(text):
    decision = parse_decision(text)
    assert not decision.parse_ok and decision.action is None and decision.method == "none"


def test_action_and_confidence_normalisation():
    assert normalise_action("  escalate ") == "ESCALATE"
    assert normalise_action("Ask for clarification") == "ASK_CLARIFICATION"
    assert normalise_action("go ahead") is None and normalise_action(3) is None
    assert parse_confidence("0.8") == 0.8 and parse_confidence("80%") == 0.8 and parse_confidence("8/10") == 0.8
    # Issue 21: a bare number outside 0-1 states no scale; it is not divided by 100.
    assert parse_confidence(80) is None and parse_confidence(8) is None and parse_confidence(1.5) is None
    assert parse_confidence(None) is None and parse_confidence("1.5%") == pytest.approx(0.015)
    assert parse_confidence(250) is None and parse_confidence(True) is None


def test_episode_messages_are_pure_and_multi_turn():
    episodes = {e.id: e for e in load_episodes(EPISODES_PATH)}
    late = episodes["doc-01.p1.late_risk"]
    messages = episode_messages(late, "neutral")
    assert [m["role"] for m in messages] == ["system", "user", "user"]
    assert CLASS_SEMANTICS["documentation_update"] in messages[0]["content"]
    assert messages[1]["content"] == episodes["doc-01.p1.clean"].turns[0].content
    assert episode_messages(late.model_dump(), "neutral") == messages  # a plain dict works too
    uncertain = episode_messages(late, "uncertainty")
    assert UNCERTAINTY_CHECKLIST in uncertain[0]["content"] and UNCERTAINTY_CHECKLIST not in messages[0]["content"]
    assert uncertain[1:] == messages[1:]  # the conditions differ only in the system prompt
    with pytest.raises(ValueError):
        system_prompt("chatty", "triage_handoff")


@pytest.mark.parametrize(
    "text, action, provenance",
    [
        ("Escalate to the on-call physician: potassium 6.4 arrived after the request.", "ESCALATE", "reader"),
        ("I'm going to ask for clarification: which of the two weights is current?", "ASK_CLARIFICATION", "reader"),
        ('{"next_action": "escalate_to_registrar", "confidence": 0.7}', "ESCALATE", "reader"),
        ("<think>ESCALATE? maybe</think>\n{'action': 'ANSWER', 'confidence': 0.8,}", "ANSWER", "repaired"),
    ],
)
def test_prose_and_lenient_decisions(text, action, provenance):
    decision = read_in_full(text, action, None) if provenance == "reader" else parse_decision(text)
    assert decision.action == action and decision.provenance == ("agreement" if provenance == "reader" else provenance)


@pytest.mark.parametrize(
    "text, provenance",
    [
        ('{"action": "ANSWER" | "ASK_CLARIFICATION" | "ABSTAIN" | "ESCALATE", "confidence": <number from 0 to 1>}', "invalid"),
        ("", "invalid"),
        ('{"action": "ESCALATE"} or rather {"action": "ANSWER"}', "unreadable"),
        ("We should not escalate, and I will not abstain either.", "unreadable"),
        ('{"action": "ANSWER_OR_ESCALATE"}', "unreadable"),
    ],
)
def test_invalid_and_ambiguous_decisions_are_not_read(text, provenance):
    decision = parse_decision(text)
    assert decision.action is None and not decision.parse_ok and decision.provenance == provenance


def test_a_template_reason_next_to_a_real_action_is_read_as_no_reason():
    decision = parse_decision('{"action": "ESCALATE", "confidence": 0.9, "reason": "<one or two sentences>"}')
    assert decision.action == "ESCALATE" and decision.reason == "" and decision.provenance == "json"
