"""docs/adding-a-suite.md, followed as written: its variant and its suite are built from the page's own code blocks in
a temporary folder (added to the packages' paths, as if the files were in the checkout), listed, built and scored,
and leaving out any piece fails naming it (tests/test_specs.py `suite_problems`)."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from test_specs import suite_problems

import clinical_cf.catalog
import clinical_cf.scorers
import clinical_cf.suites
import clinical_cf.tasks
from clinical_cf.analysis.logs import read_logs
from clinical_cf.analysis.parse_quality import parse_table
from clinical_cf.analysis.sections import build_report
from clinical_cf.cli import main
from clinical_cf.exports import docs
from clinical_cf.exports.register import export_register, released_published
from clinical_cf.inputs import validate_file
from clinical_cf.registration import published_version
from clinical_cf.suites import SUITES, create_task, input_kinds, task_folders, task_function
from helpers import MockModel

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "adding-a-suite.md"
BLOCK = re.compile(r"^```(\w+) (file|lines)=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
PACKAGES = {"catalog": clinical_cf.catalog, "scorers": clinical_cf.scorers, "clinical_cf/suites": clinical_cf.suites,
            "tasks": clinical_cf.tasks}
"""Where a file of the page goes: the package whose path the temporary folder extends."""
INSPECT = str(Path(sys.executable).with_name("inspect"))


def page_blocks() -> list[tuple[str, str, str]]:
    """(file or lines, path, text) of every block of the page that names a file."""
    return [(kind, path, text) for _, kind, path, text in BLOCK.findall(PAGE.read_text(encoding="utf-8"))]


def write_page_files(tmp: Path, monkeypatch, only: str) -> dict[str, Path]:
    """Write the page's files under `only` into `tmp`, each package's folder added to that package's path."""
    written = {}
    for kind, path, text in page_blocks():
        if kind == "file" and path.startswith(only):
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written[path] = target
    for prefix, package in PACKAGES.items():
        if (tmp / prefix).is_dir():
            monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp / prefix)])
    importlib.invalidate_caches()
    return written


@pytest.fixture
def clean_modules():
    """The page's modules are imported from a temporary folder: forget them afterwards."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("clinical_cf.catalog.labunits", "clinical_cf.scorers.labunits", "clinical_cf.suites.labunits",
                            "clinical_cf.tasks.labunits", "clinical_cf.tasks.css_family_d_add")):
            del sys.modules[name]


def test_the_page_names_every_file_of_its_suite_table():
    files = {path for kind, path, _ in page_blocks() if kind == "file"}
    table = set(re.findall(r"^\| `([^`]+)` \|", PAGE.read_text(encoding="utf-8"), re.MULTILINE))
    # The suite's table lists every file the page writes but the variant's (which has its own section).
    assert table == {f for f in files if not f.startswith("tasks/css_family_d_add/")}


def test_a_variant_by_the_recipe_builds_and_lists(tmp_path, monkeypatch, clean_modules):
    """One file written by hand; everything else that names it is generated."""
    [written] = write_page_files(tmp_path, monkeypatch, "tasks/css_family_d_add").values()
    assert "css_family_d_add" in task_folders() and "css_family_d_add" in SUITES["css"].tasks
    # Its package, registry line, README row and argument table are generated (into copies here).
    readme, arguments, registry = tmp_path / "README.md", tmp_path / "arguments.md", tmp_path / "_registry.py"
    shutil.copy(docs.README, readme)
    paths = {"tasks_dir": tmp_path / "tasks", "readme": readme, "arguments": arguments, "registry": registry}
    assert tmp_path / "tasks" / "css_family_d_add" / "__init__.py" in docs.stale(**paths)
    docs.write(**paths)
    assert docs.stale(**paths) == []
    assert "from clinical_cf.tasks.css_family_d_add.css_family_d_add import css_family_d_add" in registry.read_text(encoding="utf-8")
    assert "|  | `tasks/css_family_d_add` | Surgery status, additions only: a resection added (D2). |" in readme.read_text(encoding="utf-8")
    assert "## css_family_d_add" in arguments.read_text(encoding="utf-8")
    # It builds, selecting the one intervention, and takes the single-shot arguments only.
    task = create_task("css_family_d_add", controls="none", split="dev")
    assert len(task.dataset) > 0 and {s.metadata["intervention_id"] for s in task.dataset} == {"D2_add_resection"}
    assert "scale" in docs.argument_table("css_family_d_add") and "max_messages" not in docs.argument_table("css_family_d_add")


@pytest.mark.slow  # Inspect's CLI in a subprocess (about 5 s)
def test_inspect_lists_a_variant_by_the_recipe_from_its_file(tmp_path, monkeypatch, clean_modules):
    """As `inspect eval tasks/css_family_d_add` finds it: statically, from its file."""
    [written] = write_page_files(tmp_path, monkeypatch, "tasks/css_family_d_add").values()
    listed = subprocess.run([INSPECT, "list", "tasks", str(written.relative_to(tmp_path))], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert "css_family_d_add" in listed.stdout, listed.stderr[-2000:]


def _suite(tmp_path, monkeypatch):
    """The page's suite, written, registered by its two lines, generated, locked and published (into `tmp_path`)."""
    write_page_files(tmp_path, monkeypatch, "")
    [(_, _, lines)] = [b for b in page_blocks() if b[0] == "lines"]
    import_line, suites_line = lines.strip().splitlines()
    namespace: dict = {}
    exec(import_line, namespace)  # the first of the two shared lines, as written
    labunits = namespace["LABUNITS"]
    assert "LABUNITS" in suites_line and suites_line.startswith("SUITES")
    monkeypatch.setitem(SUITES, "labunits", labunits)  # the second
    importlib.import_module(labunits.generator).write_records()
    for path in (*labunits.catalogs, labunits.data):
        assert main(["catalog", "lock", str(path)]) == 0
    record = tmp_path / "published.json"
    monkeypatch.setattr("clinical_cf.tasks.build.published_version", lambda name: published_version(name, record))
    export_register(tmp_path / "register", ["labunits"], commit="0" * 40, published_path=record)
    return labunits, record


