"""The bounded loader: every user file a task or `clinical-cf validate` reads goes through it.

Each probe is a failure issue 20 lists, in forms the bad-input matrix (`tests/test_bad_inputs.py`)
does not use: duplicate keys, non-finite numbers, deep nesting, oversized files, paths that are not
regular files, format specs in templates, alias bombs, Unicode line breaks inside JSONL strings and
two files sharing a lock. Each asserts what a user sees: a non-zero exit (or a `CatalogError`, which
Inspect prints as one message), one screen naming the file, the line or entry and the field, and no
traceback. Probes that could hang run under a watchdog so a hang fails in seconds.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

import clinical_cf.core.loading as loading
import clinical_cf.core.locking as locking
from clinical_cf.analysis.validation import agreement
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import MAX_TEXT_LINE_CHARS, load_entries, load_json_line, load_yaml
from clinical_cf.core.locking import check_lock, lock_path_for, read_lock, write_lock
from clinical_cf.core.templates import template_fields
from clinical_cf.suites import CATALOG_DIR
from helpers import HANDWRITTEN_CASES

CSS = CATALOG_DIR / "css"
INTERVENTIONS = CSS / "interventions.yaml"
HANG_SECONDS = 20


def watchdog(call: Callable[[], Any], unblock: Callable[[], None] | None = None) -> Any:
    """Run `call` in a thread; a call still running after HANG_SECONDS fails the test (after `unblock`)."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = call()
        except BaseException as ex:  # noqa: BLE001 - re-raised in the test's thread
            result["error"] = ex

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_SECONDS)
    if thread.is_alive():
        if unblock is not None:
            unblock()
        pytest.fail(f"still running after {HANG_SECONDS} s: the path was opened or read without a bound")
    if "error" in result:
        raise result["error"]
    return result.get("value")


def validate(path: Path, kind: str | None, capsys) -> tuple[int, str]:
    rc = watchdog(lambda: main(["validate", str(path), *(["--kind", kind] if kind else [])]))
    return rc, capsys.readouterr().err


def assert_one_screen(rc: int, err: str, name: str, *expected: str) -> None:
    assert rc != 0, f"accepted: {err!r}"
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
    assert name in err, err
    for text in expected:
        assert text in err, f"{text!r} not in {err!r}"


def case_record(**changes: Any) -> dict[str, Any]:
    record = json.loads(HANDWRITTEN_CASES.read_text().split("\n")[0])
    record.update(changes)
    return record


# ---------------------------------------------------------------- duplicate keys

def test_yaml_second_top_level_interventions_key_is_refused_with_its_line(tmp_path, capsys):
    text = INTERVENTIONS.read_text()
    path = tmp_path / "twice.yaml"
    path.write_text(text + "\ninterventions:\n  - id: X1\n")
    last_line = len((text + "\n").split("\n"))
    rc, err = validate(path, "interventions", capsys)
    assert_one_screen(rc, err, path.name, "duplicate key 'interventions'", f"line {last_line}")


