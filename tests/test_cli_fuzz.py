"""A fuzzer over every `clinical-cf` command (issue 46): hostile values for every argument of every subcommand.

The commands and their arguments are read from the parser itself (`build_parser`), never listed here, so a new
command or option is fuzzed the day it is added. Each example is one command line: a subcommand, its required
arguments and some of its optional ones, each value drawn from hostile values (secret-shaped strings, terminal
escapes and bidi controls, paths into the bundled data or through symlinks to it, missing folders, empty, huge,
wrongly encoded files, files whose text carries terminal escapes) or from valid ones (its choices, a valid file of
the right kind). `main(argv)` runs in-process. Properties, each over every example:

- **no traceback**: the command returns or exits; nothing else escapes `main`;
- **a clear line**: a non-zero exit prints something to stderr, and a usage error names the argument;
- **no secret echoed**: a secret-shaped value is never printed whole, neither in an error nor elsewhere;
- **terminal-safe**: nothing printed holds a control character (ESC, BEL, C1) or a bidi control: a string taken from
  a file, a log or an argument is made safe before it reaches the terminal;
- **writes stay where they are named**: nothing under the bundled data or the test's folder changes outside the
  `--out` paths the command line names and the files the command says it rewrites (`REWRITES_ITS_INPUT`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_cf.catalog.css import CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import FrozenCounterfactual
from clinical_cf.cli import build_parser, main
from clinical_cf.core.options import output_path
from clinical_cf.core.outputs import bundled_data_dirs
from helpers import HANDWRITTEN_CASES

SECRETS = ("sk-proj-Zq8vN3xR7tLw2Y9bK4mP6sD1fH5jG0cA", "ghp_R2d2C3poL1ke5kyw4lkerH4nS0l0Ch3wb4cc4")
HOSTILE_TEXT = (
    *SECRETS, "", " ", "-1", "0", "1e999", "nan", "inf", "A" * 3000, "\x1b[2J\x1b[31mred\x1b[0m", "\x1b]0;pwned\x07",
    "case\u202eevil", "ü\u200bnicode", "../../../../etc/passwd", "~", "a,b,,c", "D", "ABCDEN", "1:2=3",
)

# Commands that rewrite a file they are given, as their help says (a lock, a review, recorded answers): the argument.
REWRITES_ITS_INPUT = {("catalog", "lock"): "catalog", ("counterfactuals", "lock"): "path",
                      ("counterfactuals", "review"): "path", ("cases", "answer"): "questions"}
# Maintainer commands whose default target is the checkout's own data (a re-registration, the cohort, the Register):
# fuzzed with an --out (or a file of the test's), never with their default.
WRITES_THE_CHECKOUT_BY_DEFAULT = {("catalog", "lock"), ("generate", "css"), ("export", "register")}

# ESC, BEL, C1 controls and the other Cc characters but newline and tab; bidi and other format controls (Cf).
def unsafe_characters(text: str) -> list[str]:
    return sorted({c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t") or unicodedata.category(c) == "Cf"})


# ---------------------------------------------------------------- the commands, read from the parser

def leaf_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every runnable subcommand (a parser without subcommands of its own), by its words."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {path: parser}
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    for action in subs:
        for name, sub in action.choices.items():
            found.update(leaf_commands(sub, (*path, name)))
    return found


COMMANDS = leaf_commands(build_parser())


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


# ---------------------------------------------------------------- the world the values point into

@dataclass
class World:
    """Files made once per test module: valid inputs, hostile files, links into the bundled data, and a fresh
    folder per example for outputs."""

    root: Path
    files: dict[str, Path] = field(default_factory=dict)
    counter: itertools.count = field(default_factory=itertools.count)

    def fresh(self, name: str) -> Path:
        return self.root / "out" / f"{next(self.counter)}" / name


def make_world(root: Path) -> World:
    world = World(root)
    f = world.files
    (root / "in").mkdir()
    f["cases"] = Path(shutil.copy(HANDWRITTEN_CASES, root / "in" / "cases.jsonl"))
    f["catalog"] = Path(shutil.copy(CATALOG_PATH, root / "in" / "interventions.yaml"))
    f["empty"] = root / "in" / "empty.jsonl"
    f["empty"].write_bytes(b"")
    f["huge"] = root / "in" / "huge.jsonl"
    with f["huge"].open("wb") as handle:  # sparse: past every size limit without writing 40 MB
        handle.truncate(40 * 1024 * 1024)
    f["utf16"] = root / "in" / "utf16.jsonl"
    f["utf16"].write_bytes(HANDWRITTEN_CASES.read_text(encoding="utf-8").encode("utf-16"))
    f["latin1"] = root / "in" / "latin1.yaml"
    f["latin1"].write_bytes("name: caf\xe9\nx: \xff\xfe\n".encode("latin-1"))
    escaped = [json.loads(line) for line in HANDWRITTEN_CASES.read_text(encoding="utf-8").splitlines()[:2]]
    escaped[0]["case_id"] = "x\x1b[2J\x1b]0;pwned\x07\u202eevil"
    escaped[1]["cancer_type"] = "\x1b[31mbreast\x1b[0m"
    f["escapes"] = root / "in" / "escapes.jsonl"
    f["escapes"].write_text("".join(json.dumps(r) + "\n" for r in escaped), encoding="utf-8")
    f["escapes_yaml"] = root / "in" / "escapes.yaml"
    f["escapes_yaml"].write_text("interventions:\n  - id: \"\\e[2Jx\\a\"\n", encoding="utf-8")
    f["secret_name"] = root / "in" / f"{SECRETS[0]}.jsonl"
    f["secret_name"].write_text("{}\n")
    f["directory"] = root / "in"
    f["missing"] = root / "missing" / "nowhere.jsonl"
    bundled = bundled_data_dirs()[0]
    f["bundled_lock"] = bundled / "css" / "cases.jsonl.lock"
    f["bundled_catalog"] = bundled / "css" / "interventions.yaml"
    f["bundled_folder"] = bundled / "css"
    f["link_to_bundled"] = root / "in" / "linked.yaml"
    f["link_to_bundled"].symlink_to(f["bundled_catalog"])
    f["link_dir_to_bundled"] = root / "in" / "linked_dir"
    f["link_dir_to_bundled"].symlink_to(bundled / "css", target_is_directory=True)
    return world


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    return make_world(tmp_path_factory.mktemp("fuzz"))


# ---------------------------------------------------------------- command lines

def _value(action: argparse.Action, world: World, draw) -> str:
    kinds = ["file", "text"] + (["choice"] * 3 if action.choices else []) + (["out"] * 3 if action.type is output_path else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "choice":
        return draw(st.sampled_from(sorted(map(str, action.choices))))
    if kind == "out":
        return str(world.fresh(draw(st.sampled_from(["o", "o.jsonl", "o.csv", "o.yaml"]))))
    if kind == "file":
        return str(world.files[draw(st.sampled_from(sorted(world.files)))])
    return draw(st.sampled_from(HOSTILE_TEXT))


@st.composite
def command_lines(draw, world: World) -> tuple[tuple[str, ...], list[str]]:
    words = draw(st.sampled_from(sorted(COMMANDS)))
    argv = list(words)
    for action in arguments(COMMANDS[words]):
        needed = action.required or (not action.option_strings and action.nargs not in ("?", "*"))
        if words in WRITES_THE_CHECKOUT_BY_DEFAULT and (action.dest in ("out", "catalog")):
            needed = True
        if not needed and not draw(st.booleans()):
            continue
        if action.nargs == 0:  # a flag (store_true)
            argv.append(action.option_strings[0])
            continue
        count = draw(st.integers(1, 2)) if action.nargs in ("+", "*") else 1
        values = [_value(action, world, draw) for _ in range(count)]
        if words in WRITES_THE_CHECKOUT_BY_DEFAULT:
            values = [v for v in values if not _into_bundled(v)] or [str(world.fresh("o.yaml"))]
        if action.option_strings:
            for value in values:
                argv += [action.option_strings[0], value]
        else:
            argv += values
    return words, argv


def _into_bundled(value: str) -> bool:
    try:
        resolved = Path(value).resolve()
        return any(root == resolved or root in resolved.parents for root in bundled_data_dirs()) or Path(value).is_symlink()
    except OSError:  # a name too long for the file system names no file
        return False


# ---------------------------------------------------------------- running one and checking it

@dataclass
class Outcome:
    code: int | None
    out: str
    err: str
    escaped: BaseException | None


def run(argv: list[str]) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    escaped = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as ex:
            code = ex.code if isinstance(ex.code, int) else (0 if ex.code is None else 2)
            if isinstance(ex.code, str):
                err.write(ex.code + "\n")
        except BaseException as ex:  # noqa: BLE001 - what the property looks for: anything that escapes main
            escaped = ex
    return Outcome(code, out.getvalue(), err.getvalue(), escaped)


def snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under the roots, links not followed."""
    state: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                with contextlib.suppress(OSError):
                    info = path.lstat()
                    state[str(path)] = (info.st_size, info.st_mtime_ns)
    return state


