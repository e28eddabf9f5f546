"""Reply-reading benchmark: the fixture corpus of replies in real model families' styles, read by
the suites' own parsers, tallied per suite and format.

    .venv/bin/python bench/replies.py [--corpus tests/fixtures/replies] [--show]

Each corpus entry has the reply and its expected reading. A reading is
- `ok`: as expected (the same items, letters, action, distribution or verdict; or invalid /
  unreadable where that is expected);
- `missed`: unreadable or invalid where a value was expected (a reply lost, but no number invented);
- `silent`: a value that differs from the expected one, or a value where none was expected:
  a wrong number. The target is at least 98 % `ok` and 0 `silent`.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

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
    from clinical_cf.solvers.css import read_recommendations

    reading = read_recommendations(entry["reply"])
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
    from clinical_cf.solvers.medpic import read_answer

    reading = read_answer(entry["reply"], entry["options"])
    _STEP[0] = reading.provenance
    if reading.provenance in ("invalid", "unreadable"):
        return reading.provenance, entry["expected"]
    expected = entry["expected"]
    return sorted(reading.letters or []), (sorted(expected) if isinstance(expected, list) else expected)


def _read_workflow(entry: dict) -> tuple[Any, Any]:
    from clinical_cf.solvers.workflow import parse_decision

    decision = parse_decision(entry["reply"])
    _STEP[0] = decision.provenance
    if decision.provenance in ("invalid", "unreadable"):
        return decision.provenance, entry["expected"]
    got = {"action": decision.action, "confidence": None if decision.confidence is None else round(decision.confidence, 4)}
    return got, entry["expected"]


def _read_sensitivity(entry: dict) -> tuple[Any, Any]:
    from clinical_cf.solvers.sensitivity import read_distribution

    probs, provenance, _ = read_distribution(entry["reply"], entry["candidates"])
    _STEP[0] = provenance
    if probs is None:
        return provenance, entry["expected"]
    return [round(p, 2) for p in probs], entry["expected"]


def _read_judge(entry: dict) -> tuple[Any, Any]:
    from clinical_cf.replies import as_flag, read_flag, read_score
    from clinical_cf.scorers.css_judge import VALID_SCORES

    if entry["kind"] == "mention":
        reading = read_flag(entry["reply"], "mentions")
        _STEP[0] = reading.provenance
        return (reading.value if reading.ok else reading.provenance), entry["expected"]
    reading = read_score(entry["reply"], VALID_SCORES)
    _STEP[0] = reading.provenance
    if not reading.ok:
        return reading.provenance, entry["expected"]
    if entry["kind"] == "process":
        critical = as_flag(reading.data.get("critical_error", False))
        if critical is None:
            return "unreadable", entry["expected"]
        return {"score": reading.value, "critical_error": critical}, entry["expected"]
    return reading.value, entry["expected"]


_STEP = [""]  # the provenance of the last reading, set by each reader above

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
        lines.append(f"{suite:<12} n={len(items):<3} ok {counts['ok']:<3} missed {counts['missed']:<3} silent {counts['silent']:<3} steps: {share_text}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of <suite>.yaml reply files")
    parser.add_argument("--show", action="store_true", help="print every reading that was not as expected")
    args = parser.parse_args(argv)
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
    if args.show:
        for o in outcomes:
            if o.verdict != "ok":
                print(f"[{o.verdict}] {o.suite}/{o.id}: got {o.got!r}, expected {o.expected!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
