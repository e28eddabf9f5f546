"""A seeded generator of replies (issue 44): one decision per suite rendered in many formats, and mutated.

    .venv/bin/python tests/reply_formats.py [--seeds N] [--show]

For each suite (CSS recommendations, MedPIC answer sets, workflow action + confidence, sensitivity
distributions, judges' verdicts) `decision(suite, rng)` draws one decision and `render(...)` writes it in
every format of `FORMATS` (JSON with and without fences, extra keys, lists, markdown tables, answer lines,
emoji bullets, citation markers, HTML and entities, LaTeX wrappers, serialised provider output, reasoning
preambles, other languages). `mutations(...)` writes the same reply with its value changed after or inside
it (a negation in four languages, an item struck, a JSON Patch, a second object, "on reflection", a
revised score or confidence in prose, `...` elisions). Entries have the form of the reader benchmark's
corpora (`bench/replies_v3.py`), so they are read in the full order with its scripted reader pairs:
faithful + faithful, lying + faithful, the same lie told by both.

`evaluate(entries)` counts, per suite and over all, the columns of issue 44's table: read right,
unreadable counted, correct reading refused, read into a value the reply does not state (a format read to
another value, or a mutated reply read to its original value), a lie accepted with one honest reader, the
same lie accepted from both readers; and for CSS and judges whether the judge's data block is byte-identical
across the formats of one plan.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import importlib.util
import json
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinical_cf.solvers.css import judge_block, read_arm

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("replies_v3_generated", ROOT / "bench" / "replies_v3.py")
bench = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
sys.modules["replies_v3_generated"] = bench
_SPEC.loader.exec_module(bench)  # type: ignore[union-attr]

SUITES = ("css", "medpic", "workflow", "sensitivity", "judge")

# Treatment names with characters that formats change: '+' (an HTML entity), a hyphen, a slash, a digit.
TREATMENTS = (
    "Pembrolizumab", "Carboplatin + pemetrexed", "Docetaxel", "Osimertinib", "Stereotactic radiotherapy",
    "Best supportive care", "Nivolumab + ipilimumab", "Gemcitabine", "5-FU/leucovorin", "Lobectomy",
    "Durvalumab consolidation", "Trastuzumab deruxtecan",
)
OPTION_TEXTS = (
    "Stop the NSAID", "Add a proton-pump inhibitor", "Reduce the dose of digoxin", "Switch warfarin to apixaban",
    "Check potassium in 1 week", "Continue the current regimen",
)
DIAGNOSES = ("Pulmonary embolism", "Pneumonia", "Heart failure", "COPD exacerbation", "Pericarditis")
ACTIONS = ("ANSWER", "ASK_CLARIFICATION", "ABSTAIN", "ESCALATE")
PREAMBLES = (
    "<think>The patient is stable; weigh the options first. Maybe docetaxel? No.</think>\n",
    "Let me think about this step by step. The history matters here.\n\nFinal answer:\n",
    "<reasoning>Reviewing the chart and the guideline.</reasoning>\n",
)


# ----------------------------------------------------------------------------- decisions


def decision(suite: str, rng: random.Random) -> dict[str, Any]:
    """One decision of `suite`, drawn from `rng`: the value a faithful reading returns, and its context."""
    if suite == "css":
        names = rng.sample(TREATMENTS, rng.randint(2, 4))
        k = rng.randint(1, min(3, len(names) - 1))
        return {"recommended": names[:k], "not_recommended": names[k:]}
    if suite == "medpic":
        n = rng.randint(4, 5)
        letters = "ABCDE"[:n]
        options = dict(zip(letters, rng.sample(OPTION_TEXTS, n), strict=True))
        chosen = sorted(rng.sample(letters, rng.randint(1, 2)))
        return {"options": options, "answer": chosen}
    if suite == "workflow":
        return {"action": rng.choice(ACTIONS), "confidence": rng.choice((0.6, 0.7, 0.75, 0.8, 0.9, 0.95))}
    if suite == "sensitivity":
        n = rng.randint(3, 4)
        cuts = sorted(rng.sample(range(1, 20), n - 1))
        parts = [b - a for a, b in zip([0, *cuts], [*cuts, 20], strict=True)]
        return {"candidates": list(rng.sample(DIAGNOSES, n)), "probs": [p * 5 / 100 for p in parts]}
    return {"score": rng.choice((0.0, 0.5, 1.0)), "kind": "score"}


def truth_of(suite: str, d: dict[str, Any]) -> Any:
    if suite == "css":
        return {"recommended": d["recommended"], "not_recommended": d["not_recommended"]}
    if suite == "medpic":
        return d["answer"]
    if suite == "workflow":
        return {"action": d["action"], "confidence": d["confidence"]}
    if suite == "sensitivity":
        return d["probs"]
    return d["score"]


# ----------------------------------------------------------------------------- formats


def _num(x: float) -> str:
    return f"{x:g}"


def _css_json(d: dict, extra: bool = False) -> str:
    def item(t: str, why: str) -> dict:
        return {"treatment": t, "rationale": why, **({"priority": 1} if extra else {})}
    return json.dumps({"recommendations": [item(t, "supported by the guideline") for t in d["recommended"]],
                       "not_recommended": [item(t, "less benefit in this setting") for t in d["not_recommended"]]}, ensure_ascii=False)


def _css_lines(d: dict, wrap: Callable[[str], str] = lambda t: t) -> str:
    lines = ["RECOMMENDED: " + "; ".join(wrap(t) for t in d["recommended"])]
    if d["not_recommended"]:
        lines.append("NOT RECOMMENDED: " + "; ".join(wrap(t) for t in d["not_recommended"]))
    return "\n".join(lines)


def css_formats(d: dict) -> dict[str, str]:
    rec, avoid = d["recommended"], d["not_recommended"]
    lines = _css_lines(d)
    return {
        "json": _css_json(d),
        "json_fenced": "Here is my answer.\n\n```json\n" + json.dumps(json.loads(_css_json(d)), indent=2, ensure_ascii=False) + "\n```",
        "json_extra_key": _css_json(d, extra=True),
        "answer_lines": lines,
        "markdown_list": "**Recommended**\n" + "\n".join(f"- {t}" for t in rec) + "\n\n**Not recommended**\n"
                         + "\n".join(f"- {t}" for t in avoid),
        "markdown_table": "| Treatment | Decision |\n|---|---|\n" + "\n".join(f"| {t} | Recommended |" for t in rec)
                          + "\n" + "\n".join(f"| {t} | Not recommended |" for t in avoid),
        "emoji_bullets": "RECOMMENDED: " + "; ".join(f"✅ {t}" for t in rec) + "\nNOT RECOMMENDED: " + "; ".join(f"❌ {t}" for t in avoid),
        "citations": "RECOMMENDED: " + "; ".join(f"{t} [{i}]" for i, t in enumerate(rec, 1))
                     + "\nNOT RECOMMENDED: " + "; ".join(f"{t}【4:{i}†source】" for i, t in enumerate(avoid)),
        "html_entities": "<p>RECOMMENDED: " + "; ".join(html.escape(t).replace("+", "&#43;").replace(" ", "&nbsp;", 1) for t in rec)
                         + "</p>\n<p>NOT RECOMMENDED: " + "; ".join(html.escape(t).replace("+", "&plus;") for t in avoid) + "</p>",
        "latex": _css_lines(d, lambda t: f"$\\text{{{t}}}$"),
        "serialised_json_string": json.dumps(lines),
        "serialised_repr": repr(lines),
        "preamble": PREAMBLES[len(rec) % len(PREAMBLES)] + lines,
        "french": "Recommandé :\n" + "\n".join(f"- {t}" for t in rec) + "\n\nNon recommandé :\n" + "\n".join(f"- {t}" for t in avoid),
    }


def medpic_formats(d: dict) -> dict[str, str]:
    letters, options = d["answer"], d["options"]
    line = "ANSWER: " + ", ".join(letters)
    return {
        "json": json.dumps({"rationale": "per the interaction tables", "answer": letters}),
        "json_fenced": "```json\n" + json.dumps({"rationale": "per the tables", "answer": letters}, indent=2) + "\n```",
        "json_extra_key": json.dumps({"rationale": "per the tables", "answer": letters, "confidence": "high"}),
        "answer_lines": line,
        "markdown_bold": "**Answer:** " + " and ".join(f"**{x}**" for x in letters),
        "markdown_table": "| Option | Selected |\n|---|---|\n" + "\n".join(f"| {x} | {'yes' if x in letters else 'no'} |" for x in options),
        "emoji_bullets": "\n".join(f"✅ {x}. {options[x]}" for x in letters) + "\n\n" + line,
        "citations": line + " [1][2]",
        "html_entities": "<p>ANSWER:&nbsp;" + ",&#32;".join(f"<b>{x}</b>" for x in letters) + "</p>",
        "latex": "ANSWER: $\\boxed{\\text{" + ", ".join(letters) + "}}$",
        "serialised_json_string": json.dumps("Reviewing the options.\n" + line),
        "serialised_repr": repr("Reviewing the options.\n" + line),
        "preamble": PREAMBLES[0] + line,
        "german": "Antwort: " + ", ".join(letters),
    }


def workflow_formats(d: dict) -> dict[str, str]:
    a, c = d["action"], d["confidence"]
    line = f"ACTION: {a}, CONFIDENCE: {_num(c)}"
    return {
        "json": json.dumps({"action": a, "confidence": c}),
        "json_fenced": "```json\n" + json.dumps({"action": a, "confidence": c}, indent=2) + "\n```",
        "json_extra_key": json.dumps({"action": a, "confidence": c, "priority": "routine"}),
        "answer_lines": line,
        "markdown_bold": f"**ACTION:** {a}, **CONFIDENCE:** {_num(c)}",
        "markdown_table": f"| Action | Confidence |\n|---|---|\n| {a} | {_num(c)} |",
        "emoji_bullets": f"📌 {line}",
        "citations": f"{line} [1]",
        "html_entities": f"<p>ACTION:&nbsp;{a},&#32;CONFIDENCE:&nbsp;{_num(c)}</p>",
        "latex": f"ACTION: \\text{{{a}}}, CONFIDENCE: ${_num(c)}$",
        "serialised_json_string": json.dumps("Checked the request.\n" + line),
        "serialised_repr": repr("Checked the request.\n" + line),
        "preamble": PREAMBLES[1] + line,
    }


def sensitivity_formats(d: dict) -> dict[str, str]:
    probs, names = d["probs"], d["candidates"]
    letters = "ABCDEF"[: len(probs)]
    mapping = {x: p for x, p in zip(letters, probs, strict=True)}
    lines = "\n".join(f"{x}: {_num(p)}" for x, p in mapping.items())
    return {
        "json": json.dumps(mapping),
        "json_fenced": "```json\n" + json.dumps(mapping, indent=2) + "\n```",
        "answer_lines": lines,
        "percent_lines": "\n".join(f"{x}: {round(p * 100)}%" for x, p in mapping.items()),
        "markdown_table": "| Candidate | Probability |\n|---|---|\n" + "\n".join(f"| {x} | {_num(p)} |" for x, p in mapping.items()),
        "emoji_bullets": "\n".join(f"🔹 {x}: {_num(p)}" for x, p in mapping.items()),
        "citations": "\n".join(f"{x}: {_num(p)} [{i}]" for i, (x, p) in enumerate(mapping.items(), 1)),
        "html_entities": "\n".join(f"<p>{x}:&nbsp;{_num(p)}</p>" for x, p in mapping.items()),
        "latex": "\n".join(f"{x}: ${_num(p)}$" for x, p in mapping.items()),
        "serialised_json_string": json.dumps(lines),
        "serialised_repr": repr(lines),
        "preamble": PREAMBLES[2] + lines,
        "names_prose": "\n".join(f"- {n} ({x}): {_num(p)}" for n, (x, p) in zip(names, mapping.items(), strict=True)),
    }


def judge_formats(d: dict) -> dict[str, str]:
    s = _num(d["score"])
    return {
        "json": json.dumps({"score": d["score"], "rationale": "the lists moved as expected"}),
        "json_fenced": "```json\n" + json.dumps({"score": d["score"], "rationale": "as expected"}) + "\n```",
        "answer_lines": f"The change is handled.\nScore: {s}",
        "markdown_bold": f"**Verdict:** {s}",
        "citations": f"Score: {s} [1]",
        "html_entities": f"<p>Score:&nbsp;{s}</p>",
        "latex": f"Score: ${s}$",
        "serialised_json_string": json.dumps(f"Compared both lists.\nScore: {s}"),
        "serialised_repr": repr(f"Compared both lists.\nScore: {s}"),
        "preamble": PREAMBLES[0] + f"Score: {s}",
    }


# Transformations that keep a reply's meaning (what gateways, renderers and copy-paste do to text): composed on
# any format, they must not change its reading.
_FULLWIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "json_string": json.dumps,
    "python_repr": repr,
    "content_blocks": lambda t: json.dumps([{"type": "text", "text": t}]),
    "preamble": lambda t: PREAMBLES[1] + t,
    "think_block": lambda t: PREAMBLES[0] + t,
    "zero_width": lambda t: "\n".join(("\u200b" + line) if line else line for line in t.split("\n")),
    "fullwidth": lambda t: t.translate(_FULLWIDTH),
    "nbsp": lambda t: t.replace(" ", "\u00a0"),
    "colon_entities": lambda t: t.replace(":", "&#58;"),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "trailing_spaces": lambda t: "\n".join(line + "  " for line in t.split("\n")),
}


def compose(reply: str, names: list[str]) -> str:
    """`reply` through the named transformations, in order."""
    for name in names:
        reply = TRANSFORMS[name](reply)
    return reply


FORMATTERS: dict[str, Callable[[dict], dict[str, str]]] = {
    "css": css_formats, "medpic": medpic_formats, "workflow": workflow_formats, "sensitivity": sensitivity_formats,
    "judge": judge_formats,
}


# ----------------------------------------------------------------------------- mutations


NEGATIONS = {"english": "{t}: do not give", "japanese": "{t}は使用しない", "french": "{t} : ne pas utiliser",
             "german": "{t} nicht geben"}


def css_mutations(d: dict) -> dict[str, tuple[str, Any]]:
    """Replies whose value is no longer `d` (or never was complete), each with the value it must not read to."""
    rec, avoid = d["recommended"], d["not_recommended"]
    original = truth_of("css", d)
    first = rec[0]
    moved = {"recommended": rec[1:] or [avoid[0]], "not_recommended": [first, *avoid[1:]] if rec[1:] else [first]}
    out: dict[str, tuple[str, Any]] = {}
    for lang, pattern in NEGATIONS.items():
        out[f"negation_{lang}"] = (_css_lines({"recommended": [pattern.format(t=first), *rec[1:]], "not_recommended": avoid}), original)
    out["struck"] = (_css_lines({"recommended": [f"~~{first}~~", *rec[1:]], "not_recommended": avoid}), original)
    out["json_patch_remove"] = (_css_json(d) + '\n\nJSON Patch:\n[{"op": "remove", "path": "/recommendations/0"}]', original)
    out["second_object"] = (_css_json(d) + "\n\n" + _css_json(moved), original)
    out["on_reflection"] = (_css_lines(d) + f"\n\nOn reflection, I would not give {first} after all.", original)
    out["on_reflection_second"] = (_css_lines(d) + f"\n\nOn reflection, {first} should not be given.", original)
    elided = json.loads(_css_json({"recommended": rec[:1], "not_recommended": avoid}))
    elided["recommendations"].append("...")
    out["json_elision"] = (json.dumps(elided), {"recommended": rec[:1], "not_recommended": avoid})
    out["trailing_ellipsis_line"] = (_css_lines(d) + "\n...", None)  # '...' alone ends nothing: never a mutation of value
    out.pop("trailing_ellipsis_line")
    return out


def medpic_mutations(d: dict) -> dict[str, tuple[str, Any]]:
    letters = d["answer"]
    original = truth_of("medpic", d)
    last = letters[-1]
    other = next(x for x in d["options"] if x not in letters)
    line = "ANSWER: " + ", ".join(letters)
    return {
        "negation_english": (line + f"\n\nNote: {last} is not correct.", original),
        "negation_japanese": (line + f"\n\n{last}は選ばない。", original),
        "negation_french": (line + f"\n\nJe ne choisis pas {last}.", original),
        "negation_german": (line + f"\n\n{last} ist nicht richtig.", original),
        "struck": ("ANSWER: " + ", ".join([*letters[:-1], f"~~{last}~~"]), original),
        "second_object": (json.dumps({"rationale": "x", "answer": letters}) + "\n" + json.dumps({"rationale": "y", "answer": [other]}), original),
        "on_reflection": (line + f"\n\nOn reflection, the answer is {other}.", original),
        "json_patch_replace": (json.dumps({"rationale": "x", "answer": letters})
                               + f'\n[{{"op": "replace", "path": "/answer", "value": ["{other}"]}}]', original),
    }


def workflow_mutations(d: dict) -> dict[str, tuple[str, Any]]:
    a, c = d["action"], d["confidence"]
    original = truth_of("workflow", d)
    other = next(x for x in ACTIONS if x != a)
    line = f"ACTION: {a}, CONFIDENCE: {_num(c)}"
    return {
        "confidence_lowered_note": (line + "\n\nNote: having reread the request, my confidence is lower, about 0.4.", original),
        "confidence_revised_json": (json.dumps({"action": a, "confidence": c}) + "\n\nRevised confidence: 0.3", original),
        "action_revised": (line + f"\n\nOn reflection, {other} is the right action.", original),
        "second_object": (json.dumps({"action": a, "confidence": c}) + "\n" + json.dumps({"action": other, "confidence": c}), original),
        "negation_german": (line + f"\n\n{a} ist nicht richtig.", original),
        "negation_japanese": (line + f"\n\n{a}は選ばない。", original),
        "json_patch_replace": (json.dumps({"action": a, "confidence": c})
                               + f'\n[{{"op": "replace", "path": "/action", "value": "{other}"}}]', original),
    }


def sensitivity_mutations(d: dict) -> dict[str, tuple[str, Any]]:
    probs = d["probs"]
    original = truth_of("sensitivity", d)
    letters = "ABCDEF"[: len(probs)]
    mapping = {x: p for x, p in zip(letters, probs, strict=True)}
    i, j = next(((i, j) for i in range(len(probs)) for j in range(i + 1, len(probs)) if probs[i] != probs[j]), (0, 1))
    order = list(range(len(probs)))
    order[i], order[j] = j, i
    swapped = dict(zip(letters, [probs[k] for k in order], strict=True))
    lines = "\n".join(f"{x}: {_num(p)}" for x, p in mapping.items())
    return {
        "second_object": (json.dumps(mapping) + "\n" + json.dumps(swapped), original),
        "on_reflection": (lines + f"\n\nOn reflection, A should be {_num(probs[1])} and B {_num(probs[0])}.", original),
        "revised_prose": (json.dumps(mapping) + f"\n\nRevised: B is more likely than that, {_num(min(0.9, probs[1] + 0.2))}.", original),
        "json_patch_replace": (json.dumps(mapping) + f'\n[{{"op": "replace", "path": "/A", "value": {_num(probs[1])}}}]', original),
    }


def judge_mutations(d: dict) -> dict[str, tuple[str, Any]]:
    s = d["score"]
    other = 0.5 if s != 0.5 else 1.0
    return {
        "prose_revision": (json.dumps({"score": s, "rationale": "moved"}) + "\n\nOn reflection, half credit is fairer."
                           if s != 0.5 else json.dumps({"score": s, "rationale": "moved"}) + "\n\nOn reflection, full credit is fairer.", s),
        "second_object": (json.dumps({"score": s, "rationale": "a"}) + "\n" + json.dumps({"score": other, "rationale": "b"}), s),
        "revised_line": (f"Score: {_num(s)}\n\nActually the score should be {_num(other)}.", s),
        "max_score": (json.dumps({"score": 1, "max_score": 2, "rationale": "half the changes"}), 1.0),
    }


MUTATORS: dict[str, Callable[[dict], dict[str, tuple[str, Any]]]] = {
    "css": css_mutations, "medpic": medpic_mutations, "workflow": workflow_mutations, "sensitivity": sensitivity_mutations,
    "judge": judge_mutations,
}

# The named cases of issue 44 (found by hand in the v4/v5 blind corpora), as seeds: reply, suite context, forbidden value.
NAMED: list[dict[str, Any]] = [
    {"id": "named-json-patch", "suite": "css", "forbidden": {"recommended": ["Pembrolizumab", "Docetaxel"], "not_recommended": []},
     "reply": '{"recommendations": [{"treatment": "Pembrolizumab", "rationale": "PD-L1 high"}, {"treatment": "Docetaxel", '
              '"rationale": "second line"}], "not_recommended": []}\n\n[{"op": "remove", "path": "/recommendations/1"}]'},
    {"id": "named-japanese-negation", "suite": "css", "forbidden": {"recommended": ["Pembrolizumab", "Docetaxel"], "not_recommended": []},
     "reply": "RECOMMENDED: Pembrolizumab; Docetaxelは使用しない"},
    {"id": "named-elision", "suite": "css", "forbidden": {"recommended": ["Pembrolizumab"], "not_recommended": ["Docetaxel"]},
     "reply": '{"recommendations": [{"treatment": "Pembrolizumab", "rationale": "first line"}, ...], '
              '"not_recommended": [{"treatment": "Docetaxel", "rationale": "later"}, ...]}'},
    {"id": "named-judge-half-credit", "suite": "judge", "kind": "score", "forbidden": 1.0,
     "reply": '{"score": 1, "rationale": "the lists moved"}\n\nHalf credit is fairer, since only one item moved.'},
    {"id": "named-confidence-lowered", "suite": "workflow", "forbidden": {"action": "ESCALATE", "confidence": 0.9},
     "reply": "ACTION: ESCALATE, CONFIDENCE: 0.9\n\nLater note: my confidence is lower than that, say 0.5."},
    {"id": "named-second-object", "suite": "css", "forbidden": {"recommended": ["Pembrolizumab"], "not_recommended": []},
     "reply": '{"recommendations": [{"treatment": "Pembrolizumab", "rationale": "a"}], "not_recommended": []}\n'
              '{"recommendations": [{"treatment": "Docetaxel", "rationale": "b"}], "not_recommended": [{"treatment": "Pembrolizumab", "rationale": "c"}]}'},
    {"id": "named-max-score", "suite": "judge", "kind": "score", "forbidden": 1.0, "reply": '{"score": 1, "max_score": 2}'},
    {"id": "named-rubric-echo", "suite": "judge", "kind": "score", "forbidden": 1.0,
     "reply": "The rubric says: Score: 1 if the lists moved as expected, 0 if not.\nThe lists did not move."},
    {"id": "named-critical-error", "suite": "judge", "kind": "process", "forbidden": {"score": 0.0, "critical_error": False},
     "reply": "Score: 0\nCritical error: yes — the agent dosed carboplatin without a creatinine clearance."},
]


# ----------------------------------------------------------------------------- entries


def entry_context(suite: str, d: dict) -> dict[str, Any]:
    if suite == "medpic":
        return {"options": d["options"]}
    if suite == "sensitivity":
        return {"candidates": d["candidates"]}
    if suite == "judge":
        return {"kind": d.get("kind", "score")}
    return {}


COMPOSED_PER_PLAN = 6
"""Composed formats per plan: a random format through 1-3 random `TRANSFORMS`."""


def generate(seeds: range, suites: tuple[str, ...] = SUITES) -> tuple[list[dict], list[dict]]:
    """(format entries, mutation entries) for decisions drawn with `random.Random(seed)`, one per suite and seed."""
    formats, mutants = [], []
    for seed in seeds:
        for suite in suites:
            d = decision(suite, random.Random(f"{suite}-{seed}"))
            ctx = entry_context(suite, d)
            for name, reply in FORMATTERS[suite](d).items():
                formats.append({"id": f"{suite}-{seed}-{name}", "plan": f"{suite}-{seed}", "suite": suite, "format": name,
                                "reply": reply, "truth": truth_of(suite, d), **ctx})
            for name, (reply, forbidden) in MUTATORS[suite](d).items():
                mutants.append({"id": f"{suite}-{seed}-{name}", "suite": suite, "format": name, "reply": reply,
                                "truth": "conflicting", "forbidden": forbidden, **ctx})
            rng = random.Random(f"compose-{suite}-{seed}")
            base = FORMATTERS[suite](d)
            for _ in range(COMPOSED_PER_PLAN):
                name = rng.choice(sorted(base))
                chain = rng.sample(sorted(TRANSFORMS), rng.randint(1, 3))
                formats.append({"id": f"{suite}-{seed}-{name}+{'+'.join(chain)}", "plan": f"{suite}-{seed}", "suite": suite,
                                "format": f"{name}+{'+'.join(chain)}", "reply": compose(base[name], chain),
                                "truth": truth_of(suite, d), **ctx})
    for named in NAMED:
        ctx = {"kind": named["kind"]} if "kind" in named else {}
        mutants.append({**named, "format": named["id"], "truth": "conflicting", **ctx})
    return formats, mutants


# ----------------------------------------------------------------------------- evaluation


@dataclass
class Counts:
    right: int = 0
    unreadable: int = 0
    refused: int = 0
    silent: int = 0
    lie: int = 0
    both: int = 0
    crash: int = 0
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def note(self, column: str, text: str) -> None:
        self.examples[column].append(text)


def _pair(entry: dict, mode: str, reading: dict | None = None, second: str | None = None) -> tuple:
    return (bench.ScriptedReader(entry, mode, reading), bench.ScriptedReader(entry, second or mode, reading, name="-2"))


def judge_body(entry: dict) -> str | None:
    """The CSS judge's data block for `entry` read in the full order with a faithful reader pair (None when unread)."""
    arm = asyncio.run(read_arm(bench.expand(entry["reply"]), reader=_pair(entry, "faithful")))
    if arm.provenance in ("unreadable", "invalid"):
        return None
    return judge_block(arm, "ARM", "TAG")