def test_a_suite_by_the_recipe_has_every_piece_and_builds(tmp_path, monkeypatch, clean_modules):
    labunits, record = _suite(tmp_path, monkeypatch)
    assert suite_problems(labunits, tmp_path / "docs", tmp_path / "register", record, tmp_path / "tests") == []
    # The page's scorer test passes on the page's scorer.
    spec = importlib.util.spec_from_file_location("page_scorer_test", tmp_path / "tests" / "scorers" / "test_labunits.py")
    page_test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page_test)
    ran = [name for name, test in vars(page_test).items() if name.startswith("test_") and asyncio.run(test()) is None]
    assert len(ran) == 2
    assert released_published(record)["labunits"].version == "1-A"
    assert {"lab_records", "lab_conversions"} <= set(input_kinds())
    assert validate_file(labunits.data).kind == "lab_records" and validate_file(labunits.catalogs[0]).entries == 2
    assert task_function("labunits").__doc__.startswith("Lab results in SI units")
    task = create_task("labunits")
    assert len(task.dataset) == 5 and task.version == "1-A" and task.metadata["suite"] == "labunits"


@pytest.mark.slow  # a whole Inspect eval (about 10 s on two busy cores)
def test_a_suite_by_the_recipe_is_scored_end_to_end(tmp_path, monkeypatch, clean_modules):
    _suite(tmp_path, monkeypatch)
    # Scored end to end on a scripted model: "normal" for everything is right on the two normal records only.
    model = MockModel("mockllm/model", lambda prompt: "Normal." if "glucose" in prompt or "creatinine" in prompt else "?")
    [log] = inspect_eval(create_task("labunits"), model=model.model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and log.eval.task_version == "1-A" and log.eval.metadata["suite"] == "labunits"
    scores = [s.scores["same_label"].value for s in log.samples]
    assert sorted(scores) == ["C", "C", "I", "I", "I"]
    # Its report section is derived from its spec: the scorer's mean per model, with how many samples it scored.
    report = build_report(read_logs([log.location], mode="summaries"), tmp_path / "report").read_text(encoding="utf-8")
    assert "Lab units: scores per model" in report
    row = next(line for line in report.splitlines() if "same_label" in line and "mockllm/model" in line)
    assert [cell.strip() for cell in row.strip("|").split("|")][-3:] == ["0.4", "5", "5"]  # mean, scored, samples
    # The summary and the parse-quality table count the same samples scored as the section: from the score's value,
    # whether or not the suite's scorer records how it read the reply (`parse` in the score's metadata).
    summary = pd.read_csv(tmp_path / "report" / "summary.csv")
    [labunits_row] = summary[summary["model"] == "mockllm/model"].to_dict("records")
    assert (labunits_row["samples"], labunits_row["share_scored"]) == (5, 1.0)
    [parse_row] = parse_table(read_logs([log.location], mode="summaries").by_suite["labunits"]).to_dict("records")
    assert (parse_row["samples"], parse_row["scored"]) == (5, 5)


@pytest.mark.parametrize("piece, named", [
    ("tasks/labunits/labunits.py", "no main task tasks/labunits/labunits.py"),
    ("docs/labunits.md", "no page docs/labunits.md"),
    ("catalog/labunits/conversions.yaml.lock", "does not match a lock: run `clinical-cf catalog lock"),
    ("catalog/labunits/records.jsonl", "records.jsonl is missing (run `python -m clinical_cf.catalog.labunits.generate`)"),
    ("register/labunits/eval.yaml", "task labunits has no Register entry"),
    ("published", "no published version: run `clinical-cf export register --suite labunits`"),
    ("scorers", "declares no scorer"),
    ("tests/scorers/test_labunits.py", "scorer same_label has no test"),
    ("inputs", "declares no input kind"),
    ("scoring", "lists nothing that decides a score"),
])
def test_leaving_out_a_piece_of_the_recipe_is_named(tmp_path, monkeypatch, clean_modules, piece, named):
    labunits, record = _suite(tmp_path, monkeypatch)
    if piece in ("scorers", "inputs"):
        labunits = dataclasses.replace(labunits, **{piece: ()})
    elif piece == "scoring":
        labunits = dataclasses.replace(labunits, scoring=dict, prompts=dict)
    elif piece == "published":
        record.write_text("{}", encoding="utf-8")
    else:
        (tmp_path / piece).unlink()
    problems = suite_problems(labunits, tmp_path / "docs", tmp_path / "register", record, tmp_path / "tests")
    assert any(named in p for p in problems), problems
