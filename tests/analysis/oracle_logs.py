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

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.model import ModelOutput as Output

from clinical_cf.tasks.css_agent.css_agent import css_agent
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d
from clinical_cf.tasks.medpic.medpic import medpic
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from clinical_cf.tasks.workflow.workflow import workflow

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

    task = medpic(populations="pregnancy")
    samples = list(task.dataset)
    gf = [s for s in samples if s.metadata["kind"] == "gf"][:GF_N]
    pair_ids = sorted({s.metadata["pair_id"] for s in samples if s.metadata["kind"] == "cf" and s.metadata["pair_id"]})[:PAIRS]
    cf = [s for s in samples if s.metadata["kind"] == "cf" and s.metadata["pair_id"] in pair_ids]
    return gf + cf


def medpic_logs(folder: Path) -> dict[str, str]:
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
    log = eval(sensitivity(), model=get_model("mockllm/steady", custom_outputs=steady),
               sample_id=[s.id for s in sensitivity_selection()], display="none", log_dir=str(folder / "sensitivity"))[0]
    assert log.status == "success", log.error
    return log.location


# ------------------------------------------------------------------ the lab walkthrough (issue 38)
#
# Behaviours a lab's folder holds besides clean sweeps, every one written by a real Inspect run:
#
#   css/alternating   its reply format cycles per call: JSON, repaired JSON, an answer line, prose
#                     (unreadable); it always moves. Parse quality must count both arms of its verdicts.
#   css/flaky         provider errors on every pancreas counterfactual (fail_on_error=False: the sample is
#                     logged with its error and no score; the entry is scored on one case of two) and one
#                     reply whose usage crosses the sample token limit (logged with `limit`, still scored by Inspect).
#   css/rerun         a complete run (moves everywhere), then a newer rerun that crashed part-way
#                     (log status `error`, some samples complete, one errored, the rest cancelled).
#   agent/overview    a ReAct agent that reads only `overview` (which every intervention touches) and
#   agent/procedures  one that reads `procedures` (the changed fact) and never updates.
#   medpic/alternate  two epochs; on every CF pair, right on one member in epoch 1 and on the other in
#                     epoch 2 (the seed paper's pair accuracy: 0).
#   workflow/flaky    provider errors on some episodes (fail_on_error=False).
#   other/            an unrelated Inspect task (no suite), a CSS log run with --no-score, and a log whose
#                     eval metadata names a suite the project does not have ("CSS").

WALK_FORMATS = ("json", "repaired", "field", "prose")
WALK_FAIL_SITE = "other"
"""The flaky model's every counterfactual call on the pancreas case (site "other") raises a provider error."""
WALK_LIMIT_CALL = 1
"""The flaky model's recommendation call whose reported usage crosses the sample token limit."""
WALK_TOKEN_LIMIT = 1000


def formatted(items: list[str], style: str) -> str:
    if style == "json":
        return recommendations(items)
    if style == "repaired":
        return recommendations(items)[:-1] + ",}"  # a trailing comma: JSON that needs repair
    if style == "field":
        return "RECOMMENDED: " + "; ".join(items)
    return "I would discuss " + " and ".join(items) + " with the patient."  # prose: no list can be read


@dataclass
class WalkModel:
    """`CSSModel` behaviours plus a reply format per call, provider errors and an over-limit reply."""

    behaviour: str
    baselines: set[str]
    styles: tuple[str, ...] = ("json",)
    errors: tuple[int, ...] = ()
    fail_site: str | None = None
    """Every counterfactual call on this case site ("breast" / "other") raises a provider error."""
    over_limit: int | None = None
    inner: CSSModel | None = None
    calls: int = 0
    log: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.inner = CSSModel(self.behaviour, self.baselines)

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        out = self.inner(messages, tools, tool_choice, config)
        if SUMMARY_MARK in messages[-1].text:
            return out
        self.calls += 1
        if self.calls in self.errors:
            raise RuntimeError(f"provider error on call {self.calls}")
        if self.fail_site and f"(counterfactual, {self.fail_site})" in messages[-1].text:
            raise RuntimeError(f"provider error on a {self.fail_site} counterfactual")
        items = json.loads(out.completion)["recommendations"]
        style = self.styles[(self.calls - 1) % len(self.styles)]
        text = formatted([i["treatment"] for i in items], style)
        result = reply(f"mockllm/{self.behaviour}", text, MODEL_USAGE)
        if self.calls == self.over_limit:
            result.usage = usage((WALK_TOKEN_LIMIT * 5, 4))
        return result


