"""Everything generated from the task folders and suite specs (each folder's __init__.py, clinical_cf/_registry.py, the
README's task table and suite list, docs/index.md's suite list, docs/arguments.md) must be current."""

import dataclasses
import inspect
import re

import pytest

from clinical_cf.exports import docs
from clinical_cf.suites import SUITES, task_folders
from clinical_cf.tasks.arguments import TaskInputError, accepted, annotations_of, argument_checks
from clinical_cf.tasks.css_task import build_css_task


def test_every_generated_file_is_current():
    assert [str(p) for p in docs.stale()] == [], "stale: run `python -m clinical_cf.exports.docs`"


def test_readme_task_table_is_current():
    text = docs.README.read_text(encoding="utf-8")
    assert docs.readme_with_table(text) == text, "README.md's task table is stale: run `python -m clinical_cf.exports.docs`"


def test_arguments_doc_is_current():
    assert docs.ARGUMENTS_DOC.read_text(encoding="utf-8") == docs.arguments_doc(), (
        "docs/arguments.md is stale: run `python -m clinical_cf.exports.docs`"
    )


@pytest.mark.parametrize("name", task_folders())
def test_every_argument_of_every_task_is_documented_and_described(name):
    table = docs.argument_table(name)
    for argument in inspect.signature(docs.task_function(name)).parameters:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{argument}` |"))
        assert not row.endswith("|  |"), f"{name}: argument {argument!r} has no description in its builder's Args"


@pytest.mark.parametrize("argument, bad", [("scale", 9), ("mutation_mode", "bogus"), ("tuples", 0), ("families", "Z"), ("reader", "a b")])
def test_the_docs_say_what_the_error_says(argument, bad):
    """The `accepts` cell is the `expected ...` of the error a bad value gets: one declaration, two readers."""
    annotation = annotations_of(build_css_task)[argument]
    with pytest.raises(TaskInputError) as error:
        argument_checks(build_css_task)[argument](argument, bad)
    assert f"task argument '{argument}': got {bad!r}; expected {accepted(annotation)}" in str(error.value)


def test_a_readme_missing_a_tasks_row_and_a_registry_missing_its_line_are_named(tmp_path):
    text = docs.README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "`tasks/css_family_d`" in line)
    readme, registry = tmp_path / "README.md", tmp_path / "_registry.py"
    readme.write_text(text.replace(row + "\n", ""), encoding="utf-8")
    registry.write_text(docs.REGISTRY.read_text(encoding="utf-8").replace("from clinical_cf.tasks.css.css import css\n", ""), encoding="utf-8")
    assert docs.stale(readme=readme, registry=registry) == [registry, readme]
    docs.write(readme=readme, registry=registry)
    assert row in readme.read_text(encoding="utf-8") and registry.read_text(encoding="utf-8") == docs.REGISTRY.read_text(encoding="utf-8")


def test_no_prose_counts_or_lists_the_suites_by_hand():
    """The suites are listed where the generator writes them; prose elsewhere neither counts nor enumerates them."""
    count = r"\b(one|two|three|four|five|six|seven|eight|nine|ten|\d+) (suites|other suites)\b|\bthe other \w+ suites\b"
    pages = [docs.README, *sorted(docs.INDEX_DOC.parent.glob("*.md"))]
    found = [f"{page.name}: {m.group(0)}" for page in pages for m in re.finditer(count, page.read_text(encoding="utf-8"), re.I)]
    assert found == []
    for page in (docs.README, docs.INDEX_DOC):
        text = page.read_text(encoding="utf-8")
        listed = text.split(docs.SUITES_START, 1)[1].split(docs.SUITES_END, 1)[0]
        assert listed.count("\n- [") == len(SUITES), page


def test_a_new_suite_is_listed_from_its_spec(monkeypatch):
    new = dataclasses.replace(SUITES["medpic"], name="labunits", short_name="Lab units", title="Lab units: unit swaps", arxiv=None)
    monkeypatch.setitem(SUITES, "labunits", new)
    assert "- [Lab units](docs/labunits.md): unit swaps" in docs.readme_with_table(docs.README.read_text(encoding="utf-8"))
    assert "- [Lab units](labunits.md): unit swaps" in docs.index_with_suites(docs.INDEX_DOC.read_text(encoding="utf-8"))
