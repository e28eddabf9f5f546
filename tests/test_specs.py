"""The suite specs (`clinical_cf.suites`) hold real references, and the tools read them.

- no spec field is a `"module:function"` string: schemas are classes, loaders, scoring contracts,
  tables and banners are callables;
- every input kind the validator and `clinical-cf validate --kind` know is declared by exactly one
  suite, and each suite's bundled file of that kind validates as that kind;
- every task a suite registers is built by `build_task` from a spec of that suite, and logs the
  suite (and, for the CSS tasks with a model under test, its setting).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import inspect
import re
import sys
from pathlib import Path

import pytest
from inspect_ai.util import registry_info
from pydantic import BaseModel
from test_layers import setup_module_of

from clinical_cf.cli import build_parser, main
from clinical_cf.core.locking import read_lock
from clinical_cf.exports.register import REGISTER_DIR, entry_path
from clinical_cf.inputs import validate_file
from clinical_cf.registration import PUBLISHED_PATH, published
from clinical_cf.scoring_contract import part_hash
from clinical_cf.suites import SUITES, create_task, display_path, input_kinds, suite_of_task, task_folders, task_function
from clinical_cf.tasks.arguments import annotations_of
from helpers import HANDWRITTEN_CASES


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list)):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("name", list(SUITES))
def test_no_spec_reference_is_a_string(name):
    suite = SUITES[name]
    for item in dataclasses.fields(suite):
        for text in _strings(getattr(suite, item.name)):
            assert not re.fullmatch(r"[\w.]+:\w+", text), f"{name}.{item.name} holds a string reference {text!r}"
    assert issubclass(suite.schema, BaseModel) and callable(suite.loader)
    assert all(callable(f) for f in (suite.scoring, suite.prompts, *suite.report_tables, *suite.report_banners))
    assert all(callable(item.load) for item in suite.inputs)
    assert suite.scorers and all(registry_info(s).type == "scorer" for s in suite.scorers)
    assert all(path.is_file() for path in suite.extra_published)


def _small(name: str) -> dict[str, str]:
    """Arguments that keep a task quick to build: the hand-written cases (record-less, so their regex edits are drafts,
    scored only with `unreviewed=allow`); the bundled cohort's samples are tests/tasks/test_bundled_samples.py's.
    Family B applies to none of them (catalog v3 drops B1 on the hand-written packets), and the editor audit needs
    cases with a structured record."""

    parameters = inspect.signature(task_function(name)).parameters
    if "cases" not in parameters or name in ("css_family_b", "css_editor_audit"):
        return {}
    return {"cases": str(HANDWRITTEN_CASES), **({"unreviewed": "allow"} if "unreviewed" in parameters else {})}


@functools.cache
def _built(name: str):
    """Each task built once for the tests below (building every task is most of this file's time)."""
    return create_task(name, **_small(name))


@pytest.mark.slow  # builds every task of every suite (over 3 s)
def test_every_scorer_a_suites_tasks_use_is_in_its_spec():
    """The spec's scorers are the ones its tasks are built with (besides the registration check every task gets)."""
    for suite in SUITES.values():
        declared = {registry_info(s).name for s in suite.scorers}
        for name in suite.tasks:
            used = {registry_info(s).name for s in _built(name).scorer} - {"clinical_cf/registration_check"}
            assert used <= declared, f"{name} uses scorers {sorted(used - declared)} that suite {suite.name!r} does not declare"


def test_every_scorer_declares_its_metrics():
    for suite in SUITES.values():
        metrics = suite.metrics()
        assert metrics and all(metrics.values()), suite.name
    assert "clinical_cf/css" in SUITES["css"].metrics()["clinical_cf/judge_direction"]


@pytest.mark.parametrize("kind", [k for k, item in input_kinds().items() if item.bundled is not None])
def test_each_bundled_input_validates_as_its_kind(kind):
    item = input_kinds()[kind]
    result = validate_file(item.bundled, kind)
    assert result.kind == kind and result.entries > 0


def test_the_cli_offers_the_specs_kinds():
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["validate", "x.yaml", "--kind", "no_such_kind"])
    for kind in input_kinds():
        assert parser.parse_args(["validate", "x.yaml", "--kind", kind]).kind == kind