def _css_eval(folder: Path, name: str, model, judge: str = "strict", **kwargs):
    cases = str(Path(__file__).parents[1] / "fixtures" / "css_cases_handwritten.jsonl")
    task = css_family_d(cases=cases, unreviewed="allow", reader="none")  # the scripted judge reads no replies
    controls = {str(s.metadata["expected_change"]) for s in task.dataset if s.metadata["family"] == "N"}
    role = get_model(f"mockllm/{judge}", custom_outputs=Judge(judge, controls))
    return eval(task, model=get_model(f"mockllm/{name}", custom_outputs=model), model_roles={"judge": role},
                display="none", log_dir=str(folder), max_samples=1, **kwargs)[0]


def css_baselines() -> set[str]:
    cases = str(Path(__file__).parents[1] / "fixtures" / "css_cases_handwritten.jsonl")
    return {str(s.metadata["baseline_packet"]).strip() for s in css_family_d(cases=cases, unreviewed="allow").dataset}


def walkthrough_css(folder: Path) -> dict[str, list[str]]:
    """{behaviour: [log paths, oldest first]} of the walkthrough's CSS runs (single-shot, judge `strict`)."""
    baselines = css_baselines()
    out: dict[str, list[str]] = {}
    log = _css_eval(folder / "css", "alternating", WalkModel("always", baselines, styles=WALK_FORMATS), epochs=2)
    assert log.status == "success", log.error
    out["alternating"] = [log.location]
    flaky = WalkModel("always", baselines, fail_site=WALK_FAIL_SITE, over_limit=WALK_LIMIT_CALL)
    log = _css_eval(folder / "css", "flaky", flaky, epochs=2, fail_on_error=False, token_limit=WALK_TOKEN_LIMIT)
    assert log.status == "success", log.error
    out["flaky"] = [log.location]
    first = _css_eval(folder / "css", "rerun", WalkModel("always", baselines), epochs=1)
    assert first.status == "success", first.error
    crashed = _css_eval(folder / "css", "rerun", WalkModel("never", baselines, errors=(3,)), epochs=1)
    assert crashed.status == "error" and crashed.samples, "the rerun must crash part-way with samples logged"
    out["rerun"] = [first.location, crashed.location]
    return out


def walkthrough_other(folder: Path) -> dict[str, str]:
    """An unrelated task's log, a CSS log written with --no-score and a log of a suite the project lacks."""

    out = {}
    plain = Task(dataset=[Sample(input="2+2?", target="4")], name="arithmetic")
    log = eval(plain, model=get_model("mockllm/other", custom_outputs=lambda *a: reply("mockllm/other", "4", MODEL_USAGE)),
               display="none", log_dir=str(folder / "other"))[0]
    out["unrelated"] = log.location
    foreign = Task(dataset=[Sample(input="2+2?", target="4")], name="css_lookalike", metadata={"suite": "CSS"})
    log = eval(foreign, model=get_model("mockllm/other", custom_outputs=lambda *a: reply("mockllm/other", "4", MODEL_USAGE)),
               display="none", log_dir=str(folder / "other"))[0]
    out["unknown_suite"] = log.location
    log = _css_eval(folder / "noscore", "unscored", WalkModel("always", css_baselines()), score=False, limit=2)
    out["no_score"] = log.location
    return out


