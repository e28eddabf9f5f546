"""Every "linear-time" / "bounded" claim in the code, tested on long adversarial input (issues 26, 36).

Each claim gets two checks, both in CPU time (tests/cpu_time.py), never wall-clock time, so a busy machine
cannot fail them:

- **growth**: the same pathological input at n and 4n characters; the larger must take under 10x the CPU of
  the smaller (linear work takes about 4x, quadratic 16x, exponential far more), each size run often enough
  that a measurement takes at least 0.15 s of CPU. For the replies, which are cut at MAX_REPLY_CHARS, growth
  up to the cut, and a reply far over it costing what the cut does;
- **a long input finishes**: 200,000 characters or more (2,000,000 for the replies, which are cut first) run
  in a forked child that is killed once it has used a generous amount of CPU. A regex stuck in C code holds
  the interpreter, so neither a thread nor SIGALRM (pytest-timeout) could interrupt it in-process.

The claims: `clinical_cf/replies.py` (reading is linear in the reply's length, cut at
MAX_REPLY_CHARS), `clinical_cf/core/loading.py` (a linear bracket pre-scan before JSON parsing,
YAML depth and alias limits checked while composing, a one-class scan for control characters),
`catalog/css/sentences.py` (every step linear) and `analysis/side_by_side.py` (unchanged lines set
aside in linear time). The catalog's patterns and the expansion of a 150,000-character line are
measured in tests/catalog/css/test_patterns.py (slow).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from clinical_cf.analysis.side_by_side import word_diff
from clinical_cf.catalog.css.sentences import statements
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import MAX_DEPTH, load_jsonl, load_yaml, parse_json, parse_yaml
from clinical_cf.replies import MAX_REPLY_CHARS, read_flag, read_score
from clinical_cf.solvers.css import read_recommendations
from clinical_cf.solvers.medpic import read_answer
from clinical_cf.solvers.sensitivity import read_distribution
from clinical_cf.solvers.workflow import parse_decision
from tests.cpu_time import GROWTH, REPEATS, SCALE, assert_grows_linearly, cpu_seconds, finishes, growth

pytestmark = pytest.mark.timeout(120)  # a hang guard only: the claims are checked in CPU time


# ---------------------------------------------------------------- replies (clinical_cf/replies.py and the readers)

OPTIONS = {"A": "Warfarin", "B": "Aspirin", "C": "None of the above"}
READERS: dict[str, Callable[[str], Any]] = {
    "css": read_recommendations,
    "medpic": lambda text: read_answer(text, OPTIONS),
    "workflow": parse_decision,
    "sensitivity": lambda text: read_distribution(text, ["Asthma", "COPD", "Heart failure"]),
    "judge": lambda text: (read_score(text, (0.0, 0.5, 1.0)), read_flag(text, "critical_error")),
}
REPLIES: dict[str, Callable[[int], str]] = {
    "whitespace": lambda n: "escalate" + " \t" * (n // 2) + "x",
    "deep_brackets": lambda n: '{"a": ' + "[" * (n // 2) + "]" * (n // 2) + "}",
    "open_braces": lambda n: "{" * n,
    "think_tags": lambda n: "<think " * (n // 7),
    "score_labels": lambda n: "Score:" * (n // 6),  # a label line with no value, repeated
    "quoted_json": lambda n: '{"recommendations": ["' + '\\"' * (n // 2) + '"]}',
    "prose": lambda n: ("Consider FOLFOX, then restage; avoid nothing. " * (n // 47 + 1))[:n],


    "score_whitespace": lambda n: "score" + " " * (n - 6) + "1",  # a label, then its value far away
}
OVER_THE_CUT = 2_000_000
"""A reply this long is cut to MAX_REPLY_CHARS before reading."""


def _kinds(n: int) -> list[str]:
    return [make(n) for make in REPLIES.values()]


def _read_all(reader: str) -> Callable[[list[str]], None]:
    def read(texts: list[str]) -> None:
        for text in texts:
            READERS[reader](text)
    return read


def _at_the_cut_and_over(reader: str) -> tuple[float, float, float, int]:
    """CPU time of reading every kind at a quarter of the cut and at the cut (growth), and over it, at 2,000,000."""
    read = _read_all(reader)
    t_small, t_large, calls = growth(_kinds, read, MAX_REPLY_CHARS // SCALE)
    over = _kinds(OVER_THE_CUT)
    t_over = min(cpu_seconds(lambda: read(over)) for _ in range(REPEATS))  # one reading: about 0.2 s of CPU
    return t_small / calls, t_large / calls, t_over, calls


@pytest.mark.parametrize("reader", sorted(READERS))
def test_reading_a_reply_grows_linearly_up_to_the_cut_and_not_past_it(reader):
    """Every kind of reply read at a quarter of MAX_REPLY_CHARS, at MAX_REPLY_CHARS and at 2,000,000 characters:
    linear growth up to the cut (quadratic work on 100,000 characters would take many seconds), and a reply
    twenty times over the cut costs what the cut does (it is cut before reading; read in full, linear work would
    take twenty times as much). In a forked child with a CPU bound, so a reader stuck in C code fails, not hangs."""
    took, outcome, measured = finishes(lambda: _at_the_cut_and_over(reader), f"{reader} on long replies")
    assert outcome == "value", measured  # read (as unreadable or invalid), not a crash
    t_small, t_large, t_over, calls = measured
    at = f"{t_small * 1000:.0f} ms of CPU a reading at {MAX_REPLY_CHARS // SCALE:,} (of {calls}), {t_large * 1000:.0f} ms at {MAX_REPLY_CHARS:,}"
    assert t_large < GROWTH * t_small, f"{reader}: {at}"
    assert t_over < 2.0 * t_large, f"{reader}: {at}, {t_over * 1000:.0f} ms at {OVER_THE_CUT:,}"


# ---------------------------------------------------------------- core/loading.py


def test_json_depth_prescan_refuses_200000_open_brackets_at_once():
    """Refused by the bracket pre-scan, before any parsing: within 2 s of CPU (it takes milliseconds), and linear."""
    took, outcome, shown = finishes(lambda: parse_json("[" * 200_000, "deep.json"), "200,000 open brackets", cpu_limit=2.0)
    assert outcome == "error" and f"nested deeper than {MAX_DEPTH}" in shown, shown

    def refused(text: str) -> None:
        with pytest.raises(CatalogError, match="nested deeper"):
            parse_json(text, "deep.json")

    assert_grows_linearly(lambda n: "[" * n, refused, 200_000, "open brackets")


@pytest.mark.parametrize("kind, make", [
    ("escaped quotes in a string", lambda n: '["' + '\\"' * (n // 2) + '"]'),
    ("brackets inside a string", lambda n: '["' + "[{" * (n // 2) + '"]'),
    ("a flat list", lambda n: "[" + "0," * (n // 2) + "0]"),
    ("alternating depth", lambda n: "[" + "[]," * (n // 3) + "[]]"),
], ids=["escapes", "string_brackets", "flat", "shallow_lists"])
def test_json_parsing_grows_linearly(kind, make):
    assert_grows_linearly(make, lambda text: parse_json(text, "x.json"), 50_000, kind)
    took, outcome, shown = finishes(lambda: len(parse_json(make(1_000_000), "x.json")), kind)
    assert outcome == "value", shown


def test_a_jsonl_file_of_long_pathological_lines_is_read_or_refused_in_bounded_time(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(['{"case_id": "' + "\\\\" * 100_000 + '"}', "[" * 200_000, '{"x": ' + "1" * 200_000 + "}"]))
    took, outcome, shown = finishes(lambda: load_jsonl(path, _AnyRecord, "case_id"), "pathological JSONL")
    assert outcome == "error" and "cases.jsonl" in shown, shown


class _AnyRecord:  # never reached: the second line is refused before any record is validated
    @staticmethod
    def model_validate_json(line: str, strict: bool = True) -> Any:  # pragma: no cover
        return line


@pytest.mark.parametrize("kind, make", [
    ("a flow sequence 200,000 deep", lambda n: "[" * n),
    ("a block mapping 200,000 deep", lambda n: "".join(f"{' ' * i}k:\n" for i in range(min(n, 2_000)))),
    ("an alias bomb", lambda n: "a: &a [" + ",".join(["x"] * 10) + "]\n" + "".join(
        f"{c}: &{c} [" + ",".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))),
], ids=["deep_flow", "deep_block", "alias_bomb"])
def test_yaml_limits_are_checked_before_deep_or_expanding_work(kind, make, tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(make(200_000))
    took, outcome, shown = finishes(lambda: load_yaml(path), kind, cpu_limit=5.0)  # each takes well under 0.5 s
    assert outcome == "error" and "bomb.yaml" in shown, shown


def test_yaml_control_character_scan_grows_linearly():
    """The scan for forbidden characters is one class over the text: a NUL after 400,000 characters is found at once."""
    def make(n: int) -> str:
        return "notes: |\n" + "  line of text\n" * (n // 15) + "  \x00\n"

    def refused(text: str) -> None:
        with pytest.raises(CatalogError, match="U\\+0000"):
            parse_yaml(text, "notes.yaml")

    assert_grows_linearly(make, refused, 100_000, "control character scan")


# ---------------------------------------------------------------- catalog/css/sentences.py


@pytest.mark.parametrize("kind, make", [
    ("one unpunctuated line", lambda n: ("the patient had surgery after resection of the tumour " * (n // 54 + 1))[:n]),
    ("hard-wrapped lines", lambda n: "the plan is to continue\nwith the regimen and restage\n" * (n // 52)),
    ("a pipe table", lambda n: "| Stage | IIB | HER2 | positive |\n" * (n // 33)),
    ("many dates", lambda n: "Seen 12/03/2025; 14.01.26 and Dec 25. " * (n // 38)),
    ("only full stops", lambda n: "." * n),
], ids=["unpunctuated", "wrapped", "pipe_table", "dates", "full_stops"])
def test_reading_a_packet_as_statements_grows_linearly(kind, make):
    assert_grows_linearly(make, statements, 50_000, kind)
    took, outcome, shown = finishes(lambda: len(statements(make(400_000))), kind)
    assert outcome == "value", shown


# ---------------------------------------------------------------- analysis/side_by_side.py


def test_side_by_side_sets_unchanged_lines_aside_in_linear_time():
    def pair(n: int) -> tuple[str, str]:
        lines = [f"Line {i}: the patient was reviewed in clinic and remains well." for i in range(n // 60)]
        edited = list(lines)
        edited[len(lines) // 2] = "Line X: the patient had a resection of the primary tumour."
        return "\n".join(lines), "\n".join(edited)

    assert_grows_linearly(pair, lambda texts: word_diff(*texts), 50_000, "one edited line in a long packet")
    before, after = pair(200_000)
    assert "<del>" in word_diff(before, after) and "resection" in word_diff(before, after)

