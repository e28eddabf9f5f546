"""Workflow solver: the decision parser on messy outputs and the pure episode rendering."""

import pytest

from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.solvers.workflow import (
    CLASS_SEMANTICS,
    UNCERTAINTY_CHECKLIST,
    episode_messages,
    normalise_action,
    parse_confidence,
    parse_decision,
    system_prompt,
)


@pytest.mark.parametrize(
    "text, action, confidence, method",
    [
        ('{"action": "ESCALATE", "confidence": 0.9, "reason": "red flag"}', "ESCALATE", 0.9, "json"),
        ('```json\n{"action": "ask clarification", "confidence": "80%", "reason": "dose missing"}\n```', "ASK_CLARIFICATION", 0.8, "json"),
        ('Sure! Here is my decision:\n{"Action": "Escalate", "Confidence": "0.75"}\nThanks.', "ESCALATE", 0.75, "json"),
        ('{"decision": {"action": "ask_for_clarification", "confidence": 65}}', "ASK_CLARIFICATION", 0.65, "json"),
        ('{"action": "ANSWER", "reason": "routine"}', "ANSWER", None, "json"),
        ('{"action": "abstain", "confidence": "high"}', "ABSTAIN", None, "json"),
        ('<think>maybe ANSWER? no</think>{"action": "ESCALATE", "confidence": 1}', "ESCALATE", 1.0, "json"),
        ('{"note": "x"} then {"action": "Ask-Clarification", "confidence": 0.4}', "ASK_CLARIFICATION", 0.4, "json"),
        ("Action: Escalate\nConfidence: 0.7\nThe patient is hypotensive.", "ESCALATE", 0.7, "keyword"),
        ("**ESCALATE**\n\nThis is a red flag.", "ESCALATE", None, "keyword"),
        ("Final decision: ask clarification", "ASK_CLARIFICATION", None, "keyword"),
        # Cut off by max_tokens inside the reason: the action field is complete, the object is not.
        ('{"action": "ANSWER","confidence":0.5,"reason":"The potassium is 5.7 mmol/L; the potassium is 5.7', "ANSWER", 0.5,
         "partial_json"),
        ('```json\n{\n  "decision": "escalate",\n  "reason": "hypotension after the handoff and', "ESCALATE", None, "partial_json"),
    ],
)
def test_parse_messy_outputs(text, action, confidence, method):
    decision = parse_decision(text)
    assert decision.parse_ok and decision.action == action and decision.method == method
    assert decision.confidence == (pytest.approx(confidence) if confidence is not None else None)


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
    assert parse_confidence("0.8") == 0.8 and parse_confidence("80%") == 0.8 and parse_confidence(80) == 0.8
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
        ("Escalate to the on-call physician: potassium 6.4 arrived after the request.", "ESCALATE", "prose"),
        ("I'm going to ask for clarification: which of the two weights is current?", "ASK_CLARIFICATION", "prose"),
        ('{"next_action": "escalate_to_registrar", "confidence": 0.7}', "ESCALATE", "json"),
        ("<think>ESCALATE? maybe</think>\n{'action': 'ANSWER', 'confidence': 0.8,}", "ANSWER", "repaired"),
    ],
)
def test_prose_and_lenient_decisions(text, action, provenance):
    decision = parse_decision(text)
    assert decision.action == action and decision.provenance == provenance


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
