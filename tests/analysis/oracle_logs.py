"""The report's oracle: real Inspect logs of scripted models whose every number is known in closed form.

Everything here runs offline through `inspect_ai.eval` with `mockllm/model` custom outputs (each reply
carries a `usage`) and scripted judge roles; nothing is cloned or patched after the run, so the logs
are exactly what a lab's sweep would write. Tests (`test_oracle.py`) compute every expected cell from
the scripts below, never by calling the analysis code.

CSS (`css_family_d` on the four handwritten cases: tuples breast-D1, pancreas-D1 and the controls
breast-N3, pancreas-N2; two epochs). The baseline arm always recommends `FOLFOX, Radiation`; on the
counterfactual arm a model either *moves* (drops Radiation, adds Surgical evaluation) or repeats the
baseline:

    always   moves on every tuple
    never    never moves
    half     moves on the breast case's tuples only
    flaky    moves on the second call of each counterfactual conversation (one epoch of each tuple)

Judges read only the two data blocks: `strict` scores an interventional tuple 1 when the arms differ,
else 0, and a control 1 when they are the same, else 0; `lenient` gives 0.5 where strict gives 0.
Each model runs under both judges (8 logs), and `half` under `strict` has an earlier run (created
first, same model name and label) where it behaved like `never`: the report must replace it.

MedPIC (`medpic`, pregnancy population, GF_N guideline-following questions and PAIRS complete CF pairs):

    right    answers every question correctly
    gf_only  right on GF, a wrong option on CF
    wrong    a wrong option everywhere
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

SUMMARY_MARK = "Summarise the patient packet"
BASE = ["FOLFOX", "Radiation"]
MOVED = ["FOLFOX", "Surgical evaluation"]
CSS_MODELS = ("always", "never", "half", "flaky")
JUDGES = ("strict", "lenient")
MODEL_USAGE = (11, 4)  # input, output tokens of every model reply
JUDGE_USAGE = {"strict": (30, 3, 0.002), "lenient": (20, 2, None)}  # input, output, cost per call (None: not reported)
MEDPIC_MODELS = ("right", "gf_only", "wrong")
GF_N = 4
PAIRS = 2


def usage(tokens: tuple, cost: float | None = None) -> ModelUsage:
    return ModelUsage(input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=tokens[0] + tokens[1], total_cost=cost)


def reply(model: str, text: str, tokens: tuple, cost: float | None = None) -> ModelOutput:
    out = ModelOutput.from_content(model, text)
    out.usage = usage(tokens, cost)
    return out


def recommendations(items: list[str]) -> str:
    return json.dumps({"recommendations": [{"treatment": t, "rationale": "per guideline"} for t in items], "not_recommended": []})


def _packet(messages: list[ChatMessage]) -> str:
    text = "\n".join(m.text for m in messages if m.role == "user")
    found = re.search(r"<packet>\n?(.*?)\n?</packet>", text, re.S)
    return (found.group(1) if found else text).strip()


@dataclass
class CSSModel:
    """A scripted model under test: `behaviour` decides whether its counterfactual arm moves."""

    behaviour: str
    baselines: set[str]
    calls: Counter = field(default_factory=Counter)

    def __call__(self, messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        name = f"mockllm/{self.behaviour}"
        if SUMMARY_MARK in messages[-1].text:
            # Stage 2 sees only the summary (as in the CSS pipeline): the summary names the packet it read.
            packet = _packet(messages)
            arm = "baseline" if packet in self.baselines else "counterfactual"
            site = "breast" if "breast" in packet.lower() else "other"
            return reply(name, f"Summary of packet {_digest(packet)} ({arm}, {site}).", MODEL_USAGE)
        text = messages[-1].text
        key = _digest("\x1f".join(m.text for m in messages))
        self.calls[key] += 1
        if "(baseline," in text:
            return reply(name, recommendations(BASE), MODEL_USAGE)
        moves = {"always": True, "never": False, "half": "breast)" in text,
                 "flaky": self.calls[key] % 2 == 0}[self.behaviour]
        return reply(name, recommendations(MOVED if moves else BASE), MODEL_USAGE)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def data_blocks(prompt: str) -> dict[str, str]:
    return {name: body for name, _, body in re.findall(r"<<<([A-Z][A-Z ]*?) DATA (\w+)>>>\n(.*?)\n<<<END \1 DATA \2>>>", prompt, re.S)}


@dataclass
class Judge:
    strictness: str
    control_changes: set[str]

    def __call__(self, messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        prompt = messages[-1].text
        blocks = data_blocks(prompt)
        moved = blocks["BASELINE"] != blocks["COUNTERFACTUAL"]
        control = any(change in prompt for change in self.control_changes)
        right = (not moved) if control else moved
        miss = 0.0 if self.strictness == "strict" else 0.5
        score = 1.0 if right else miss
        *tokens, cost = JUDGE_USAGE[self.strictness]
        return reply(f"mockllm/{self.strictness}", json.dumps({"score": score, "rationale": f"{self.strictness}: moved={moved}"}),
                     tuple(tokens), cost)


def css_verdict(behaviour: str, judge: str, case: str, family: str, epoch_move: bool) -> float:
    """The closed-form verdict (the judge's script applied to the model's script), for the tests."""
    right = (not epoch_move) if family == "N" else epoch_move
    return 1.0 if right else (0.0 if judge == "strict" else 0.5)


def moves(behaviour: str, case: str) -> list[bool]:
    """Whether the counterfactual arm moved, per epoch (as a multiset: which epoch moved is the scheduler's)."""
    return {"always": [True, True], "never": [False, False], "half": [case.startswith("fx-breast")] * 2,
            "flaky": [True, False]}[behaviour]


def css_logs(folder: Path) -> dict[tuple[str, str], list[str]]:
    """Run the CSS sweep; {(behaviour, judge): [log paths, oldest first]}."""
    from inspect_ai import eval

    from clinical_cf.tasks.css_family_d.css_family_d import css_family_d

    cases = str(Path(__file__).parents[1] / "fixtures" / "css_cases_handwritten.jsonl")
    task = css_family_d(cases=cases, unreviewed="allow")  # record-less fixture cases: regex drafts by consent
    baselines = {str(s.metadata["baseline_packet"]).strip() for s in task.dataset}
    controls = {str(s.metadata["expected_change"]) for s in task.dataset if s.metadata["family"] == "N"}
    out: dict[tuple[str, str], list[str]] = {}

    def run(behaviour: str, judge: str, label: str, script: str | None = None) -> None:
        model = get_model(f"mockllm/{behaviour}", custom_outputs=CSSModel(script or behaviour, baselines))
        role = get_model(f"mockllm/{judge}", custom_outputs=Judge(judge, controls))
        log = eval(css_family_d(cases=cases, unreviewed="allow"), model=model, model_roles={"judge": role}, epochs=2, display="none",
                   log_dir=str(folder / label), tags=[label] if label != "main" else None)[0]
        assert log.status == "success", log.error
        out.setdefault((behaviour, judge), []).append(log.location)

    run("half", "strict", "main", script="never")  # the earlier run the rerun replaces
    for judge in JUDGES:
        for behaviour in CSS_MODELS:
            run(behaviour, judge, "main")
    return out


def question_key(prompt: str) -> str:
    """The vignette and options of a MedPIC prompt (the solver rewrites the closing instruction)."""
    return re.split(r"\n\n(?:Answer with|Reply with)", prompt)[0]


@dataclass
class MedPICModel:
    behaviour: str
    questions: dict[str, dict]

    def __call__(self, messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        question = self.questions[question_key(messages[-1].text)]
        right = self.behaviour == "right" or (self.behaviour == "gf_only" and question["kind"] == "gf")
        letters = question["answer"] if right else [question["wrong"]]
        text = json.dumps({"rationale": "The rationale.", "answer": list(letters)})
        return reply(f"mockllm/{self.behaviour}", text, MODEL_USAGE)


def medpic_selection():
    """The questions the MedPIC runs ask: GF_N GF questions and PAIRS complete CF pairs (pregnancy population)."""
    from clinical_cf.tasks.medpic.medpic import medpic

    task = medpic(populations="pregnancy")
    samples = list(task.dataset)
    gf = [s for s in samples if s.metadata["kind"] == "gf"][:GF_N]
    pair_ids = sorted({s.metadata["pair_id"] for s in samples if s.metadata["kind"] == "cf" and s.metadata["pair_id"]})[:PAIRS]
    cf = [s for s in samples if s.metadata["kind"] == "cf" and s.metadata["pair_id"] in pair_ids]
    return gf + cf


def medpic_logs(folder: Path) -> dict[str, str]:
    from inspect_ai import eval

    from clinical_cf.tasks.medpic.medpic import medpic

    chosen = medpic_selection()
    questions = {}
    for s in chosen:
        meta = dict(s.metadata)
        meta["wrong"] = next(k for k in meta["options"] if k not in meta["answer"] and "None" not in meta["options"][k])
        questions[question_key(s.input)] = meta
    out = {}
    for behaviour in MEDPIC_MODELS:
        model = get_model(f"mockllm/{behaviour}", custom_outputs=MedPICModel(behaviour, questions))
        log = eval(medpic(populations="pregnancy"), model=model, sample_id=[s.id for s in chosen], display="none",
                   log_dir=str(folder / "medpic"))[0]
        assert log.status == "success", log.error
        out[behaviour] = log.location
    return out


# ------------------------------------------------------------------ workflow

WORKFLOW_MODELS = {"right": None, "always_answer": ("ANSWER", 0.6), "always_escalate": ("ESCALATE", 0.8)}
"""`right` states each episode's reference action with confidence 0.9; the others one action throughout."""


def workflow_selection():
    """Single-turn test-split triage episodes whose prompt names exactly one episode (so a script can look it up)."""
    from collections import Counter

    from clinical_cf.tasks.workflow.workflow import workflow

    samples = [s for s in workflow(task_class="triage_handoff").dataset]
    seen = Counter(s.input for s in samples)
    return [s for s in samples if s.metadata["split"] == "test" and len(s.metadata.get("turns") or []) <= 1 and seen[s.input] == 1]


@dataclass
class WorkflowModel:
    behaviour: str
    episodes: dict[str, dict]

    def __call__(self, messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        fixed = WORKFLOW_MODELS[self.behaviour]
        if fixed is None:
            episode = next(meta for text, meta in self.episodes.items() if text in "\n".join(m.text for m in messages))
            action, confidence = episode["reference_action"], 0.9
        else:
            action, confidence = fixed
        return reply(f"mockllm/{self.behaviour}", json.dumps({"action": action, "confidence": confidence}), MODEL_USAGE)


def workflow_logs(folder: Path) -> dict[str, str]:
    from inspect_ai import eval

    from clinical_cf.tasks.workflow.workflow import workflow

    chosen = workflow_selection()
    episodes = {s.input: dict(s.metadata) for s in chosen}
    out = {}
    for behaviour in WORKFLOW_MODELS:
        model = get_model(f"mockllm/{behaviour}", custom_outputs=WorkflowModel(behaviour, episodes))
        log = eval(workflow(task_class="triage_handoff"), model=model, sample_id=[s.id for s in chosen], display="none",
                   log_dir=str(folder / "workflow"))[0]
        assert log.status == "success", log.error
        out[behaviour] = log.location
    return out


# ------------------------------------------------------------------ sensitivity

SENSITIVITY_PER_CELL = 2
"""Pairs per (perturbation type, expected direction) the sensitivity run asks."""


def sensitivity_selection():
    from clinical_cf.tasks.sensitivity.sensitivity import sensitivity

    chosen, seen = [], {}
    for s in sensitivity().dataset:
        key = (s.metadata["type"], s.metadata["expected"])
        if seen.get(key, 0) < SENSITIVITY_PER_CELL:
            seen[key] = seen.get(key, 0) + 1
            chosen.append(s)
    return chosen


def steady(messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
    """A model whose answer never depends on the vignette: 0.55 on the first option, the rest shared equally."""
    letters = re.findall(r"^([A-F])\) ", messages[-1].text, re.M)
    rest = 0.45 / (len(letters) - 1)
    return reply("mockllm/steady", json.dumps({x: (0.55 if i == 0 else rest) for i, x in enumerate(letters)}), MODEL_USAGE)


def sensitivity_logs(folder: Path) -> str:
    from inspect_ai import eval

    from clinical_cf.tasks.sensitivity.sensitivity import sensitivity

    log = eval(sensitivity(), model=get_model("mockllm/steady", custom_outputs=steady),
               sample_id=[s.id for s in sensitivity_selection()], display="none", log_dir=str(folder / "sensitivity"))[0]
    assert log.status == "success", log.error
    return log.location