def allowed_writes(words: tuple[str, ...], argv: list[str], world: World) -> list[Path]:
    """The paths a command line names for writing: its output arguments and the input it says it rewrites."""
    parser = COMMANDS[words]
    namespace = _parsed(parser, argv[len(words):])
    if namespace is None:
        return [world.root / "out"]
    allowed = [world.root / "out", world.root / "cache", world.root / "home"]
    for action in arguments(parser):
        value = getattr(namespace, action.dest, None)
        if value is None:
            continue
        if action.type is output_path or action.dest == REWRITES_ITS_INPUT.get(words):
            allowed += [Path(v) for v in (value if isinstance(value, list) else [value])]
    return allowed


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | None:
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            return parser.parse_args(argv)
        except SystemExit:
            return None


def _within(path: str, allowed: list[Path]) -> bool:
    p = Path(path)
    for a in allowed:
        a_abs = a if a.is_absolute() else Path.cwd() / a
        # A named file's own siblings it documents: its lock, its questions file, its temporary file.
        # ... and the lock a command holds on a file it rewrites (`.NAME.busy`, clinical_cf.core.locking).
        if p == a_abs or a_abs in p.parents or p.parent == a_abs.parent and p.name.startswith((a_abs.name, f".{a_abs.name}.busy")):
            return True
        if str(p).startswith(str(a_abs.with_suffix(""))):
            return True
    return False


