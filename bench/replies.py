"""Reply-reading benchmark: the fixture corpus of replies in real model families' styles, read by
the suites' own parsers, tallied per suite and format.

    .venv/bin/python bench/replies.py [--corpus tests/fixtures/replies] [--show]

Each corpus entry has the reply and its expected reading. A reading is
- `ok`: as expected (the same items, letters, action, distribution or verdict; or invalid /
  unreadable where that is expected);
- `missed`: unreadable or invalid where a value was expected (a reply lost, but no number invented);
- `silent`: a value that differs from the expected one, or a value where none was expected:
  a wrong number. The target is 0 `silent`; since issue 29's structural verification about 90 % of the
  fixtures are `ok` (faithful readings the verification refuses are `missed`, counted). The issue-29
  corpus and its lying / hedging readers are in `bench/replies_v3.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.model import ModelOutput

from clinical_cf.replies import (
    final_answer,
    has_negative_cue,
    letter_in_quote,
    negated_near,
    number_grounded,
    read_flag,
    read_score,
    words_of,
)
from clinical_cf.scorers.css_judge import VALID_SCORES
from clinical_cf.solvers.css import read_recommendations, read_recommendations_with_reader
from clinical_cf.solvers.medpic import read_answer, read_answer_with_reader
from clinical_cf.solvers.sensitivity import LETTERS, read_distribution, read_distribution_with_reader
from clinical_cf.solvers.workflow import ACTION_STEMS, parse_decision, parse_decision_with_reader

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "replies"
SUITES = ("css", "medpic", "workflow", "sensitivity", "judge")


@dataclass(frozen=True)
class Outcome:
    suite: str
    id: str
    style: str
    format: str
    verdict: str  # ok, missed, silent
    got: Any
    expected: Any
    step: str = ""  # the reading step (provenance) that produced `got`


NOT_READ = ("invalid", "unreadable")


def status(got: Any, expected: Any) -> str:
    """ok / missed / silent for a reading `got` ("invalid", "unreadable" or a value) against `expected`.

    Invalid where unreadable was expected (or the reverse) is `missed`: no number came out, but
    the reply was not classed as expected.
    """
    if isinstance(expected, str) and expected in NOT_READ:
        if got == expected:
            return "ok"
        return "missed" if got in NOT_READ else "silent"
    if got in NOT_READ:
        return "missed"
    return "ok" if got == expected else "silent"


def _read_css(entry: dict) -> tuple[Any, Any]:
    reading = _run(read_recommendations_with_reader(entry["reply"], _reader(entry, "css")))
    expected = entry["expected"]
    _STEP[0] = reading.provenance
    if reading.provenance in ("invalid", "unreadable"):
        return reading.provenance, expected
    if isinstance(expected, str):
        return {"recommended": [r.treatment for r in reading.recommendations],
                "not_recommended": [r.treatment for r in reading.not_recommended]}, expected

    def matches(names: list[str], read: list[str]) -> bool:
        # Every expected option named by exactly one read item, and no read item left over.
        if len(names) != len(read):
            return False
        used: set[int] = set()
        for name in names:
            hits = [i for i, text in enumerate(read) if name.lower() in text.lower() and i not in used]
            if not hits:
                return False
            used.add(hits[0])
        return True

    read_pos = [r.treatment for r in reading.recommendations]
    read_neg = [r.treatment for r in reading.not_recommended]
    same = matches(expected.get("recommended") or [], read_pos) and matches(expected.get("not_recommended") or [], read_neg)
    got = {"recommended": read_pos, "not_recommended": read_neg}
    return (expected if same else got), expected


def _read_medpic(entry: dict) -> tuple[Any, Any]:
    reading = _run(read_answer_with_reader(entry["reply"], entry["options"], _reader(entry, "medpic")))
    _STEP[0] = reading.provenance
    if reading.provenance in ("invalid", "unreadable"):
        return reading.provenance, entry["expected"]
    expected = entry["expected"]
    return sorted(reading.letters or []), (sorted(expected) if isinstance(expected, list) else expected)


def _read_workflow(entry: dict) -> tuple[Any, Any]:
    decision = _run(parse_decision_with_reader(entry["reply"], _reader(entry, "workflow")))
    _STEP[0] = decision.provenance
    if decision.provenance in ("invalid", "unreadable"):
        return decision.provenance, entry["expected"]
    got = {"action": decision.action, "confidence": None if decision.confidence is None else round(decision.confidence, 4)}
    return got, entry["expected"]


def _read_sensitivity(entry: dict) -> tuple[Any, Any]:
    reading = _run(read_distribution_with_reader(entry["reply"], entry["candidates"], _reader(entry, "sensitivity")))
    probs, provenance = reading.probs, reading.provenance
    _STEP[0] = provenance
    if probs is None:
        return provenance, entry["expected"]
    return [round(p, 2) for p in probs], entry["expected"]


def _read_judge(entry: dict) -> tuple[Any, Any]:
    if entry["kind"] == "mention":
        reading = read_flag(entry["reply"], "mentions")
        _STEP[0] = reading.provenance
        return (reading.value if reading.ok else reading.provenance), entry["expected"]
    reading = read_score(entry["reply"], VALID_SCORES)
    _STEP[0] = reading.provenance
    if not reading.ok:
        return reading.provenance, entry["expected"]
    if entry["kind"] == "process":
        critical = read_flag(entry["reply"], "critical_error").value
        if critical is None:
            _STEP[0] = "unreadable"
            return "unreadable", entry["expected"]
        return {"score": reading.value, "critical_error": critical}, entry["expected"]
    return reading.value, entry["expected"]


_STEP = [""]  # the provenance of the last reading, set by each reader above
USE_READER = [True]  # `--no-reader`: steps (a)-(c) only
READER_MODE = ["faithful"]  # `--reader-mode swapped`: a reader that misreads on purpose
READER_CALLS = [0]


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


class ScriptedReader:
    """A faithful reader role, scripted: it answers the reader prompt with what a careful human
    reads from the reply (the corpus entry's `expected`), quoting the reply's own words for each
    value (the clause or line that states it). Its readings then go through the same deterministic
    verification as a real reader's, so a reading the grounding cannot confirm is still rejected."""

    def __init__(self, entry: dict, suite: str, mode: str | None = None, name: str = "bench/scripted-reader") -> None:
        self.entry, self.suite, self.mode, self.name = entry, suite, mode, name

    def __str__(self) -> str:
        return self.name

    async def generate(self, prompt: str, config: Any = None, cache: Any = None) -> Any:
        READER_CALLS[0] += 1
        final = final_answer(GENERATED.get(self.entry["reply"], self.entry["reply"]))
        expected = self.entry["expected"]
        if isinstance(expected, str) and expected in NOT_READ:
            data: dict = {"unreadable": True, "reason": "the reply states no single answer"}
        else:
            data = getattr(self, f"_{self.suite}")(final, expected)
            if (self.mode or READER_MODE[0]) == "swapped":
                data = self._swap(data)
        return ModelOutput.from_content("bench/scripted-reader", json.dumps(data))

    def _swap(self, data: dict) -> dict:
        """The faithful reading turned wrong, quotes kept: polarity swapped, the other letters chosen,
        another action, the probabilities reversed. The verification should reject every one."""
        if self.suite == "css":
            return {"recommendations": data["not_recommended"], "not_recommended": data["recommendations"]}
        if self.suite == "medpic":
            chosen = {a["letter"] for a in data["answer"]}
            quotes = [a["quote"] for a in data["answer"]] or [""]
            others = [k for k in self.entry["options"] if k not in chosen]
            return {"answer": [{"letter": k, "quote": quotes[0]} for k in others[:1]]}
        if self.suite == "workflow":
            actions = ["ANSWER", "ASK_CLARIFICATION", "ABSTAIN", "ESCALATE"]
            wrong = actions[(actions.index(data["action"]["value"]) + 1) % 4]
            return {**data, "action": {"value": wrong, "quote": data["action"]["quote"]}}
        if self.suite == "sensitivity":
            probs = [p["probability"] for p in data["probabilities"]][::-1]
            return {"probabilities": [{**p, "probability": q} for p, q in zip(data["probabilities"], probs, strict=False)]}
        return data

    @staticmethod
    def _clauses(final: str) -> list[str]:
        return [c.strip() for line in final.splitlines() for c in re.split(r"(?<=[.;])\s+|,\s+(?=and\b)", line) if c.strip()]

    def _quote_for(self, final: str, needle: str, negative: bool = False) -> tuple[str, str]:
        """(the needle as the reply writes it, the clause or lines that state it with its polarity)."""

        lines = [line for line in final.splitlines() if line.strip()]
        fallback: tuple[str, str] | None = None
        headed: tuple[str, str] | None = None
        for i, line in enumerate(lines):
            at = line.lower().find(needle.lower())
            if at < 0:
                continue
            name = line[at:at + len(needle)]
            for clause in (c for c in self._clauses(line) if needle.lower() in c.lower()):
                if negative and has_negative_cue(words_of(clause)):
                    return name, clause
                if not negative and not negated_near(name, clause):
                    return name, clause
            if negative:
                for k in range(i - 1, -1, -1):  # the heading above that states the polarity
                    if has_negative_cue(words_of(lines[k])):
                        headed = headed or (name, "\n".join(lines[k:i + 1]))
                        break
            fallback = fallback or (name, line.strip())
        return headed or fallback or (needle, needle)

    def _css(self, final: str, expected: dict) -> dict:
        out: dict = {"recommendations": [], "not_recommended": []}
        for key, negative in (("recommended", False), ("not_recommended", True)):
            for item in expected.get(key) or []:
                name, quote = self._quote_for(final, item, negative)
                out["recommendations" if key == "recommended" else "not_recommended"].append({"treatment": name, "quote": quote})
        return out

    def _medpic(self, final: str, expected: list) -> dict:
        options = self.entry["options"]
        answer = []
        for letter in expected:

            pieces = [p for line in final.splitlines() for p in re.split(r",\s+|\s+[—–-]\s+|;\s*", line)]
            found = [p for p in pieces if letter_in_quote(letter, p) or options[letter].lower() in p.lower()]
            answer.append({"letter": letter, "quote": (found[-1] if found else letter).strip()})
        return {"answer": answer}

    def _workflow(self, final: str, expected: dict) -> dict:
        action = expected["action"]
        stems = ACTION_STEMS[action] + (action.lower(),)
        clauses = [c for c in self._clauses(final) if any(w.startswith(stems) for w in re.findall(r"[\w']+", c.lower()))]
        data: dict = {"action": {"value": action, "quote": clauses[-1] if clauses else action}}
        if expected.get("confidence") is not None:
            lines = [line for line in final.splitlines() if number_grounded(expected["confidence"], line)]
            data["confidence"] = {"value": expected["confidence"], "quote": lines[-1] if lines else ""}
        return data

    def _sensitivity(self, final: str, expected: list) -> dict:
        out = []
        for i, p in enumerate(expected):
            if p == 0:
                continue
            name = self.entry["candidates"][i]
            clause = next(
                (
                    c
                    for c in re.split(r",\s+(?![^{]*\})|\n|;|\},\s*", final)
                    if number_grounded(p, c) and (name.lower() in c.lower() or re.search(rf"\b{LETTERS[i]}\b", c))
                ),
                "",
            )
            out.append({"candidate": LETTERS[i], "probability": p, "quote": clause.strip()})
        return {"probabilities": out}


def _reader(entry: dict, suite: str) -> Any:
    """The reader role and an independent second reader (issue 37: a reading counts when both agree); the second is
    always faithful, so a reader that misreads on purpose (`--reader-mode swapped`) meets a reader that does not."""
    if not USE_READER[0]:
        return None
    return (ScriptedReader(entry, suite), ScriptedReader(entry, suite, "faithful", "bench/scripted-second-reader"))

# Adversarial replies too large to keep in a YAML file, generated where an entry names them.
GENERATED = {
    "REPLACED_BY_BENCH_DEEP_JSON": '{"A": ' + "[" * 1100 + "0.5" + "]" * 1100 + "}",
    "REPLACED_BY_BENCH_WHITESPACE": "score" + " \t" * 3000 + "1",
}

READERS = {"css": _read_css, "medpic": _read_medpic, "workflow": _read_workflow, "sensitivity": _read_sensitivity, "judge": _read_judge}


def evaluate(corpus: Path = CORPUS) -> list[Outcome]:
    outcomes = []
    for suite in SUITES:
        path = corpus / f"{suite}.yaml"
        if not path.exists():
            continue
        for entry in yaml.safe_load(path.read_text()) or []:
            entry = {**entry, "reply": GENERATED.get(entry["reply"], entry["reply"])}
            _STEP[0] = ""
            got, expected = READERS[suite](entry)
            outcomes.append(Outcome(suite, entry["id"], entry["style"], entry["format"], status(got, expected), got, expected, _STEP[0]))
    return outcomes


def table(outcomes: list[Outcome], key: str) -> list[str]:
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.suite, getattr(o, key))].append(o)
    lines = [f"{'suite':<12} {key:<20} {'n':>3} {'ok':>4} {'missed':>6} {'silent':>6}"]
    for (suite, value), items in sorted(groups.items()):
        counts = {v: sum(1 for o in items if o.verdict == v) for v in ("ok", "missed", "silent")}
        lines.append(f"{suite:<12} {value:<20} {len(items):>3} {counts['ok']:>4} {counts['missed']:>6} {counts['silent']:>6}")
    return lines