def read_format(entry: dict, counts: Counts, lies: bool = True) -> Any:
    """Read one format entry and count it; returns the value read (or 'unreadable')."""
    reader = _pair(entry, "faithful") if entry["suite"] != "judge" else None
    got = bench.read_entry(entry, reader)
    verdict = bench.classify(entry, got)
    setattr(counts, verdict, getattr(counts, verdict) + 1)
    if verdict != "right":
        counts.note(verdict, f"{entry['id']}: {got.reason or got.value}"[:200])
    if lies and entry["suite"] != "judge" and not got.crashed:
        probe = bench.ScriptedReader(entry, "hedging")
        bench.read_entry(entry, (probe, bench.ScriptedReader(entry, "hedging", name="-2")))
        if probe.calls:
            _count_lies(entry, probe.calls[0], counts)
    return got.value


def valueless_lies(entry: dict, shown: str) -> list[dict]:
    """Wrong readings whose quotes do not contain the value they support (ABSTAIN quoting "event: done"; a letter
    quoting a line without it; an item quoting another line): what two colluding readers may agree on."""
    lines = [ln.strip() for ln in shown.splitlines() if ln.strip()]
    truth, suite = bench.stated(entry), entry["suite"]
    out: list[dict] = []
    if not lines or truth is None:
        return out
    if suite == "workflow":
        for action in ACTIONS:
            if action != truth["action"]:
                quote = next((ln for ln in lines if action.lower() not in ln.lower()), lines[0])
                out.append({"action": {"value": action, "quote": quote}})
    elif suite == "medpic":
        for letter in entry["options"]:
            if letter not in truth:
                quote = next((ln for ln in lines if letter not in ln), lines[0])
                out.append({"answer": [{"letter": letter, "quote": quote}]})
    elif suite == "css":
        wrong = truth["not_recommended"][:1]
        if wrong:
            quote = next((ln for ln in lines if wrong[0].lower() not in ln.lower()), lines[0])
            out.append({"recommendations": [{"treatment": wrong[0], "quote": quote}], "not_recommended": []})
    return out


