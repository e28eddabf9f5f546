"""The README and docs/ say only true things about the repository: links resolve, commands name real things.

Every relative link in README.md and docs/*.md must reach a file (and a `#anchor` a heading of that file);
every command in a fenced bash block must name something that exists: `inspect eval tasks/<x>` or
`clinical_cf/<x>` a registered task (and its `-T` names that task's parameters), `--scorer clinical_cf/<x>`
a registered scorer, `make <t>` a Makefile target, `clinical-cf ...` a command line the CLI's own
argparse parser accepts, `python -m clinical_cf...` an importable module, and a path into one of the
repository's folders a file or folder that is there. The README stays under 250 lines.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shlex
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from inspect_ai.util import registry_info

from clinical_cf.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# [text](target) or [text](target "title"), not an image's alt text mistaken for a link's; bounded, no nesting.
LINK = re.compile(r"(?<!!)\[[^\]\n]{0,500}\]\(([^)\s]{1,500})(?:\s+\"[^\"\n]{0,200}\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# Usage notation inside a command: `[--families D]` is checked as `--families D`, `PATH...` as `PATH`.
OPTIONAL_GROUP = re.compile(r"\s\[([^\]\n]*)\]")
SHELL_BLOCK_LANGUAGES = {"bash", "sh", "shell", "console"}


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language tag, the line it opens on and its lines."""

    language: str
    line: int
    lines: tuple[str, ...]


def fenced_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    fence: str | None = None
    language, start, lines = "", 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is None:
            if opening:
                fence, language, start, lines = opening.group(1), opening.group(2).lower(), number, []
        elif line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            blocks.append(Block(language, start, tuple(lines)))
            fence = None
        else:
            lines.append(line)
    return blocks


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced blocks, with inline code blanked out (a link shown as code is not a link)."""
    out, fence = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            out.append((number, INLINE_CODE.sub("``", line)))
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.strip().lower().replace("`", "")
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return frozenset(out)


def broken_links(path: Path) -> list[str]:
    """Each relative link of a markdown file that does not reach a file, or whose anchor is not a heading there."""
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in LINK.finditer(line):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto: ...
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not resolved.exists():
                problems.append(f"{where}: no such file {resolved}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where}: no heading #{anchor} in {resolved.name}")
    return problems


@cache
def registered() -> dict[str, dict[str, tuple[str, ...]]]:
    """Registered object names by type ('task', 'scorer', ...) -> parameters, from the package's Inspect entry point."""

    [entry] = [e for e in importlib.metadata.entry_points(group="inspect_ai") if e.name == "clinical_cf"]
    entry.load()
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for name, module in list(sys.modules.items()):
        if not (name == "clinical_cf" or name.startswith("clinical_cf.")) or module is None:
            continue
        for obj in list(vars(module).values()):
            if not callable(obj):
                continue
            try:
                info = registry_info(obj)
            except Exception:  # not a registry object
                continue
            if info is not None and info.name.startswith("clinical_cf/"):
                found.setdefault(info.type, {})[info.name] = tuple(info.metadata.get("params", ()))
    return found


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(m.group(1) for m in re.finditer(r"(?m)^([A-Za-z0-9_.-]+)\s*:(?!=)", text))