def steps(outcomes: list[Outcome]) -> list[str]:
    """Per suite: ok / missed / silent and the share of replies each reading step produced."""
    lines = []
    for suite in SUITES:
        items = [o for o in outcomes if o.suite == suite]
        if not items:
            continue
        counts = {v: sum(1 for o in items if o.verdict == v) for v in ("ok", "missed", "silent")}
        shares = defaultdict(int)
        for o in items:
            shares[o.step or "?"] += 1
        share_text = ", ".join(f"{k} {v / len(items):.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
        lines.append(
            f"{suite:<12} n={len(items):<3} ok {counts['ok']:<3} missed {counts['missed']:<3} silent {counts['silent']:<3}"
            f" steps: {share_text}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of <suite>.yaml reply files")
    parser.add_argument("--show", action="store_true", help="print every reading that was not as expected")
    parser.add_argument("--no-reader", action="store_true", help="steps (a)-(c) only: no scripted reader role")
    parser.add_argument("--reader-mode", choices=("faithful", "swapped"), default="faithful",
                        help="the scripted reader reads faithfully, or misreads on purpose (polarity swapped, other letters, "
                        "another action, probabilities reversed) to measure how many misreadings the verification lets through")
    parser.add_argument("--timing", action="store_true", help="also time every reader on adversarial replies of growing length")
    args = parser.parse_args(argv)
    USE_READER[0] = not args.no_reader
    READER_MODE[0] = args.reader_mode
    if not args.corpus.is_dir():
        print(f"error: --corpus {args.corpus} is not a folder", file=sys.stderr)
        return 2
    outcomes = evaluate(args.corpus)
    if not outcomes:
        print(f"error: no <suite>.yaml reply files in {args.corpus}", file=sys.stderr)
        return 2
    print("\n".join(table(outcomes, "format")))
    print()
    print("\n".join(table(outcomes, "style")))
    print()
    print("\n".join(steps(outcomes)))
    ok = sum(o.verdict == "ok" for o in outcomes)
    silent = sum(o.verdict == "silent" for o in outcomes)
    missed = sum(o.verdict == "missed" for o in outcomes)
    print(f"\n{len(outcomes)} replies: {ok} as expected ({ok / len(outcomes):.1%}), {missed} missed (unreadable), {silent} silent misreads")
    print(f"reader role: {'scripted (' + READER_MODE[0] + '), ' + str(READER_CALLS[0]) + ' calls' if USE_READER[0] else 'off'}")
    if args.timing:
        print()
        print("\n".join(timing()))
    if args.show:
        for o in outcomes:
            if o.verdict != "ok":
                print(f"[{o.verdict}] {o.suite}/{o.id}: got {o.got!r}, expected {o.expected!r}")
    return 0


def adversarial(kind: str, n: int) -> str:
    """An adversarial reply of about n characters."""
    if kind == "whitespace":
        return "escalate" + " \t" * (n // 2) + "x"
    if kind == "deep_brackets":
        return '{"a": ' + "[" * (n // 2) + "]" * (n // 2) + "}"
    if kind == "open_braces":
        return "{" * n
    if kind == "think_tags":
        return "<think " * (n // 7)
    if kind == "prose":
        return ("Consider FOLFOX, then restage; avoid nothing. " * (n // 47 + 1))[:n]
    raise ValueError(kind)


def timing(sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000)) -> list[str]:
    """Reading time per reader against reply length, as ratios to the smallest size (linear: about 10x per 10x length;
    above MAX_REPLY_CHARS the reply is cut, so the time stops growing)."""

    options = {"A": "Warfarin", "B": "Aspirin", "C": "None of the above"}
    readers = {
        "css": read_recommendations,
        "medpic": lambda t: read_answer(t, options),
        "workflow": parse_decision,
        "sensitivity": lambda t: read_distribution(t, ["Asthma", "COPD", "Heart failure"]),
        "judge": lambda t: (read_score(t, (0.0, 0.5, 1.0)), read_flag(t, "critical_error")),
    }
    lines = [f"{'reader':<12} {'reply':<14} " + " ".join(f"{n:>16,}" for n in sizes) + "   (best of 3; ratio to the first size)"]
    for name, read in readers.items():
        for kind in ("whitespace", "deep_brackets", "open_braces", "think_tags", "prose"):
            times = []
            for n in sizes:
                text = adversarial(kind, n)
                best = float("inf")
                for _ in range(3):  # the best of three, so one scheduling hiccup is not read as growth
                    started = time.perf_counter()
                    read(text)
                    best = min(best, time.perf_counter() - started)
                times.append(best)
            base = max(times[0], 1e-4)
            cells = " ".join(f"{t * 1000:>8.1f}ms {t / base:>5.1f}x" for t in times)
            lines.append(f"{name:<12} {kind:<14} {cells}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