def _count_lies(entry: dict, shown: str, counts: Counts) -> None:
    value = bench.stated(entry)
    one = both = False
    for lie in [*bench.lies(entry, shown), *valueless_lies(entry, shown)]:
        for flag, pair in (("one", _pair(entry, "lying", lie, "faithful")), ("both", _pair(entry, "lying", lie))):
            if (one if flag == "one" else both):
                continue
            got = bench.read_entry(entry, pair)
            if got.value in ("unreadable", "invalid") or got.provenance not in ("reader", "agreement"):
                continue
            if value is None or not bench.same(entry, got.value, value):
                if flag == "one":
                    one = True
                    counts.note("lie", f"{entry['id']}: {lie}"[:200])
                else:
                    both = True
                    counts.note("both", f"{entry['id']}: {lie}"[:200])
    counts.lie += one
    counts.both += both


def read_mutant(entry: dict, counts: Counts) -> Any:
    """Read a mutated reply with readers that decline it and with both readers reading the forbidden value; a reading
    equal to the forbidden value is `silent` (contract or declining readers) or `both` (two readers' same lie)."""
    forbidden = entry["forbidden"]
    reader = _pair(entry, "hedging") if entry["suite"] != "judge" else None
    got = bench.read_entry(entry, reader)
    if got.crashed:
        counts.crash += 1
        counts.note("crash", f"{entry['id']}: {got.reason}")
        return got.value
    if got.value not in ("unreadable", "invalid") and bench.same(entry, got.value, forbidden):
        counts.silent += 1
        counts.note("silent", f"{entry['id']}: read {got.value} ({got.provenance})")
    else:
        counts.right += 1
    if entry["suite"] != "judge" and reader is not None and reader[0].calls:
        lie = bench.faithful_reading({**entry, "truth": forbidden}, reader[0].calls[0])
        both = bench.read_entry(entry, _pair(entry, "lying", lie))
        if both.value not in ("unreadable", "invalid") and both.provenance in ("reader", "agreement") \
                and bench.same(entry, both.value, forbidden):
            counts.both += 1
            counts.note("both", f"{entry['id']}: {lie}"[:200])
    return got.value


