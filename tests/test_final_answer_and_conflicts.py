"""Issue 29: the final answer (reasoning removed by one rule), one answer or none, strict schemas, and the
structural verification of reader quotes. Each test states the rule a user would notice."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import solver

from clinical_cf.replies import (
    REASONING_TAG_NAMES,
    final_answer,
    had_reasoning,
    is_conflict,
    read_flag,
    read_score,
    resolve_reader,
    verify_quote,
)
from clinical_cf.solvers.css import read_recommendations, verify_css_reading
from clinical_cf.solvers.medpic import read_answer, verify_medpic_reading
from clinical_cf.solvers.sensitivity import read_distribution_reading, verify_distribution_reading
from clinical_cf.solvers.workflow import parse_decision, verify_workflow_reading
from helpers import MockModel

VALID = (0.0, 0.5, 1.0)


@pytest.mark.parametrize(
    "reply",
    [
        "<think>ANSWER: B</think>ANSWER: A",  # DeepSeek-R1, Qwen3, QwQ
        "<thinking>ANSWER: B</thinking>\nANSWER: A",  # Claude-style
        "<thought>ANSWER: B</thought>ANSWER: A",  # Gemini / Gemma
        "<reasoning>ANSWER: B</reasoning>ANSWER: A",
        "<reflection>ANSWER: B</reflection>ANSWER: A",
        "<scratchpad>ANSWER: B</scratchpad>ANSWER: A",
        "<seed:think>ANSWER: B</seed:think>ANSWER: A",  # ByteDance Seed
        "[THINK]ANSWER: B[/THINK]ANSWER: A",  # Mistral Magistral
        "<|begin_of_thought|>ANSWER: B<|end_of_thought|><|begin_of_solution|>ANSWER: A<|end_of_solution|>",  # OpenThoughts
        "\u25c1think\u25b7ANSWER: B\u25c1/think\u25b7ANSWER: A",  # Kimi
        "ANSWER: B</think>ANSWER: A",  # the opening tag was in the chat template
        "<|channel|>analysis<|message|>ANSWER: B<|end|><|start|>assistant<|channel|>final<|message|>ANSWER: A<|return|>",  # gpt-oss
        "Draft: ANSWER: B\nThe CrCl rules B out.\nFinal answer:\nANSWER: A",  # untagged draft before a final-answer line
        "<|START_THINKING|>ANSWER: B<|END_THINKING|><|START_RESPONSE|>ANSWER: A<|END_RESPONSE|>",  # Cohere Command A
        "Steps: ANSWER: B?\n[BEGIN FINAL RESPONSE]\nANSWER: A\n[END FINAL RESPONSE]",  # Apriel
        "analysisThe user asks. ANSWER: B.assistantfinalANSWER: A",  # gpt-oss channels leaked as text
    ],
)
def test_every_reasoning_format_is_removed_and_the_final_answer_read(reply):
    assert final_answer(reply).endswith("ANSWER: A") and "ANSWER: B" not in final_answer(reply)
    assert read_answer(reply, {"A": "Warfarin", "B": "Aspirin"}).letters == {"A"}


@pytest.mark.parametrize(
    "reply",
    [
        "<|channel|>analysis<|message|>ANSWER: A, let me also check",  # cut off in the analysis channel
        "<think>ANSWER: A",  # cut off while thinking
        "[THINK]ANSWER: A",
        "<seed:think>ANSWER: A",
        "<|begin_of_thought|>ANSWER: A",
        "analysisThe user asks about CrCl. ANSWER: A",  # a leaked analysis channel with no final channel
    ],
)
def test_a_reply_that_never_leaves_its_reasoning_has_no_final_answer(reply):
    assert final_answer(reply) == "" and had_reasoning(reply)
    assert read_answer(reply, {"A": "Warfarin", "B": "Aspirin"}).letters is None


def test_the_documented_tag_names_are_the_ones_removed():
    for name in REASONING_TAG_NAMES:
        assert final_answer(f"<{name}>draft</{name}>kept") == "kept", name


OPTIONS = {"A": "Glyburide", "B": "Linagliptin", "C": "Metformin", "D": "None of the above"}


@pytest.mark.parametrize(
    "reply",
    [
        "ANSWER: A\nThe eGFR is 45.\nANSWER: D",  # two answer lines
        '{"rationale": "x", "answer": ["A", "B"]}\nOn reflection: only A.',  # JSON then a prose correction
        '{"rationale": "x", "answer": ["A"]}\nANSWER: C',  # JSON and an answer line that disagree
    ],
)
def test_two_answers_are_conflicting_and_unreadable_never_one_picked(reply):
    reading = read_answer(reply, OPTIONS)
    assert reading.letters is None and is_conflict(reading.reason) and len(reading.conflict) >= 2


def test_conflicts_in_every_reader():
    assert is_conflict(read_recommendations('{"recommendations": ["A"], "not_recommended": []}\nCorrection: give B.').reason)
    assert is_conflict(read_recommendations("RECOMMENDED: X\nNOT RECOMMENDED: none\nmore\nRECOMMENDED: Y").reason)
    assert is_conflict(parse_decision('{"action": "ANSWER", "confidence": 0.9, "reason": "r"}\nACTION: ESCALATE').unreadable_reason)
    assert is_conflict(read_distribution_reading("A: 0.5\nB: 0.5\n\nnow\nA: 0.2\nB: 0.8", ["X", "Y"]).reason)
    assert is_conflict(read_score("Score: 1\nThe list kept the old drug.\nRevised score: 0.5", VALID).reason)
    assert is_conflict(read_score('{"score": 1, "rationale": "ok"}\nWait, this should be 0.', VALID).reason)
    assert is_conflict(read_flag('{"mentions": true}\nCorrection: mentions: false', "mentions").reason)
    # two statements of the same answer are one answer
    assert read_answer("**Answer: B**\n\nVerapamil interacts.\n\n**Answer: B**", OPTIONS).letters == {"B"}


def test_the_retry_prompts_example_copied_is_no_verdict():
    reading = read_score('{"score": 0.5, "rationale": "..."} This deserves full credit.', VALID)
    assert not reading.ok and "example" in reading.reason


def test_strict_schemas_leave_no_room():
    # a field of its own (a polarity) in an item, or a rationale that rejects it: not read as recommended
    assert read_recommendations('{"recommendations": [{"treatment": "A", "rationale": "r", "strength": "against"}], '
                                '"not_recommended": []}').provenance == "unreadable"
    assert read_recommendations('{"recommendations": [{"treatment": "Olaparib", "rationale": "Do not add: BRCA negative."}], '
                                '"not_recommended": []}').provenance == "unreadable"
    assert parse_decision('{"action": "ANSWER", "confidence": 0.8, "reason": "r", "escalate": true}').action is None
    # a "none"-like item is no item
    reading = read_recommendations('{"recommendations": ["Surveillance"], "not_recommended": [{"treatment": "None", "rationale": ""}]}')
    assert [r.treatment for r in reading.recommendations] == ["Surveillance"] and reading.not_recommended == []


HEADED = "### Proposed\n- Gemcitabine plus cisplatin\n\n### Do not use\n- Sunitinib"


@pytest.mark.parametrize(
    "final, quote, item, polarity, accepted",
    [
        (HEADED, "Sunitinib", "Sunitinib", "positive", False),  # negation in the enclosing heading
        (HEADED, "Sunitinib", "Sunitinib", "negative", True),
        (HEADED, "Gemcitabine plus cisplatin", "Gemcitabine plus cisplatin", "positive", True),
        ('[recommended]\nfirst = "A-drug"\n\n[not_recommended]\nfirst = "B-drug"', 'first = "B-drug"', "B-drug", "positive", False),
        ("- [x] Radiotherapy\n- [ ] Lobectomy", "Lobectomy", "Lobectomy", "positive", False),  # unchecked box
        ('{"recommendations": ["Nivolumab"], "not_recommended": ["Vemurafenib"]}', '"not_recommended": ["Vemurafenib"]',
         "Vemurafenib", "positive", False),  # the JSON key around the value
        ("Recomendado:\n- Cirurgia\nNão recomendado:\n- Mastectomia", "Mastectomia", "Mastectomia", "positive", False),
        ("I'll likely recommend pembrolizumab later.", "recommend pembrolizumab", "pembrolizumab", "positive", False),  # hedged
        ("Guidelines list trastuzumab and pertuzumab.", "pertuzumab", "pertuzumab", "positive", False),  # general
        ("We recommend FOLFOX.\nCorrection: not FOLFOX.", "We recommend FOLFOX", "FOLFOX", "positive", False),  # revised after
        ("| Option | Recommend? |\n|---|---|\n| Alpelisib | No |", "Alpelisib", "Alpelisib", "positive", False),  # table cell
        ("We recommend FOLFOX.", "recommend FOLFOX", "FOLFOX", "positive", True),
        ("We recommend FOLFOXIRI.", "recommend FOLFOX", "FOLFOX", "positive", False),  # not a whole-token span
    ],
)
def test_structural_verification_of_a_quote(final, quote, item, polarity, accepted):
    assert (verify_quote(quote, final, item, polarity) == "") is accepted


def test_lying_readings_of_letters_actions_and_numbers_are_refused():
    options = {"A": "Amitriptyline", "B": "Trazodone", "C": "Sertraline"}
    reply = "Amitriptyline should be avoided. Trazodone is not on the Beers list. ANSWER: A"
    assert verify_medpic_reading({"answer": [{"letter": "B", "quote": "Trazodone"}]}, reply, options)[0] is None
    assert verify_medpic_reading({"answer": [{"letter": "A", "quote": "ANSWER: A"}]}, reply, options)[0] == {"A"}
    # An echoed option list states no selection; no structural check proves or refuses that any more (issue 37: the
    # selecting-word list only proved readings): the independent second reader's reading is what refuses it.
    echoed = "Options considered:\nA. Amitriptyline\nB. Trazodone\nANSWER: A"
    assert verify_medpic_reading({"answer": [{"letter": "B", "quote": "B. Trazodone"}]}, echoed, options)[0] == {"B"}
    # a one-letter quote must hold the capital letter where something selects it
    article = "A tricyclic is a poor choice here. Answer: A"
    assert verify_medpic_reading({"answer": [{"letter": "C", "quote": "a"}]}, article, options)[0] is None
    assert verify_workflow_reading({"action": {"value": "ESCALATE", "quote": "escalate"}},
                                   "There is no need to escalate; I will complete the update.")[0] is None
    assert verify_workflow_reading({"action": {"value": "ANSWER", "quote": "ANSWER"}}, "- [ ] ANSWER\n- [x] ESCALATE")[0] is None
    assert verify_workflow_reading({"action": {"value": "ESCALATE", "quote": "ESCALATE"}}, "- [ ] ANSWER\n- [x] ESCALATE")[0] == "ESCALATE"
    # "0.8" is not a whole-token span of "0.85"
    lie = {"probabilities": [{"candidate": "A", "probability": 0.8, "quote": "A: 0.8"}, {"candidate": "B", "probability": 0.2,
                                                                                         "quote": "B: 0.15"}]}
    assert verify_distribution_reading(lie, "A: 0.85\nB: 0.15", ["X", "Y"])[0] is None


def test_a_flagged_reader_may_read_only_the_revision_the_reply_marks():
    reply = "RECOMMENDED: Sotorasib\nNOT RECOMMENDED: Docetaxel\nOn reflection, I would give adagrasib instead of sotorasib."
    data = {"recommendations": [{"treatment": "Sotorasib", "quote": "RECOMMENDED: Sotorasib"}], "not_recommended": []}
    assert verify_css_reading(data, reply, conflict=True)[2]  # the earlier answer is refused
    plain = "ANSWER: A\nANSWER: D"
    assert verify_medpic_reading({"answer": [{"letter": "D", "quote": "ANSWER: D"}]}, plain, OPTIONS, conflict=True)[0] is None
    marked = "ANSWER: B\nRevised answer: A (fluoroquinolone with methadone)."
    assert verify_medpic_reading({"answer": [{"letter": "A", "quote": "Revised answer: A"}]}, marked, OPTIONS, conflict=True)[0] == {"A"}


def _resolved(**roles) -> str:
    @solver
    def which():
        async def solve(state, generate):
            state.output.completion = str(resolve_reader("reader"))
            return state
        return solve

    model = MockModel("mockllm/model", lambda p: "x").model
    bound = {k: (model if v == "under_test" else get_model(v)) for k, v in roles.items()}
    log = eval(Task(dataset=[Sample(input="x")], solver=which()), model=model, model_roles=bound, display="none")[0]
    return log.samples[0].output.completion


@pytest.mark.slow  # four tiny evals
def test_the_reader_is_opt_in_and_never_the_model_under_test():
    assert _resolved() == "None"  # nothing bound: no reader (the reply is unreadable), not the model itself
    assert _resolved(judge="mockllm/judge") == "mockllm/judge"  # the judge reads, with no second reader: unconfirmed
    # the judge is the second reader when another model reads (issue 37: a reading counts when both agree) ...
    assert _resolved(reader="mockllm/reader", judge="mockllm/judge") == "mockllm/reader + mockllm/judge"
    # ... unless a second reader role is bound
    assert _resolved(reader="mockllm/reader", second_reader="mockllm/second", judge="mockllm/judge") == "mockllm/reader + mockllm/second"
    assert _resolved(reader="under_test") == "None"
    assert _resolved(reader="mockllm/reader", second_reader="under_test") == "mockllm/reader"  # never the model under test


def test_corpus_v3_has_no_silent_misread_no_accepted_lie_and_no_crash():
    """The issue-29 corpus (bench/replies_v3.py): 0 read into a value not stated, 0 lying readings accepted."""

    path = Path(__file__).resolve().parents[1] / "bench" / "replies_v3.py"
    spec = importlib.util.spec_from_file_location("replies_v3_bench", path)
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    outcomes = bench.evaluate()
    assert len(outcomes) >= 100 and {o.suite for o in outcomes} == {"css", "agent", "medpic", "workflow", "sensitivity", "judge"}
    assert not [o.id for o in outcomes if o.verdict in ("silent", "crash")]
    assert not [o.id for o in outcomes if o.lie_accepted]
    assert sum(o.verdict == "right" for o in outcomes) / len(outcomes) >= 0.95
    assert sum(o.conflict for o in outcomes) >= 10  # conflicting answers are counted apart


def test_prose_that_contradicts_the_json_is_a_conflict():
    assert is_conflict(parse_decision('{"action": "ANSWER", "confidence": 0.7, "reason": "r"}\nThis needs escalation now.').unreadable_reason)
    assert read_answer("Digoxin is the problem, so the answer is A.\n\\boxed{B}", OPTIONS).letters is None
    assert is_conflict(read_answer("Digoxin is the problem, so the answer is A.\n\\boxed{B}", OPTIONS).reason)
    options = {"A": "Nitrofurantoin", "B": "Fosfomycin"}
    assert verify_medpic_reading({"answer": [{"letter": "A", "quote": "Nitrofurantoin"}]}, "ANSWER: B (nitrofurantoin)", options)[0] is None


def test_a_json_field_stated_twice_is_not_its_last_value():
    assert parse_decision('{"action": "ANSWER", "action": "ESCALATE", "confidence": 0.8, "reason": "x"}').action is None
    assert read_score('{"score": 1, "score": 0, "rationale": "x"}', VALID).value is None


def test_boxed_final_answer_and_explanation_after_the_answer_line():
    options = {"A": "Warfarin", "B": "Apixaban", "C": "Aspirin"}
    assert read_answer("Final Answer: \\boxed{A}", options).letters == {"A"}
    assert read_answer("ANSWER: C\nExplanation: aspirin adds bleeding risk.", options).letters == {"C"}