@cache
def repo_folders() -> frozenset[str]:
    """Top-level folders a command's path may point into ('logs' is an output folder, its files come and go)."""
    return frozenset(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")) - {"logs", "build"}


def shell_commands(block: Block) -> list[list[str]]:
    """Each simple command of a bash block as words: comments dropped, continuations joined, usage notation removed."""
    joined, pending = [], ""
    for line in block.lines:
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined.append(pending + stripped)
        pending = ""
    if pending:
        joined.append(pending)
    commands = []
    for line in joined:
        line = OPTIONAL_GROUP.sub(r" \1", " " + line)
        try:
            words = shlex.split(line, comments=True)
        except ValueError as error:
            raise AssertionError(f"unparseable shell line {line!r}: {error}") from error
        command: list[str] = []
        for word in [*words, ";"]:
            if word in {";", "&&", "||", "|", "&"} or word.endswith((";", "&")) and len(word) > 1 and word[-2] != "\\":
                if word not in {";", "&&", "||", "|", "&"}:
                    command.append(word.rstrip(";&"))
                if command:
                    commands.append(command)
                command = []
            else:
                command.append(word)
    return commands


def task_name(target: str) -> str | None:
    """`tasks/css_family_d`, `tasks/css_family_d/css_family_d.py` or `clinical_cf/css_family_d` -> `clinical_cf/css_family_d`."""
    for prefix in ("tasks/", "clinical_cf/"):
        if target.startswith(prefix):
            name = target[len(prefix):].split("@")[-1].split("/")[0].removesuffix(".py")
            return f"clinical_cf/{name}"
    return None


def check_inspect(words: list[str]) -> list[str]:
    problems = []
    tasks = registered().get("task", {})
    if len(words) > 2 and words[1] in {"eval", "eval-set"}:
        targets = []
        for word in words[2:]:
            if word.startswith("-"):
                break
            targets.append(word)
        for target in targets:
            name = task_name(target)
            if name is None or name not in tasks:
                problems.append(f"`inspect {words[1]} {target}`: not a registered task")
                continue
            for flag, value in zip(words, words[1:], strict=False):
                if flag == "-T" and value.split("=", 1)[0] not in tasks[name]:
                    problems.append(f"`{name} -T {value}`: the task has no parameter {value.split('=', 1)[0]!r}")
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "--scorer" and value not in registered().get("scorer", {}):
            problems.append(f"`--scorer {value}`: not a registered scorer")
    return problems


def check_clinical_cf(words: list[str]) -> list[str]:
    arguments = [w.removesuffix("...") for w in words[1:]]
    try:
        build_parser().parse_args(arguments)
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            return [f"`{shlex.join(words)}`: the clinical-cf parser refuses it (exit {exit_.code})"]
    return []


def check_paths(words: list[str]) -> list[str]:
    problems = []
    registry_names = {name for names in registered().values() for name in names}
    for word in words[1:]:
        value = word.split("=", 1)[1] if "=" in word and not word.startswith("-") else word
        if "<" in value or "*" in value or "://" in value or value in registry_names:
            continue  # a placeholder, a glob, a URL or a registered name such as clinical_cf/judge_direction
        first = value.split("/", 1)[0]
        if "/" in value and first in repo_folders() and not (ROOT / value).exists():
            problems.append(f"`{value}`: no such file or folder in the repository")
    return problems


def command_problems(block: Block, source: Path) -> list[str]:
    problems = []
    for words in shell_commands(block):
        if not words or "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value before a command
        if not words:
            continue
        program = Path(words[0]).name
        if program == "inspect":
            problems += check_inspect(words)
        elif program == "make":
            targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
            problems += [f"`make {t}`: no such Makefile target" for t in targets if t not in make_targets()]
        elif program == "clinical-cf":
            problems += check_clinical_cf(words)
        elif program.startswith("python") and words[1:2] == ["-m"] and words[2].startswith("clinical_cf"):
            if importlib.util.find_spec(words[2]) is None:
                problems.append(f"`python -m {words[2]}`: no such module")
        problems += check_paths(words)
    return [f"{source.relative_to(ROOT)}:{block.line}: {p}" for p in problems]


def shell_blocks(path: Path) -> list[Block]:
    return [b for b in fenced_blocks(path.read_text(encoding="utf-8")) if b.language in SHELL_BLOCK_LANGUAGES]


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines; the rest belongs in docs/"


def test_readme_links_every_docs_page():
    linked = {m.group(1).partition("#")[0] for _, line in prose_lines(README.read_text(encoding="utf-8"))
              for m in LINK.finditer(line)}
    assert {p.relative_to(ROOT).as_posix() for p in DOCS} <= linked


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path):
    assert broken_links(path) == []


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_commands_name_real_tasks_targets_verbs_and_files(path):
    blocks = shell_blocks(path)
    if path == README:
        assert any("make test" in line for b in blocks for line in b.lines), "the README's commands are gone"
    problems = [p for block in blocks for p in command_problems(block, path)]
    assert problems == []


def test_checks_catch_broken_links_and_commands(tmp_path, monkeypatch):
    """The checkers themselves: each kind of mistake is reported, a correct page is not."""
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n[ok](docs/page.md#a-section) [ok](#title) `[not a link](nowhere.md)` [web](https://example.org)\n"
        "[gone](docs/missing.md) [bad anchor](docs/page.md#no-such-section) [here](#nope)\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 3 and all(name in " ".join(problems) for name in ("missing.md", "#no-such-section", "#nope"))

    good = Block("bash", 1, ("make test-fast   # comment", "inspect eval tasks/css_family_d -T residue=keep \\",
                             "  --limit 3", "clinical-cf report logs/ --out report/"))
    monkeypatch.undo()
    assert command_problems(good, README) == []
    bad = Block("bash", 1, ("make no-such-target", "inspect eval tasks/css_family_z",
                            "inspect eval clinical_cf/medpic -T bogus=1", "clinical-cf frobnicate",
                            "python -m clinical_cf.no_such_module", "cat catalog/css/missing.yaml",
                            "inspect score logs/x.eval --scorer clinical_cf/no_such_scorer"))
    found = " ".join(command_problems(bad, README))
    for expected in ("no-such-target", "css_family_z", "bogus", "frobnicate", "no_such_module", "missing.yaml", "no_such_scorer"):
        assert expected in found, (expected, found)


ARGUMENT_TABLE_HEADERS = {"argument", "task arg"}
TASK_ARGUMENT = re.compile(r"-T\s?([A-Za-z_]\w{0,80})=([^\s`]{0,200})")


def documented_task_arguments(path: Path) -> list[tuple[int, str]]:
    """Every `-T name=` in the text and every name in the first column of an argument table.

    `-T name=value`, `-T bad=...` and `-T x=<...>` are notation, not arguments."""
    found: list[tuple[int, str]] = []
    in_table = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for match in TASK_ARGUMENT.finditer(line):
            raw = match.group(2)
            if not (raw.startswith(("...", "<")) or raw.rstrip(".,;:)") in ("value", "VALUE")):
                found.append((number, match.group(1)))
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if not cells:
            in_table = False
        elif cells[0].lower() in ARGUMENT_TABLE_HEADERS:
            in_table = True
        elif in_table and not set(cells[0]) <= set("-: "):
            found += [(number, name) for name in re.findall(r"`([A-Za-z_]\w*)`", cells[0])]
    return found


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_documented_task_arguments_exist(path):
    """A task argument named in the docs (`-T name=...`, or a row of an argument table) is a parameter of some task."""
    parameters = {p for params in registered().get("task", {}).values() for p in params}
    unknown = [f"{path.relative_to(ROOT)}:{number}: {name}" for number, name in documented_task_arguments(path)
               if name not in parameters]
    assert unknown == []


def test_argument_check_reads_tables_and_commands(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Run with `-T scale=2` or -T name=value.\n\n| argument | default |\n| --- | --- |\n"
                    "| `cases` / `bogus_arg` | none |\n\nAfter the table: `not_an_argument`.\n", encoding="utf-8")
    assert [name for _, name in documented_task_arguments(page)] == ["scale", "cases", "bogus_arg"]