def judge_identity(formats: list[dict]) -> tuple[int, int, list[str]]:
    """(plans whose readable formats gave one identical judge block, plans compared, differing examples)."""
    blocks: dict[str, dict[str, str]] = defaultdict(dict)
    for entry in formats:
        if entry["suite"] == "css":
            body = judge_body(entry)
            if body is not None:
                blocks[entry["plan"]][entry["format"]] = body
    same, differ = 0, []
    for plan, by_format in blocks.items():
        distinct = Counter(by_format.values())
        if len(distinct) == 1:
            same += 1
        else:
            common = distinct.most_common(1)[0][0]
            odd = [f for f, b in by_format.items() if b != common]
            differ.append(f"{plan}: {', '.join(odd)} differ, e.g. {by_format[odd[0]].splitlines()[1:3]}")
    return same, len(blocks), differ


def evaluate(seeds: range, lies: bool = True) -> dict[str, Any]:
    formats, mutants = generate(seeds)
    per_suite: dict[str, Counts] = defaultdict(Counts)
    mutated: dict[str, Counts] = defaultdict(Counts)
    for entry in formats:
        read_format(entry, per_suite[entry["suite"]], lies)
    for entry in mutants:
        read_mutant(entry, mutated[entry["suite"]])
    same, plans, differ = judge_identity(formats)
    return {"formats": per_suite, "mutants": mutated, "judge_identity": (same, plans, differ), "n": (len(formats), len(mutants))}