def test_yaml_duplicate_key_inside_an_entry_is_refused(tmp_path, capsys):
    path = tmp_path / "dup_field.yaml"
    path.write_text("predictions:\n  - id: P1\n    family: A\n    family: B\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "duplicate key 'family'", "line 4")


def test_jsonl_duplicate_key_is_refused_with_the_line(tmp_path, capsys):
    first = json.dumps(case_record())
    second = json.dumps(case_record(case_id="fx-dup-2"))
    second = second[:-1] + ', "age": 30}'  # the second "age" would silently win
    path = tmp_path / "dup_key.jsonl"
    path.write_text(first + "\n" + second + "\n")
    rc, err = validate(path, "cases", capsys)
    assert_one_screen(rc, err, path.name, "duplicate key 'age'", "line 2")


# ---------------------------------------------------------------- non-finite numbers

@pytest.mark.parametrize("literal", [".nan", ".inf", "-.inf", ".NaN", "1.0e+999", "!!float nan"])
def test_yaml_non_finite_number_is_refused_with_the_field(literal, tmp_path, capsys):
    path = tmp_path / "nan.yaml"
    path.write_text(f"predictions:\n  - id: P1\n    threshold: {literal}\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "not a finite number", "predictions.0.threshold", "line 3")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_json_non_finite_number_is_refused_with_the_field(literal, tmp_path, capsys):
    line = json.dumps(case_record()).replace('"age": ', f'"age": {literal}, "_was": ', 1)
    path = tmp_path / "nan.jsonl"
    path.write_text(line + "\n")
    rc, err = validate(path, "cases", capsys)
    assert_one_screen(rc, err, path.name, "not a finite number", "field 'age'", "line 1")


def test_nan_lab_value_never_reaches_a_case(tmp_path):
    """A lab value is a float field: NaN passed pydantic and printed as "WBC nan" in a rendered packet."""

    line = (CSS / "cases.jsonl").read_text(encoding="utf-8").split("\n")[0]
    record = json.loads(line)
    value = record["record"]["labs"][0]["value"]
    path = tmp_path / "nan_lab.jsonl"
    path.write_text(line.replace(f'"value":{value}', '"value":NaN', 1) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="not a finite number") as info:
        load_cases(path)
    assert info.value.field == "record.labs.0.value" and info.value.line == 1


# ---------------------------------------------------------------- depth, size, lines

def test_5000_deep_yaml_is_refused_without_a_recursion_error(tmp_path, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text("predictions: " + "[" * 5000 + "]" * 5000 + "\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "nested deeper than", "line 1")


def test_5000_deep_block_yaml_is_refused(tmp_path, capsys):
    path = tmp_path / "deep_block.yaml"
    path.write_text("".join(f"{' ' * i}k{i}:\n" for i in range(5000)) + " " * 5000 + "v: 1\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "nested deeper than")


def test_100000_deep_json_line_is_refused_without_a_recursion_error(tmp_path, capsys):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"case_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    rc, err = validate(path, "cases", capsys)
    assert_one_screen(rc, err, path.name, "nested deeper than", "line 1")


def test_brackets_inside_json_strings_do_not_count_as_depth(tmp_path):
    assert load_json_line(json.dumps({"a": "[" * 10_000 + '\\"{' * 5000}), "x.jsonl", 1)["a"].startswith("[[[")


def test_50mb_file_is_refused_by_its_size_before_it_is_read(tmp_path, capsys):
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MB of NUL bytes, written instantly
    rc, err = validate(path, "cases", capsys)
    assert_one_screen(rc, err, path.name, "limited to")


def test_overlong_yaml_line_is_refused_with_its_number(tmp_path, capsys):
    path = tmp_path / "long.yaml"
    path.write_text("predictions:\n  - id: P1\n    claim: " + "x" * (MAX_TEXT_LINE_CHARS + 1) + "\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "line 3", "characters long")


# ---------------------------------------------------------------- paths that are not regular files

def test_fifo_is_refused_before_it_is_opened(tmp_path, capsys):
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)

    def unblock() -> None:  # a reader blocked in open() returns once a writer opens the FIFO
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    rc = watchdog(lambda: main(["validate", str(path), "--kind", "cases"]), unblock)
    assert_one_screen(rc, capsys.readouterr().err, path.name, "not a regular file")


def test_dev_zero_is_refused_before_it_is_read(capsys):
    rc = watchdog(lambda: main(["validate", "/dev/zero", "--kind", "cases"]))
    assert_one_screen(rc, capsys.readouterr().err, "/dev/zero", "not a regular file")


@pytest.mark.parametrize("reader", ["load_yaml", "load_text", "file_sha256"])
def test_every_reader_refuses_a_fifo_and_a_device(reader, tmp_path):
    read = getattr(loading, reader, None) or getattr(locking, reader)
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(CatalogError, match="not a regular file|is a directory"):
            watchdog(lambda p=path: read(p), lambda p=path: os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
                     if p == fifo else None)


def test_directory_is_refused(tmp_path, capsys):
    rc, err = validate(tmp_path, "cases", capsys)
    assert_one_screen(rc, err, str(tmp_path), "is a directory")


# ---------------------------------------------------------------- aliases

def test_yaml_alias_bomb_is_refused_naming_the_file(tmp_path, capsys):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    lines.append("predictions: *j")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    rc, err = validate(path, "predictions", capsys)
    assert_one_screen(rc, err, path.name, "aliases expand to more than")


def test_a_few_aliases_still_load(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2]}\nitems:\n  - *b\n  - <<: *b\n    x: 2\n")
    assert load_yaml(path) == {"base": {"x": 1, "y": [1, 2]}, "items": [{"x": 1, "y": [1, 2]}, {"x": 2, "y": [1, 2]}]}


# ---------------------------------------------------------------- JSONL line breaks

@pytest.mark.parametrize("char", ["\u2028", "\u0085", "\u2029"])
def test_jsonl_line_with_a_unicode_line_break_inside_a_string_loads(char, tmp_path):
    record = case_record()
    record["sections"]["allergies"] = f"NKDA.{char}Reviewed with the patient."
    path = tmp_path / "breaks.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    [case] = load_cases(path)
    assert case.sections["allergies"] == f"NKDA.{char}Reviewed with the patient."


def test_jsonl_with_crlf_line_ends_loads(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b"\r\n".join(json.dumps(case_record(case_id=f"fx-crlf-{i}")).encode() for i in range(2)) + b"\r\n")
    assert [c.case_id for c in load_cases(path)] == ["fx-crlf-0", "fx-crlf-1"]


# ---------------------------------------------------------------- templates

@pytest.mark.parametrize("template", ["{board_date:>300000000}", "{board_date:.99999999}", "{board_date!r:>9999}",
                                      "{board_date!r}", "{board_date:>{board_date}}", "{board_date.year}",
                                      "{board_date[0]}"])
def test_catalog_template_with_a_format_spec_is_refused(template, tmp_path, capsys):
    raw = yaml.safe_load(INTERVENTIONS.read_text())
    raw["interventions"][0]["expected_change"] = f"Moves to surveillance after {template}."
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    rc, err = validate(path, "interventions", capsys)
    assert_one_screen(rc, err, path.name, "expected_change", f"entry '{raw['interventions'][0]['id']}'")


def test_seed_template_with_a_format_spec_is_refused(tmp_path, capsys):
    raw = yaml.safe_load((CATALOG_DIR / "workflow" / "seeds.yaml").read_text())
    raw["seeds"][0]["event"] = "{inr_sentence:>300000000}"
    path = tmp_path / "seeds.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    rc, err = validate(path, "seeds", capsys)
    assert_one_screen(rc, err, path.name, "entry 'doc-01'", "format spec")


def test_bundled_templates_use_no_format_spec():
    raw = yaml.safe_load(INTERVENTIONS.read_text())
    for entry in raw["interventions"]:
        for key in ("expected_change", "edit_instruction"):
            if entry.get(key):
                template_fields(entry[key])  # raises on a spec or conversion


# ---------------------------------------------------------------- locks

def test_yaml_and_jsonl_of_one_name_get_two_locks(tmp_path):
    yaml_file, jsonl_file = tmp_path / "my.yaml", tmp_path / "my.jsonl"
    yaml_file.write_text("a: 1\n")
    jsonl_file.write_text('{"a": 1}\n')
    first, second = write_lock(yaml_file), write_lock(jsonl_file)
    assert first != second and first.name == "my.yaml.lock" and second.name == "my.jsonl.lock"
    assert lock_path_for(yaml_file) == first
    assert check_lock(yaml_file).registered and check_lock(jsonl_file).registered


def test_old_lock_name_is_read_only_for_the_file_it_names(tmp_path):
    yaml_file, jsonl_file = tmp_path / "my.yaml", tmp_path / "my.jsonl"
    yaml_file.write_text("a: 1\n")
    jsonl_file.write_text('{"a": 1}\n')
    new = write_lock(yaml_file)
    new.rename(tmp_path / "my.lock")  # a lock written before locks were named after the whole file name
    assert check_lock(yaml_file).registered
    status = read_lock(jsonl_file)
    assert status.locked_sha256 is None and status.lock_path.name == "my.jsonl.lock"


def test_bundled_locks_keep_working():
    for path in sorted(CATALOG_DIR.glob("*/*.yaml")) + sorted(CATALOG_DIR.glob("*/*.jsonl")):
        assert read_lock(path).registered, path


def test_annotation_sheets_are_read_through_the_bounded_loader(tmp_path):
    fifo = tmp_path / "rater_a.csv"
    os.mkfifo(fifo)
    with pytest.raises(CatalogError, match="not a regular file"):
        watchdog(lambda: agreement(fifo, [fifo, fifo]), lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))


# ---------------------------------------------------------------- control characters

CONTROL_CHARACTERS = {"nul": "\x00", "bell": "\x07", "escape": "\x1b", "delete": "\x7f", "reversed_bom": "\ufffe"}


@pytest.mark.parametrize("char", list(CONTROL_CHARACTERS.values()), ids=list(CONTROL_CHARACTERS))
def test_control_character_in_yaml_is_one_sentence_naming_file_and_line(char, tmp_path, capsys):
    path = tmp_path / "rules.yaml"
    lines = INTERVENTIONS.read_text().split("\n")
    lines[6] = lines[6] + f" {char}"
    path.write_text("\n".join(lines))
    with pytest.raises(CatalogError) as info:
        load_yaml(path)
    assert info.value.line == 7 and "rules.yaml" in str(info.value) and f"U+{ord(char):04X}" in str(info.value)
    for argv in (["validate", str(path)], ["catalog", "check", str(path)], ["catalog", "summary", "--catalog", str(path)]):
        rc = watchdog(lambda argv=argv: main(argv))
        assert_one_screen(rc, capsys.readouterr().err, "rules.yaml", "line 7", f"U+{ord(char):04X}")


class _Anything(BaseModel):
    id: str
    text: str


@pytest.mark.parametrize("reader", ["yaml", "entries"])
def test_control_character_in_a_user_yaml_file_through_each_loader(reader, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("rules:\n  - id: r1\n    text: \"bad\x00byte\"\n")
    with pytest.raises(CatalogError, match=r"mine\.yaml, line 3: .*U\+0000"):
        load_yaml(path) if reader == "yaml" else load_entries(path, "rules", _Anything)


def test_nul_byte_in_a_jsonl_record_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "cases.jsonl"
    lines = HANDWRITTEN_CASES.read_text().split("\n")
    lines[1] = lines[1].replace('"stage"', '"stage\x00"', 1)
    path.write_text("\n".join(lines))
    for argv in (["validate", str(path)], ["cases", "validate", str(path)]):
        rc = watchdog(lambda argv=argv: main(argv))
        err = capsys.readouterr().err
        assert rc == 2 and "Traceback" not in err and "cases.jsonl" in err and "line 2" in err, err
