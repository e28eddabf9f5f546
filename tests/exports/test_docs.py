"""The README's task table and docs/arguments.md are generated from the tasks and must be current."""

import inspect

import pytest

from clinical_cf.exports import docs
from clinical_cf.suites import task_folders
from clinical_cf.tasks.arguments import TaskInputError, accepted, annotations_of, argument_checks
from clinical_cf.tasks.css_task import build_css_task


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


def test_a_new_task_missing_from_the_table_makes_it_stale(monkeypatch):
    text = docs.README.read_text(encoding="utf-8")
    monkeypatch.setattr(docs, "task_table", lambda: "| suite | task | what it evaluates |\n| --- | --- | --- |")
    assert docs.readme_with_table(text) != text
