"""Reader benchmark v3 (issue 29): one answer or none, and the reader role under scripted readers.

    .venv/bin/python bench/replies_v3.py [--corpus catalog/css/reader_audit_replies.yaml] [--show] [--json OUT]

Every reply of the corpus (all six readers: CSS recommendations, agent submissions, MedPIC
answers, workflow actions, sensitivity distributions, judge verdicts) is read by the suite's own
reader, in the full reading order, with a scripted reader role, three times:

- faithful: answers with the entry's truth, quoting the line of the reply that states each value
  (for a reply whose truth is none / conflicting / unreadable it says it cannot read one);
- lying: answers with a wrong value and the best quotes the reply offers for it (polarity
  swapped, other options or actions, numbers permuted or cut short, plus the entry's own `lies`);
- hedging: never commits (answers "unreadable" for every reply).

Per suite it prints: read right, unreadable counted (a stated value lost, the reader not called or
declining), correct reading refused (the faithful reader's reading rejected by the verification),
read into a value not stated (a silent misreading: the headline figure, target 0), lying reader
accepted (entries where some lie got through the verification: target 0), conflicts flagged
(replies read `unreadable: conflicting answers`) and crashes (an exception: an eval would end).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import re
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.model import ModelOutput

from clinical_cf.replies import read_flag, read_score
from clinical_cf.scorers import reader_audit
from clinical_cf.scorers.css_judge import VALID_SCORES
from clinical_cf.solvers.css import read_recommendations_with_reader
from clinical_cf.solvers.medpic import read_answer_with_reader
from clinical_cf.solvers.sensitivity import LETTERS, read_distribution_with_reader
from clinical_cf.solvers.workflow import ACTION_STEMS, parse_decision_with_reader

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "catalog" / "css" / "reader_audit_replies.yaml"
SUITES = ("css", "agent", "medpic", "workflow", "sensitivity", "judge")
NOT_READ = ("none", "conflicting", "unreadable", "invalid")
DIGITS = "7" * 5000


def expand(reply: str) -> str:
    return reply.replace("@@DIGITS5000@@", DIGITS)


# ----------------------------------------------------------------------------- scripted readers

_BLOCK = re.compile(r"<<<REPLY DATA (?P<tag>\w+)>>>\n(?P<body>.*)\n<<<END REPLY DATA (?P=tag)>>>", re.DOTALL)


def reply_in_prompt(prompt: Any) -> str:
    """The reply text the reader was shown (inside the prompt's data block), without the options/candidates line."""
    text = prompt if isinstance(prompt, str) else "\n".join(str(getattr(m, "text", m)) for m in prompt)
    match = _BLOCK.search(text)
    body = match.group("body") if match else text
    if body.startswith(("Options:", "Candidates:")):
        body = body.split("\n\n", 1)[1] if "\n\n" in body else ""
    return body


def _lines(text: str) -> list[str]:
    return [re.sub(r"^[ \t]{0,8}(?:[-*•>]|\d{1,2}[.)])?[ \t]{0,4}", "", line).strip() for line in text.splitlines() if line.strip()]


def _last_line_with(text: str, needle: str, case: bool = False) -> str | None:
    found = None
    for line in _lines(text):
        if (needle in line) if case else (needle.lower() in line.lower()):
            found = line
    return found


def _as_written(line: str, needle: str) -> str:
    at = line.lower().find(needle.lower())
    return line[at:at + len(needle)] if at >= 0 else needle


class ScriptedReader:
    """A reader role scripted for one corpus entry; `mode` is faithful, lying or hedging.

    A lying reader answers with `readings[i]` on its i-th call (the runner calls the reading once
    per lie). Its readings go through the suite's own verification, like a real reader's."""

    def __init__(self, entry: dict, mode: str, reading: dict | None = None, name: str = "") -> None:
        self.entry, self.mode, self.reading = entry, mode, reading
        self.calls: list[str] = []
        self.name = name

    def __str__(self) -> str:
        return f"bench/scripted-{self.mode}-reader{self.name}"

    async def generate(self, prompt: Any, config: Any = None, cache: Any = None) -> Any:
        text = reply_in_prompt(prompt)
        self.calls.append(text)
        if self.mode == "hedging":
            data: dict = {"unreadable": True, "reason": "I cannot be sure what the reply finally states"}
        elif self.mode == "lying":
            data = self.reading or {"unreadable": True, "reason": "no lie"}
        else:
            data = faithful_reading(self.entry, text)
        return ModelOutput.from_content(str(self), json.dumps(data))


def stated(entry: dict) -> Any:
    """The value a faithful reader records: the truth, or for a conflicting reply its marked revision (`final`)."""
    truth = entry["truth"]
    if isinstance(truth, str) and truth in NOT_READ:
        return entry.get("final") if truth == "conflicting" else None
    return truth


def faithful_reading(entry: dict, text: str) -> dict:
    value = stated(entry)
    if value is None:
        return {"unreadable": True, "reason": "the reply states no single final answer"}
    suite = entry["suite"]
    if suite in ("css", "agent"):
        out: dict = {"recommendations": [], "not_recommended": []}
        for key, target in (("recommended", "recommendations"), ("not_recommended", "not_recommended")):
            for item in value.get(key) or []:
                line = _last_line_with(text, item) or item
                out[target].append({"treatment": _as_written(line, item), "quote": line})
        return out
    if suite == "medpic":
        options = entry["options"]
        answer = []
        for letter in value:
            line = _last_line_with(text, options[letter]) or _last_line_with(text, letter, case=True) or letter
            answer.append({"letter": letter, "quote": line})
        return {"answer": answer}
    if suite == "workflow":

        action = value["action"]
        lines = _lines(text)
        hits = [ln for ln in lines if any(w.startswith(ACTION_STEMS[action] + (action.lower(),)) for w in re.findall(r"\w+", ln.lower()))]
        data: dict = {"action": {"value": action, "quote": (hits or lines or [action])[-1]}}
        if value.get("confidence") is not None:
            c = value["confidence"]
            line = next((ln for ln in reversed(lines) if re.search(rf"(?<![\d.]){re.escape(str(c))}(?![\d])", ln)), "")
            data["confidence"] = {"value": c, "quote": line}
        return data
    if suite == "sensitivity":

        out_p = []
        for i, p in enumerate(value):
            if p == 0:
                continue
            name = entry["candidates"][i]
            line = _last_line_with(text, name) or next(
                (ln for ln in reversed(_lines(text)) if re.search(rf"(?<![A-Za-z]){LETTERS[i]}(?![A-Za-z])", ln)), "")
            out_p.append({"candidate": LETTERS[i], "probability": p, "quote": line})
        return {"probabilities": out_p}
    return {"unreadable": True, "reason": "no reader for this suite"}


def lies(entry: dict, text: str) -> list[dict]:
    """Wrong readings, each with the most supportive quotes the reply offers, and the entry's own `lies`."""
    suite, truth = entry["suite"], stated(entry)
    out: list[dict] = list(entry.get("lies") or [])
    lines = _lines(text)
    if suite in ("css", "agent"):
        rec = (truth or {}).get("recommended") or []
        avoid = (truth or {}).get("not_recommended") or []
        for quote_of in (lambda item: item, lambda item: _last_line_with(text, item) or item):
            if rec or avoid:
                out.append({"recommendations": [{"treatment": i, "quote": quote_of(i)} for i in avoid],
                            "not_recommended": [{"treatment": i, "quote": quote_of(i)} for i in rec]})
            for item in entry.get("mentioned") or []:
                out.append({"recommendations": [{"treatment": item, "quote": quote_of(item)}], "not_recommended": []})
    elif suite == "medpic":
        options = entry["options"]
        for letter, option in options.items():
            if truth and letter in truth:
                continue
            line = _last_line_with(text, option)
            for quote in filter(None, (line, option if line else None, _last_line_with(text, f"{letter}.", case=True))):
                out.append({"answer": [{"letter": letter, "quote": quote}]})
    elif suite == "workflow":

        for action, stems in ACTION_STEMS.items():
            if truth and truth.get("action") == action:
                continue
            for line in lines:
                words = re.findall(r"\w+", line.lower())
                hit = next((w for w in words if w.startswith(stems) or w == action.lower()), None)
                if hit:
                    out.append({"action": {"value": action, "quote": line}})
                    word = re.search(rf"(?i)\b{re.escape(hit)}\w*", line)
                    if word:
                        out.append({"action": {"value": action, "quote": word.group(0)}})
    elif suite == "sensitivity":

        n = len(entry["candidates"])
        base = truth if truth else [round(1 / n, 4)] * n
        permuted = base[::-1] if base[::-1] != base else base[1:] + base[:1]
        if permuted != base:
            quotes = [(_last_line_with(text, entry["candidates"][i]) or next(
                (ln for ln in lines if re.search(rf"(?<![A-Za-z]){LETTERS[i]}(?![A-Za-z])", ln)), "")) for i in range(n)]
            out.append({"probabilities": [{"candidate": LETTERS[i], "probability": permuted[i], "quote": quotes[i]}
                                          for i in range(n) if permuted[i]]})
        if not truth:
            out.append({"probabilities": [{"candidate": LETTERS[i], "probability": base[i], "quote": lines[-1] if lines else ""}
                                          for i in range(n)]})
    return out


# ----------------------------------------------------------------------------- reading one entry

@dataclass
class Read:
    value: Any  # the value read, or "unreadable" / "invalid"
    reason: str = ""
    provenance: str = ""
    reader_called: bool = False
    reader_accepted: bool = False
    agreement: str = ""
    crashed: str = ""
    conflict: bool = False
    read_by: str = ""


def _not_read(provenance: str, reason: str, **kw: Any) -> Read:
    return Read("invalid" if provenance == "invalid" else "unreadable", reason, provenance, **kw)


def read_entry(entry: dict, reader: ScriptedReader | None) -> Read:
    """The entry's reply read by its suite's reader (full order, `reader` as the reader role); exceptions are caught."""
    try:
        return _read(entry, reader)
    except Exception as ex:  # an exception here would end an eval: recorded, never hidden
        return Read("unreadable", f"{type(ex).__name__}: {str(ex)[:120]}", "crash", crashed=type(ex).__name__)


def _flags(reading: Any, reason: str) -> dict:
    reader = getattr(reading, "reader", None)
    return {
        "reader_called": reader is not None,
        "reader_accepted": bool(reader) and str(reader.get("verdict", "")).startswith("accepted"),
        "conflict": "conflicting" in (reason or ""),
        "agreement": str((reader or {}).get("agreement", "")),
    }


def _whole(fn: Any, entry: dict) -> dict:
    """The entry's provider facts (`stop_reason`, `max_tokens`) as keyword arguments, for a reader that takes them
    (issue 37: a reply the provider cut is unreadable); readers that predate them read the text only."""

    names = inspect.signature(fn).parameters
    return {k: entry[k] for k in ("stop_reason", "max_tokens") if k in entry and k in names}


def _read(entry: dict, reader: ScriptedReader | None) -> Read:
    suite, reply = entry["suite"], expand(entry["reply"])
    if suite in ("css", "agent"):

        r = asyncio.run(read_recommendations_with_reader(reply, reader, **_whole(read_recommendations_with_reader, entry)))
        if r.provenance in ("invalid", "unreadable"):
            return _not_read(r.provenance, r.reason or str(r.invalid or ""), **_flags(r, r.reason))
        value = {"recommended": [x.treatment for x in r.recommendations], "not_recommended": [x.treatment for x in r.not_recommended]}
        return Read(value, "", r.provenance, **_flags(r, ""))
    if suite == "medpic":

        r = asyncio.run(read_answer_with_reader(reply, entry["options"], reader, **_whole(read_answer_with_reader, entry)))
        if r.letters is None:
            return _not_read(r.provenance, r.reason or str(r.invalid or ""), **_flags(r, r.reason))
        return Read(sorted(r.letters), "", r.provenance, **_flags(r, ""))
    if suite == "workflow":

        d = asyncio.run(parse_decision_with_reader(reply, reader, **_whole(parse_decision_with_reader, entry)))
        if d.action is None:
            return _not_read(d.provenance, d.unreadable_reason or str(d.invalid or ""), **_flags(d, d.unreadable_reason))
        return Read({"action": d.action, "confidence": None if d.confidence is None else round(d.confidence, 4)}, "", d.provenance,
                    **_flags(d, ""))
    if suite == "sensitivity":

        r = asyncio.run(read_distribution_with_reader(reply, entry["candidates"], reader, **_whole(read_distribution_with_reader, entry)))
        if r.probs is None:
            return _not_read(r.provenance, r.reason or str(r.invalid or ""), **_flags(r, r.reason))
        return Read([round(p, 2) for p in r.probs], "", r.provenance, **_flags(r, ""))
    if suite == "judge":

        if entry["kind"] == "mention":
            f = read_flag(reply, "mentions", **_whole(read_flag, entry))
            return Read(f.value, "", f.provenance) if f.ok else _not_read(f.provenance, f.reason, conflict="conflicting" in f.reason)
        s = read_score(reply, VALID_SCORES, **_whole(read_score, entry))
        if not s.ok:
            return _not_read(s.provenance, s.reason, conflict="conflicting" in s.reason)
        if entry["kind"] == "process":
            c = read_flag(reply, "critical_error", **_whole(read_flag, entry))
            if not c.ok:
                return _not_read(c.provenance, c.reason, conflict="conflicting" in c.reason)
            return Read({"score": s.value, "critical_error": c.value}, "", s.provenance)
        return Read(s.value, "", s.provenance)
    raise ValueError(f"unknown suite {suite!r}")


def same(entry: dict, got: Any, value: Any) -> bool:
    """Whether a reading `got` states `value`: the reader audit's own comparison, so the bench and the task agree."""
    return reader_audit.same(entry["suite"], got, value)


# ----------------------------------------------------------------------------- classification

@dataclass
class Outcome:
    suite: str
    id: str
    format: str
    cls: str
    verdict: str  # right, unreadable, refused, silent, crash
    got: Any
    truth: Any
    reason: str = ""
    conflict: bool = False
    lie_accepted: bool = False
    lie_tries: int = 0
    lie_got: Any = None
    both_lie_accepted: bool = False
    reader_called: bool = False
    read_by: str = ""
    hedging_right: bool = False
    notes: list[str] = field(default_factory=list)


def classify(entry: dict, read: Read) -> str:
    truth = entry["truth"]
    if read.crashed:
        return "crash"
    value = stated(entry)
    if isinstance(truth, str) and truth in NOT_READ:
        if read.value in ("unreadable", "invalid"):
            return "right"
        if value is not None and read.provenance in ("reader", "agreement") and same(entry, read.value, value):
            return "right"  # a conflict whose marked revision the flagged reader read
        return "silent"
    if read.value in ("unreadable", "invalid"):
        return "refused" if read.reader_called and entry["suite"] != "judge" else "unreadable"
    return "right" if same(entry, read.value, truth) else "silent"


def evaluate(corpus: Path = CORPUS, use_reader: bool = True) -> list[Outcome]:
    entries = yaml.safe_load(corpus.read_text(encoding="utf-8")) or []
    outcomes = []
    for entry in entries:
        # Two independent readers (issue 37): a reading counts when both read it the same way.
        faithful = ((ScriptedReader(entry, "faithful"), ScriptedReader(entry, "faithful", name="-2"))
                    if use_reader and entry["suite"] != "judge" else None)
        read = read_entry(entry, faithful)
        read_by = ("reader" if read.provenance in ("reader", "agreement")
                   else "contract" if read.value not in ("unreadable", "invalid") else "")
        outcome = Outcome(entry["suite"], entry["id"], entry["format"], entry.get("cls", ""), classify(entry, read), read.value,
                          entry["truth"], read.reason, read.conflict, reader_called=read.reader_called, read_by=read_by)
        if use_reader and entry["suite"] != "judge" and not read.crashed:
            probe = ScriptedReader(entry, "hedging")
            hedged = read_entry(entry, (probe, ScriptedReader(entry, "hedging", name="-2")))
            outcome.hedging_right = classify(entry, hedged) == "right"
            if probe.calls:  # the reader is asked for this reply: try every lie on it
                for lie in lies(entry, probe.calls[0]):
                    outcome.lie_tries += 1
                    value = stated(entry)
                    # A lying reader with an independent faithful second reader (the lie rate a lab sees), and the
                    # same lie told by both readers (colluding readers: only the structural refusers stand in its way).
                    pairs = (((ScriptedReader(entry, "lying", lie), ScriptedReader(entry, "faithful", name="-2")), "lie_accepted"),
                             ((ScriptedReader(entry, "lying", lie), ScriptedReader(entry, "lying", lie, name="-2")), "both_lie_accepted"))
                    for pair, flag in pairs:
                        if getattr(outcome, flag):
                            continue
                        got = read_entry(entry, pair)
                        if got.value in ("unreadable", "invalid") or got.provenance not in ("reader", "agreement"):
                            continue
                        if value is None or not same(entry, got.value, value):
                            setattr(outcome, flag, True)
                            if flag == "lie_accepted":
                                outcome.lie_got = {"lie": lie, "read": got.value}
        outcomes.append(outcome)
    return outcomes


COLUMNS = ("right", "unreadable", "refused", "silent", "lie", "both", "conflict", "crash")
HEAD = {"right": "read right", "unreadable": "unreadable counted", "refused": "correct refused",
        "silent": "read into unstated", "lie": "lying accepted", "both": "same lie x2 accepted", "conflict": "conflicts flagged",
        "crash": "crashes"}


def summary(outcomes: list[Outcome]) -> list[str]:
    lines = [f"{'suite':<12} {'n':>4} " + " ".join(f"{HEAD[c]:>18}" for c in COLUMNS) + f" {'miss rate':>10}"]
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.suite].append(o)
    groups["all"] = list(outcomes)
    for suite in (*SUITES, "all"):
        items = groups.get(suite, [])
        if not items:
            continue
        counts = {c: sum(o.verdict == c for o in items) for c in ("right", "unreadable", "refused", "silent", "crash")}
        counts["lie"] = sum(o.lie_accepted for o in items)
        counts["both"] = sum(o.both_lie_accepted for o in items)
        counts["conflict"] = sum(o.conflict for o in items)
        stated_n = sum(1 for o in items if not (isinstance(o.truth, str) and o.truth in NOT_READ))
        missed = sum(1 for o in items if o.verdict in ("unreadable", "refused"))
        rate = f"{missed / stated_n:.0%}" if stated_n else "-"
        lines.append(f"{suite:<12} {len(items):>4} " + " ".join(f"{counts[c]:>18}" for c in COLUMNS) + f" {rate:>10}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the YAML corpus of replies with their truth")
    parser.add_argument("--no-reader", action="store_true", help="the contract steps only: no reader role")
    parser.add_argument("--show", action="store_true", help="print every reply not read right, and every lie accepted")
    parser.add_argument("--json", type=Path, help="write every outcome to this JSON file")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"error: --corpus {args.corpus} is not a file", file=sys.stderr)
        return 2
    outcomes = evaluate(args.corpus, use_reader=not args.no_reader)
    print("\n".join(summary(outcomes)))
    print("(miss rate: replies that state a value and were not read, over those that state one; "
          "hedging reader right on " f"{sum(o.hedging_right for o in outcomes)} replies)")
    if args.show:
        for o in outcomes:
            if o.verdict != "right" or o.lie_accepted:
                print(f"[{o.verdict}{' +LIE' if o.lie_accepted else ''}] {o.suite}/{o.id}: got {str(o.got)[:120]!r} "
                      f"truth {o.truth!r} {o.reason[:100]}" + (f"\n     lie {str(o.lie_got)[:300]}" if o.lie_accepted else ""))
    if args.json:
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps([asdict(o) for o in outcomes], indent=1, default=str))
        tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