def problems_of(words: tuple[str, ...], argv: list[str], outcome: Outcome, changed: list[str]) -> list[str]:
    """Every property this command line broke, by name."""
    found = []
    printed = outcome.out + outcome.err
    if outcome.escaped is not None or "Traceback (most recent call last)" in printed:
        found.append(f"traceback: {type(outcome.escaped).__name__}: {str(outcome.escaped)[:200]}")
    if outcome.code not in (0, None) and not outcome.err.strip():
        found.append(f"silent: exit {outcome.code} with nothing on stderr")
    for secret in SECRETS:
        if secret in argv and secret[:12] in printed.replace(str(Path.cwd()), ""):
            found.append("unsafe: a secret-shaped value printed whole")
    unsafe = unsafe_characters(printed)
    if unsafe:
        found.append(f"unsafe: printed control characters {unsafe}")
    if changed:
        found.append(f"unsafe: wrote outside the named outputs: {changed[:3]}")
    return found


def fuzz_once(words: tuple[str, ...], argv: list[str], world: World) -> list[str]:
    roots = [world.root / "in", *bundled_data_dirs()]
    before = snapshot(*roots)
    outcome = run(argv)
    after = snapshot(*roots)
    allowed = allowed_writes(words, argv, world)
    changed = sorted(p for p in set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]}
                     if not _within(p, allowed))
    return problems_of(words, argv, outcome, changed)