AGENT_READS = {"overview": ["overview"], "procedures": ["procedures"]}


def agent_script(behaviour: str):
    """A ReAct agent that reads its sections, then submits the baseline recommendations (it never updates)."""

    def respond(messages, tools, tool_choice, config):
        reads = sum(1 for m in messages if m.role == "tool")
        sections = AGENT_READS[behaviour]
        if reads < len(sections):
            out = Output.for_tool_call(f"mockllm/{behaviour}", "read_chart_section", {"section": sections[reads]})
        else:
            out = Output.for_tool_call(f"mockllm/{behaviour}", "submit", json.loads(recommendations(BASE)))
        out.usage = usage(MODEL_USAGE)
        return out

    return respond


def walkthrough_agent(folder: Path) -> dict[str, str]:
    cases = str(Path(__file__).parents[1] / "fixtures" / "css_cases_handwritten.jsonl")
    out = {}
    for behaviour in AGENT_READS:
        task = css_agent(families="D", cases=cases, controls="none", unreviewed="allow", reader="none")
        role = get_model("mockllm/strict", custom_outputs=Judge("strict", set()))
        log = eval(task, model=get_model(f"mockllm/{behaviour}", custom_outputs=agent_script(behaviour)),
                   model_roles={"judge": role}, display="none", log_dir=str(folder / "agent"))[0]
        assert log.status == "success", log.error
        out[behaviour] = log.location
    return out


@dataclass
class AlternatingMedPIC:
    """Right on the first member of each CF pair in epoch 1 and on the second in epoch 2; right on GF."""

    questions: dict[str, dict]
    first: dict[str, str]
    seen: Counter = field(default_factory=Counter)

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        key = question_key(messages[-1].text)
        question = self.questions[key]
        self.seen[key] += 1
        epoch = self.seen[key]  # one call per question per epoch
        if question["kind"] == "gf":
            right = True
        else:
            is_first = self.first[question["pair_id"]] == key
            right = is_first == (epoch == 1)
        letters = question["answer"] if right else [question["wrong"]]
        return reply("mockllm/alternate", json.dumps({"rationale": "The rationale.", "answer": list(letters)}), MODEL_USAGE)


def walkthrough_medpic(folder: Path) -> str:
    chosen = medpic_selection()
    questions, first = {}, {}
    for s in chosen:
        meta = dict(s.metadata)
        meta["wrong"] = next(k for k in meta["options"] if k not in meta["answer"] and "None" not in meta["options"][k])
        questions[question_key(s.input)] = meta
        if meta["kind"] == "cf":
            first.setdefault(meta["pair_id"], question_key(s.input))
    log = eval(medpic(populations="pregnancy"), model=get_model("mockllm/alternate", custom_outputs=AlternatingMedPIC(questions, first)),
               sample_id=[s.id for s in chosen], epochs=2, display="none", log_dir=str(folder / "medpic"))[0]
    assert log.status == "success", log.error
    return log.location


WALK_WORKFLOW_ERRORS = (2, 5)
"""Workflow calls (1-based) that raise a provider error."""


def walkthrough_workflow(folder: Path) -> str:
    chosen = workflow_selection()
    episodes = {s.input: dict(s.metadata) for s in chosen}
    inner = WorkflowModel("right", episodes)
    calls = Counter()

    def flaky(messages, tools, tool_choice, config):
        calls["n"] += 1
        if calls["n"] in WALK_WORKFLOW_ERRORS:
            raise RuntimeError(f"provider error on call {calls['n']}")
        return inner(messages, tools, tool_choice, config)

    log = eval(workflow(task_class="triage_handoff"), model=get_model("mockllm/flaky", custom_outputs=flaky),
               sample_id=[s.id for s in chosen], display="none", log_dir=str(folder / "workflow"), fail_on_error=False,
               max_samples=1)[0]
    assert log.status == "success", log.error
    return log.location
