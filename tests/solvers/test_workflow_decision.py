"""`workflow_decision` on its own: one decision per user turn, in a conversation under the condition's system prompt."""

import json

import pytest
from inspect_ai import Task, eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.solvers.workflow import (
    ACTION_DEFINITIONS,
    SYSTEM_PROMPTS,
    UNCERTAINTY_CHECKLIST,
    WorkflowDecisions,
    parse_decision,
    workflow_decision,
)
from clinical_cf.tasks.workflow.workflow import workflow


def multi_turn_samples(n: int = 3):
    samples = [s for s in workflow().dataset if len(s.metadata["turns"]) > 1][:n]
    assert samples, "the bundled episodes include multi-turn ones"
    return samples


def run_alone(samples, solver, respond):
    seen: list[list[str]] = []

    def model(messages, tools, tool_choice, config) -> ModelOutput:
        seen.append([m.role for m in messages])
        out = ModelOutput.from_content("mockllm/model", respond(messages, config))
        out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
        return out

    log = eval(Task(dataset=samples, solver=solver), model=get_model("mockllm/model", custom_outputs=model), display="none")[0]
    assert log.status == "success", log.error
    return log, seen


def test_every_turn_gets_a_decision_and_the_conversation_carries_over():
    samples = multi_turn_samples()

    def respond(messages, config):
        # Asks on the first turn, then escalates once more information has arrived.
        turn = sum(1 for m in messages if m.role == "user")
        if turn == 1:
            return "Action: ask for clarification\nConfidence: 55%"
        return json.dumps({"action": "escalate", "confidence": 0.85, "reason": "new information"})

    log, seen = run_alone(samples, workflow_decision(json_schema=False), respond)
    for sample in log.samples:
        decisions = sample.store_as(WorkflowDecisions).decisions
        assert len(decisions) == len(sample.metadata["turns"])
        assert decisions[0]["action"] == "ASK_CLARIFICATION" and decisions[0]["confidence"] == pytest.approx(0.55)
        assert decisions[-1]["action"] == "ESCALATE" and decisions[-1]["confidence"] == pytest.approx(0.85)
        assert [m.role for m in sample.messages][:2] == ["system", "user"]
        assert sum(1 for m in sample.messages if m.role == "assistant") == len(decisions)
    # A later turn sees the earlier turns and replies: the episode is one conversation.
    assert max(len(roles) for roles in seen) >= 4


@pytest.mark.parametrize("condition", ["neutral", "uncertainty"])
def test_condition_sets_the_system_prompt_and_schema_is_sent_when_asked(condition):
    [sample] = multi_turn_samples(1)
    schemas = []

    def respond(messages, config):
        schemas.append(config.response_schema)
        return json.dumps({"action": "ANSWER", "confidence": 0.7, "reason": "routine"})

    log, _ = run_alone([sample], workflow_decision(condition=condition), respond)
    system = log.samples[0].messages[0].text
    assert SYSTEM_PROMPTS[condition].startswith("{definitions}") and system.startswith(ACTION_DEFINITIONS[:80])
    assert (UNCERTAINTY_CHECKLIST in system) == (condition == "uncertainty")
    assert all(schema is not None and schema.name == "workflow_decision" for schema in schemas)


def test_an_unreadable_reply_is_recorded_as_unparsed_not_guessed():
    [sample] = multi_turn_samples(1)
    log, _ = run_alone([sample], workflow_decision(json_schema=False), lambda messages, config: "Hmm, hard to say.")
    for decision in log.samples[0].store_as(WorkflowDecisions).decisions:
        assert decision["action"] is None and decision["raw"] == "Hmm, hard to say."


def test_unknown_condition_is_refused():
    with pytest.raises(ValueError, match="condition must be one of"):
        workflow_decision(condition="anxious")


def test_a_looping_reason_does_not_invalidate_a_stated_action():
    looping = "The potassium is 6.9 mmol/L and the potassium is 6.9. " * 10
    decision = parse_decision('{"action": "ESCALATE", "confidence": 0.8, "reason": "' + looping + '"}')
    assert (decision.action, decision.confidence, decision.reason, decision.invalid) == ("ESCALATE", 0.8, "", None)


@pytest.mark.parametrize(
    "reply, action",
    [("Escalate!", "ESCALATE"), ("  abstain.", "ABSTAIN"), ("Ask clarification", "ASK_CLARIFICATION"),
     ("Escalate?", None), ("Escalate now", None), ("Do not escalate", None), ("escalate, answer", None)],
)
def test_a_reply_that_is_only_an_action_name_states_it_and_nothing_else_does(reply, action):
    assert parse_decision(reply).action == action