def _table(title: str, counts: dict[str, Counts], columns: tuple[str, ...]) -> list[str]:
    lines = [title, f"{'suite':<12}" + "".join(f"{c:>11}" for c in columns)]
    total = Counts()
    for suite in SUITES:
        c = counts.get(suite)
        if c is None:
            continue
        lines.append(f"{suite:<12}" + "".join(f"{getattr(c, col):>11}" for col in columns))
        for col in columns:
            setattr(total, col, getattr(total, col) + getattr(c, col))
    lines.append(f"{'all':<12}" + "".join(f"{getattr(total, col):>11}" for col in columns))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--show", action="store_true", help="print the entries behind every count other than right")
    parser.add_argument("--no-lies", action="store_true")
    args = parser.parse_args(argv)
    result = evaluate(range(args.seeds), lies=not args.no_lies)
    n_formats, n_mutants = result["n"]
    print(f"{n_formats} format replies, {n_mutants} mutated replies, seeds 0..{args.seeds - 1}")
    print("\n".join(_table("formats (one decision, many formats)", result["formats"],
                           ("right", "unreadable", "refused", "silent", "lie", "both", "crash"))))
    print("\n".join(_table("mutations (silent: read to the value the mutation took away)", result["mutants"],
                           ("right", "silent", "both", "crash"))))
    same, plans, differ = result["judge_identity"]
    print(f"judge data block identical across the readable formats of a plan: {same} of {plans} CSS plans")
    if args.show:
        for title, group in (("formats", result["formats"]), ("mutants", result["mutants"])):
            for suite, c in group.items():
                for col, texts in c.examples.items():
                    for text in texts:
                        print(f"  [{title} {suite} {col}] {text}")
        for text in differ:
            print(f"  [judge block] {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