def small_default_cohort(world: World, patch) -> None:
    """The commands' default cohort is the small handwritten one: the bundled cohort (5 MB) is read by other tests, and
    expanding it takes minutes; what is fuzzed here is the command line, not the cohort."""
    patch("clinical_cf.cli.CASES_PATH", world.files["cases"])
    patch("clinical_cf.catalog.css.CASES_PATH", world.files["cases"])


@pytest.fixture
def isolated_cli(world, monkeypatch):
    """Caches and home in the world's folder, the world as the working folder, no terminal on stdin."""
    small_default_cohort(world, monkeypatch.setattr)
    monkeypatch.setenv("CLINICAL_CF_CACHE_DIR", str(world.root / "cache"))
    monkeypatch.setenv("HOME", str(world.root / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(world.root / "cache"))
    monkeypatch.chdir(world.root)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return world


@given(data=st.data())
def test_every_command_line_ends_cleanly_safely_and_writes_only_what_it_names(isolated_cli, data):
    words, argv = data.draw(command_lines(isolated_cli))
    problems = fuzz_once(words, argv, isolated_cli)
    assert not problems, f"clinical-cf {' '.join(map(repr, argv))}: {problems}"


# ---------------------------------------------------------------- prompts, locks and rebuilds

PACKET = Path(__file__).parent / "fixtures" / "packets" / "text" / "mdt-gastric.txt"


class Terminal(io.StringIO):
    """A terminal on stdin whose user ends the input (Ctrl-D) or interrupts (Ctrl-C) at the first question."""

    def __init__(self, ending: type[BaseException]) -> None:
        super().__init__("")
        self.ending = ending

    def isatty(self) -> bool:
        return True

    def readline(self, *args) -> str:
        raise self.ending()


@pytest.mark.parametrize("ending", [EOFError, KeyboardInterrupt])
def test_input_ending_at_a_question_is_one_line_and_writes_nothing(ending, tmp_path, monkeypatch):
    out = tmp_path / "cases.jsonl"
    assert run(["cases", "import", str(PACKET), "--out", str(out)]).code == 1
    questions = tmp_path / "cases.questions.jsonl"
    before = questions.read_bytes()
    monkeypatch.setattr("sys.stdin", Terminal(ending))
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(ending()))
    outcome = run(["cases", "answer", str(questions), "--out", str(out)])
    assert outcome.escaped is None and outcome.code in (1, 130), outcome
    assert len(outcome.err.strip().splitlines()) == 1 and "Traceback" not in outcome.err
    assert not out.exists() and questions.read_bytes() == before


def test_a_set_held_by_another_process_is_one_line_naming_the_holder(tmp_path, monkeypatch):
    """A second process holds the set (a review being recorded): `counterfactuals lock` waits briefly, then one line."""
    out = tmp_path / "set"
    assert run(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "D",
                "--out", str(out)]).code == 0
    path = out / "counterfactuals.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from clinical_cf.core.locking import exclusive\n"
        f"with exclusive({str(path)!r}, 'counterfactuals review'):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr("clinical_cf.core.locking.WAIT_SECONDS", 0.2)
        before = path.read_bytes()
        outcome = run(["counterfactuals", "lock", str(path)])
        assert outcome.code == 2 and outcome.escaped is None
        assert "counterfactuals review" in outcome.err and "nothing was changed" in outcome.err
        assert path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()


def test_a_rebuild_never_discards_a_reviewers_decisions(tmp_path):
    out = tmp_path / "set"
    build = ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "D", "--out", str(out)]
    assert run(build).code == 0
    path = out / "counterfactuals.jsonl"
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    decisions = tmp_path / "decisions.jsonl"
    first = FrozenCounterfactual.model_validate(entries[0])
    decisions.write_text(json.dumps({"tuple_id": first.tuple_id, "decision": "approved", "reviewer": "dr-a",
                                     "content_sha256": first.content_sha256}) + "\n")
    assert run(["counterfactuals", "review", str(path), "--decisions", str(decisions)]).code == 0
    reviewed = path.read_bytes()
    outcome = run(build)
    assert outcome.code == 2 and "decision" in outcome.err and str(path) in outcome.err
    assert path.read_bytes() == reviewed