def test_suite_of_task():
    assert suite_of_task("css_family_d").name == "css"
    assert suite_of_task("medpic_gf").name == "medpic"
    with pytest.raises(ValueError, match="no suite"):
        suite_of_task("nope")


ROOT = Path(__file__).resolve().parents[1]


def folder_problems(tasks_dir: Path) -> list[str]:
    """What is wrong with the folders under `tasks_dir` as tasks, each naming the folder."""
    problems = []
    for folder in sorted(p for p in tasks_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        name = folder.name
        if not (folder / f"{name}.py").is_file():
            problems.append(f"tasks/{name}/ has no {name}.py (a task folder holds its @task function in <name>.py)")
            continue
        owners = [s for s in SUITES if name == s or name.startswith(f"{s}_")]
        if len(owners) != 1:
            problems.append(f"tasks/{name}/ belongs to {len(owners)} suites: name it after one (<suite> or <suite>_<what>)")
    return problems


def test_every_task_folder_is_a_task_of_one_suite():
    assert folder_problems(ROOT / "tasks") == []
    assert sorted(t for s in SUITES.values() for t in s.tasks) == sorted(task_folders())


def test_a_folder_that_is_not_a_task_is_named(tmp_path):
    (tmp_path / "css_family_f").mkdir()
    (tmp_path / "orphan").mkdir()
    (tmp_path / "orphan" / "orphan.py").write_text("", encoding="utf-8")
    assert folder_problems(tmp_path) == [
        "tasks/css_family_f/ has no css_family_f.py (a task folder holds its @task function in <name>.py)",
        "tasks/orphan/ belongs to 0 suites: name it after one (<suite> or <suite>_<what>)",
    ]


@pytest.mark.parametrize("name", task_folders())
def test_every_task_folder_builds_by_name_from_its_suites_spec(name):
    task = _built(name)
    assert task.metadata["suite"] == suite_of_task(name).name
    assert len(task.dataset) > 0


@pytest.mark.parametrize("name", task_folders())
def test_a_public_tasks_arguments_are_its_builders_with_the_same_declarations(name):
    """A variant's signature is its builder's, with the builder's declarations and defaults (none written twice)."""

    task = task_function(name)
    declared = annotations_of(task)
    assert declared, name
    builder = getattr(task, "variant_of", None)
    if builder is None:  # its module holds its own SPEC (the audits, the observation agent, sensitivity, workflow)
        assert getattr(sys.modules[task.__module__], "SPEC", None) is not None, f"{name} is neither a variant nor a spec's builder"
        return
    base, defaults = annotations_of(builder), inspect.signature(builder).parameters
    for argument, annotation in declared.items():
        assert base.get(argument) == annotation, f"{name}: argument {argument!r} is declared differently from {builder.__name__}"
    assert not set(task.fixed) & set(declared), f"{name} shows an argument it fixes"
    changed = {a for a, p in inspect.signature(task).parameters.items() if p.default != defaults[a].default}
    assert changed <= {"tuples", "controls"} if name == "css_agent_family_d" else not changed, name


# ---------------------------------------------------------------- every piece of a suite, each missing one named


def suite_problems(
    suite, docs_dir: Path = ROOT / "docs", register_dir: Path | None = None, published_path: Path | None = None,
    tests_dir: Path = ROOT / "tests",
) -> list[str]:
    """What a suite lacks (docs/adding-a-suite.md), each line naming the piece and the command that makes it."""

    register_dir = REGISTER_DIR if register_dir is None else register_dir
    published_path = PUBLISHED_PATH if published_path is None else published_path
    name, problems = suite.name, []
    if suite.main_task not in suite.tasks:
        problems.append(f"{name}: no main task tasks/{name}/{name}.py")
    data_files = setup_module_of().DATA_FILES
    for path in (*suite.catalogs, suite.data, *suite.extra_published):
        shown = display_path(path)
        if not path.is_file():
            problems.append(f"{name}: {shown} is missing" + (f" (run `python -m {suite.generator}`)" if path == suite.data else ""))
            continue
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in data_files):
            problems.append(f"{name}: {shown} would not be shipped: no pattern in setup.py's DATA_FILES matches it")
        if not read_lock(path).registered:
            problems.append(f"{name}: {shown} does not match a lock: run `clinical-cf catalog lock {shown}`")
    if suite.data.is_file():
        try:
            if not suite.loader(suite.data):
                problems.append(f"{name}: {display_path(suite.data)} has no records")
        except Exception as ex:  # the loader's own error names the file, the entry and the field
            problems.append(f"{name}: {display_path(suite.data)} does not load: {ex}")
    kinds = input_kinds({**SUITES, name: suite})
    if not suite.inputs:
        problems.append(f"{name}: declares no input kind (Suite.inputs): `clinical-cf validate` cannot check its files")
    for item in suite.inputs:
        if item.bundled is not None and item.bundled.is_file():
            try:
                validate_file(item.bundled, kinds=kinds)
            except Exception as ex:
                problems.append(f"{name}: the bundled {item.kind} file is not detected and valid as {item.kind}: {ex}")
    if not suite.scorers:
        problems.append(f"{name}: declares no scorer (Suite.scorers)")
    tests = "\n".join(path.read_text(encoding="utf-8") for path in sorted(tests_dir.rglob("test_*.py")))
    for scorer_name, metrics in suite.metrics().items():
        function = scorer_name.rpartition("/")[2]  # the registry name less its package: what a test calls
        if not metrics:
            problems.append(f"{name}: scorer {scorer_name} declares no metrics (@scorer(metrics=...))")
        if not re.search(rf"\b{re.escape(function)}\b", tests):
            problems.append(f"{name}: scorer {function} has no test: no file tests/**/test_*.py names it "
                            f"(`make lint` fails on it too, IETS006; docs/adding-a-suite.md)")
    parts = suite.scoring_parts()
    if not set(suite.prompts()) <= set(parts):
        problems.append(f"{name}: prompts {sorted(set(suite.prompts()) - set(parts))} are not parts of its scoring contract")
    if not suite.scoring():
        problems.append(f"{name}: its scoring contract (Suite.scoring) lists nothing that decides a score")
    for part, value in parts.items():
        try:
            part_hash(value)
        except TypeError as ex:
            problems.append(f"{name}: scoring part {part}: {ex}")
    if not (docs_dir / f"{name}.md").is_file():
        problems.append(f"{name}: no page docs/{name}.md (the README's task table links to it)")
    record = published(published_path).get(name)
    if record is None:
        problems.append(f"{name}: no published version: run `clinical-cf export register --suite {name}`")
    elif all(p.is_file() for p in suite.comparability_files) and record["fingerprint"] != suite.fingerprint():
        problems.append(f"{name}: its published fingerprint is stale: run `clinical-cf export register --suite {name}`")
    for task in suite.tasks:
        if not entry_path(task, register_dir).is_file():
            problems.append(f"{name}: task {task} has no Register entry register/{task}/eval.yaml: run `clinical-cf export register`")
    return problems


@pytest.mark.parametrize("name", list(SUITES))
def test_every_suite_has_every_piece(name):
    assert suite_problems(SUITES[name]) == []


def test_catalog_lock_and_check_take_the_kind_the_validator_asks_for(tmp_path, capsys):
    """`catalog lock` once said "pass --kind" and had no --kind; the kinds are the specs'."""

    path = tmp_path / "mine.jsonl"
    path.write_text(SUITES["sensitivity"].data.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["catalog", "lock", str(path), "--kind", "vignettes"]) == 0 and (tmp_path / "mine.jsonl.lock").is_file()
    assert main(["catalog", "check", str(path), "--kind", "vignettes"]) == 0
    assert main(["catalog", "lock", str(path), "--kind", "rules"]) != 0
    assert "looks like a vignettes file, not rules" in capsys.readouterr().err
