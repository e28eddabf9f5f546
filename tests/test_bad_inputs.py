"""The bad-input matrix: every input kind and every task argument, each refused with a message naming where.

Each probe asserts a non-zero exit (or a `TaskInputError` / `CatalogError`, which Inspect's CLI prints
as one message and exits 1), no traceback, and a message naming the file or argument, the entry and
the field. The tamper probes change one character in each bundled file a task reads: refused; then
re-lock it: the run is not refused (the lock matches) but the log records the file as unpublished and
the report flags it.
"""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

import clinical_cf.core.loading as loading
from clinical_cf.analysis.registration import LogRegistration, confirmatory_predictions, log_banners
from clinical_cf.cli import main
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import UnregisteredCatalogError, legacy_lock_path, lock_path_for, write_lock
from clinical_cf.suites import CATALOG_DIR, create_task
from clinical_cf.tasks.arguments import TaskInputError
from helpers import HANDWRITTEN_CASES

ROOT = Path(__file__).resolve().parents[1]
CSS, MEDPIC, SENS, FLOW = (CATALOG_DIR / d for d in ("css", "medpic", "sensitivity", "workflow"))


# ---------------------------------------------------------------- input files

def jsonl(source: Path, mutate: Callable[[dict], Any], line: int = 0) -> Callable[[Path], Path]:
    """A copy of the first three records of `source` with record `line` mutated in place."""

    def write(tmp: Path) -> Path:
        records = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()[:3]]
        result = mutate(records[line])
        if result is not None:
            records[line] = result
        path = tmp / f"mine_{source.stem}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    return write


def yaml_entries(source: Path, key: str, mutate: Callable[[dict], Any], top: Callable[[dict], Any] | None = None):
    """A copy of a YAML catalog with its first entry (or the whole document, `top`) mutated."""

    def write(tmp: Path) -> Path:
        raw = yaml.safe_load(source.read_text(encoding="utf-8"))
        if top is not None:
            out = top(raw)
            raw = raw if out is None else out
        else:
            result = mutate(raw[key][0])
            if result is not None:
                raw[key][0] = result
        path = tmp / f"mine_{source.stem}.yaml"
        path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
        return path

    return write


def raw(name: str, content: bytes | str) -> Callable[[Path], Path]:
    def write(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return path

    return write


def set_(field: str, value: Any) -> Callable[[dict], None]:
    def mutate(record: dict) -> None:
        record[field] = value

    return mutate


def drop(field: str) -> Callable[[dict], None]:
    return lambda record: record.pop(field) and None


def first_op(change: dict) -> Callable[[dict], None]:
    def mutate(entry: dict) -> None:
        entry["mutation"] = [{"op": "replace", "pattern": "resect", "replacement": "x", **change}]

    return mutate


def case_marker(name: str) -> Callable[[dict], None]:
    def mutate(record: dict) -> None:
        status = next(iter(record["biomarkers"].values()))
        record["biomarkers"] = {name: status}

    return mutate


def big_section(record: dict) -> None:
    record["sections"]["labs"] = "Hb 12.1 g/dL. " * 1_500_000  # 21 MB


CASES_SRC = HANDWRITTEN_CASES
INTERVENTIONS = CSS / "interventions.yaml"

FILE_PROBES: list[tuple[str, Callable[[Path], Path], list[str], str | None]] = [
    # (id, writer, substrings the message must contain, --kind)
    ("cases-bool-as-word", jsonl(CASES_SRC, set_("resected", "no")), ["resected", "entry '"], None),
    ("cases-age-word", jsonl(CASES_SRC, set_("age", "sixty")), ["age", "entry '"], None),
    ("cases-age-numeric-string", jsonl(CASES_SRC, set_("age", "61")), ["age"], None),
    ("cases-age-out-of-range", jsonl(CASES_SRC, set_("age", 140)), ["age"], None),
    ("cases-marker-lowercase", jsonl(CASES_SRC, case_marker("her2")), ["her2", "did you mean 'HER2'", "biomarkers.her2"], None),
    ("cases-marker-hyphen", jsonl(CASES_SRC, case_marker("PDL1")), ["PDL1", "PD-L1"], None),
    ("cases-marker-unknown", jsonl(CASES_SRC, case_marker("XYZ99")), ["XYZ99", "biomarkers.XYZ99"], None),
    ("cases-status-bogus", jsonl(CASES_SRC, lambda r: r.update(biomarkers={"HER2": "maybe"})), ["biomarkers.HER2"], None),
    ("cases-unknown-section", jsonl(CASES_SRC, lambda r: r["sections"].update(imaging="CT")), ["sections.imaging"], None),
    ("cases-missing-section", jsonl(CASES_SRC, lambda r: r["sections"].pop("labs") and None), ["sections missing", "labs"], None),
    ("cases-no-consensus", jsonl(CASES_SRC, set_("consensus", [])), ["consensus"], None),
    ("cases-consensus-label", jsonl(CASES_SRC, lambda r: r["consensus"][0].update(label="likely")), ["consensus.0.label"], None),
    ("cases-extra-field", jsonl(CASES_SRC, set_("ward", "7B")), ["ward", "Extra inputs"], None),
    ("cases-missing-field", jsonl(CASES_SRC, drop("stage")), ["stage", "Field required"], None),
    ("cases-stage-pattern", jsonl(CASES_SRC, set_("stage", "stage four")), ["stage"], None),
    ("cases-stage-metastatic", jsonl(CASES_SRC, lambda r: r.update(stage="IIA", metastatic=True)), ["metastatic"], None),
    ("cases-date-word", jsonl(CASES_SRC, set_("board_date", "next tuesday")), ["board_date"], None),
    ("cases-id-pattern", jsonl(CASES_SRC, set_("case_id", "bad id!")), ["case_id"], None),
    (
        "cases-duplicate-id",
        raw("dup.jsonl", CASES_SRC.read_text().splitlines()[0] * 1 + "\n" + CASES_SRC.read_text().splitlines()[0] + "\n"),
        ["duplicate case_id", "line 2"],
        "cases",
    ),
    ("cases-21mb-section", jsonl(CASES_SRC, big_section), ["sections.labs", "limit"], None),
    ("cases-bad-json-line", raw("c.jsonl", '{"case_id": "a", \n'), ["line 1", "not valid JSON"], "cases"),
    ("cases-array-line", raw("c.jsonl", "[1, 2]\n"), ["line 1", "JSON object"], "cases"),
    ("cases-latin1", raw("c.jsonl", '{"case_id": "caf\xe9"}\n'.encode("latin-1")), ["line 1", "UTF-8"], "cases"),
    ("cases-empty", raw("c.jsonl", "\n\n"), ["no records"], "cases"),
    (
        "interventions-backref-missing-group",
        yaml_entries(INTERVENTIONS, "interventions", first_op({"pattern": "(resect)ed", "replacement": r"\2"})),
        ["mutation.0.replacement", "group", "entry '"],
        None,
    ),
    (
        "interventions-named-backref",
        yaml_entries(INTERVENTIONS, "interventions", first_op({"pattern": "(?P<w>resect)", "replacement": r"\g<what>"})),
        ["mutation.0.replacement", "what"],
        None,
    ),
    (
        "interventions-bad-regex",
        yaml_entries(INTERVENTIONS, "interventions", first_op({"pattern": "resect(ion"})),
        ["mutation", "regex"],
        None,
    ),
    (
        "interventions-bool-word",
        yaml_entries(INTERVENTIONS, "interventions", lambda e: e["applies_to"].update(resected="no")),
        ["applies_to.resected"],
        None,
    ),
    (
        "interventions-marker-name",
        yaml_entries(INTERVENTIONS, "interventions", lambda e: e["applies_to"].update(biomarkers={"her-2": "positive"})),
        ["her-2", "HER2", "applies_to.biomarkers"],
        None,
    ),
    ("interventions-family", yaml_entries(INTERVENTIONS, "interventions", set_("family", "Z")), ["family"], None),
    (
        "interventions-template",
        yaml_entries(INTERVENTIONS, "interventions", set_("expected_change", "Moves towards {nowhere} at all.")),
        ["nowhere"],
        None,
    ),
    (
        "interventions-structured-op",
        yaml_entries(INTERVENTIONS, "interventions", set_("structured", [{"op": "teleport"}])),
        ["teleport"],
        None,
    ),
    (
        "interventions-prior-lines-word",
        yaml_entries(INTERVENTIONS, "interventions", lambda e: e["applies_to"].update(min_prior_lines="two")),
        ["min_prior_lines"],
        None,
    ),
    (
        "interventions-duplicate-id",
        yaml_entries(INTERVENTIONS, "interventions", None, top=lambda d: d["interventions"].append(copy.deepcopy(d["interventions"][0]))),
        ["duplicate"],
        None,
    ),
    ("interventions-not-a-mapping", raw("i.yaml", "- just\n- a list\n"), ["mapping"], "interventions"),
    ("interventions-bad-yaml", raw("i.yaml", "interventions: [unclosed\n"), ["YAML"], "interventions"),
    ("observations-kind", yaml_entries(CSS / "observations.yaml", "perturbations", set_("kind", "gremlin")), ["kind", "entry 'O1"], None),
    ("observations-extra", yaml_entries(CSS / "observations.yaml", "perturbations", set_("severity", 3)), ["severity"], None),
    (
        "observations-missing",
        yaml_entries(CSS / "observations.yaml", "perturbations", drop("expected_behaviour")),
        ["expected_behaviour"],
        None,
    ),
    (
        "predictions-threshold-word",
        yaml_entries(CSS / "predictions.yaml", "predictions", set_("threshold", "high")),
        ["threshold", "entry 'P1"],
        None,
    ),
    ("predictions-threshold-range", yaml_entries(CSS / "predictions.yaml", "predictions", set_("threshold", 1.5)), ["threshold"], None),
    ("predictions-direction", yaml_entries(CSS / "predictions.yaml", "predictions", set_("direction", "sideways")), ["direction"], None),
    ("predictions-family", yaml_entries(CSS / "predictions.yaml", "predictions", set_("family", "Q")), ["family"], None),
    (
        "rules-population",
        yaml_entries(MEDPIC / "rules.yaml", "rules", set_("population", "astronauts")),
        ["population", "entry 'beers"],
        None,
    ),
    ("rules-action", yaml_entries(MEDPIC / "rules.yaml", "rules", set_("action", "prescribe more")), ["action"], None),
    (
        "rules-trigger-value-word",
        yaml_entries(MEDPIC / "rules.yaml", "rules", lambda e: e["trigger"][0].update(value="sixty-five")),
        ["trigger.0"],
        None,
    ),
    ("rules-extra", yaml_entries(MEDPIC / "rules.yaml", "rules", set_("dose_mg", 5)), ["dose_mg"], None),
    ("questions-kind", jsonl(MEDPIC / "questions.jsonl", set_("kind", "xx")), ["kind", "beers-t2-diphenhydramine:gf1"], None),
    ("questions-options-list", jsonl(MEDPIC / "questions.jsonl", set_("options", ["a", "b"])), ["options"], None),
    ("questions-missing-answer", jsonl(MEDPIC / "questions.jsonl", drop("answer")), ["answer"], None),
    ("questions-extra", jsonl(MEDPIC / "questions.jsonl", set_("difficulty", "hard")), ["difficulty"], None),
    ("episodes-action", jsonl(FLOW / "episodes.jsonl", set_("reference_action", "PANIC")), ["reference_action", "entry '"], None),
    ("episodes-split", jsonl(FLOW / "episodes.jsonl", set_("split", "train")), ["split"], None),
    ("episodes-turn-role", jsonl(FLOW / "episodes.jsonl", lambda r: r["turns"][0].update(role="doctor")), ["turns.0.role"], None),
    ("episodes-variant", jsonl(FLOW / "episodes.jsonl", set_("variant", "sideways")), ["variant"], None),
    ("episodes-parameterization-word", jsonl(FLOW / "episodes.jsonl", set_("parameterization", "one")), ["parameterization"], None),
    ("seeds-task-class", yaml_entries(FLOW / "seeds.yaml", "seeds", set_("task_class", "surgery")), ["task_class", "entry 'doc-01'"], None),
    ("seeds-split", yaml_entries(FLOW / "seeds.yaml", "seeds", set_("split", "train")), ["split"], None),
    ("seeds-extra", yaml_entries(FLOW / "seeds.yaml", "seeds", set_("owner", "me")), ["owner"], None),
    ("vignettes-age-word", jsonl(SENS / "vignettes.jsonl", set_("age", "forty")), ["age", "sens-cap-01"], None),
    ("vignettes-sex", jsonl(SENS / "vignettes.jsonl", set_("sex", "X")), ["sex"], None),
    ("vignettes-missing", jsonl(SENS / "vignettes.jsonl", drop("gold")), ["gold"], None),
    ("vignettes-findings-string", jsonl(SENS / "vignettes.jsonl", set_("findings", "fever")), ["findings"], None),
    (
        "perturbations-tolerance-word",
        yaml_entries(
            SENS / "perturbations.yaml", "perturbations", None, top=lambda d: d["tolerance"].update(relative_change="ten percent")
        ),
        ["tolerance.relative_change"],
        None,
    ),
    (
        "perturbations-tolerance-negative",
        yaml_entries(SENS / "perturbations.yaml", "perturbations", None, top=lambda d: d["tolerance"].update(js_divergence=-0.1)),
        ["tolerance.js_divergence"],
        None,
    ),
    (
        "perturbations-tolerance-unknown",
        yaml_entries(SENS / "perturbations.yaml", "perturbations", None, top=lambda d: d["tolerance"].update(fudge=1)),
        ["tolerance.fudge"],
        None,
    ),
    (
        "perturbations-type",
        yaml_entries(SENS / "perturbations.yaml", "perturbations", set_("type", "cosmic")),
        ["type", "entry 'S1_synonym'"],
        None,
    ),
    ("perturbations-expected", yaml_entries(SENS / "perturbations.yaml", "perturbations", set_("expected", "upwards")), ["expected"], None),
    ("audit-detector", yaml_entries(FLOW / "lexical_audit.yaml", "concepts", set_("detector", "vibes")), ["detector", "entry 'c01'"], None),
    ("audit-missing", yaml_entries(FLOW / "lexical_audit.yaml", "concepts", drop("paraphrase")), ["paraphrase"], None),
    ("kind-mismatch", lambda tmp: CASES_SRC, ["looks like a cases file, not rules"], "rules"),
    ("unknown-kind-content", raw("notes.yaml", "hello: world\n"), ["--kind"], None),
    ("empty-yaml", raw("empty.yaml", ""), ["--kind"], None),
]


@pytest.mark.parametrize("probe_id,write,expected,kind", FILE_PROBES, ids=[p[0] for p in FILE_PROBES])
def test_bad_file_is_refused_naming_file_entry_and_field(probe_id, write, expected, kind, tmp_path, capsys):
    path = write(tmp_path)
    rc = main(["validate", str(path), *(["--kind", kind] if kind else [])])
    err = capsys.readouterr().err
    assert rc != 0, f"{probe_id} was accepted"
    assert "Traceback" not in err and len(err.splitlines()) <= 3, err
    assert path.name in err, err
    for text in expected:
        assert text in err, f"{probe_id}: {text!r} not in {err!r}"


def test_directory_and_missing_file_get_a_sentence(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["cases", "validate", str(tmp_path / "nope.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_oversized_file_is_refused_with_the_limit(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(loading, "MAX_FILE_BYTES", 1024)
    path = tmp_path / "big.jsonl"
    path.write_text(CASES_SRC.read_text())
    assert main(["validate", str(path)]) == 2
    assert "limited to" in capsys.readouterr().err


def test_catalog_check_refuses_a_backreference_to_a_missing_group(tmp_path, capsys):
    path = yaml_entries(INTERVENTIONS, "interventions", first_op({"pattern": "(resect)", "replacement": r"\1 and \3"}))(tmp_path)
    assert main(["catalog", "check", str(path)]) == 2
    assert "mutation.0.replacement" in capsys.readouterr().err


def test_summary_with_unknown_family_is_an_error(capsys):
    assert main(["catalog", "summary", "--families", "Z"]) == 2
    assert "--families" in capsys.readouterr().err


# ---------------------------------------------------------------- task arguments

MISSING = "/nonexistent/nowhere.yaml"

ARGUMENT_PROBES: list[tuple[str, dict[str, Any], str]] = [
    ("css", {"families": "Z"}, "families"),
    ("css", {"families": ""}, "families"),
    ("css", {"families": 3}, "families"),
    ("css_family_d", {"mutation_mode": "bogus"}, "mutation_mode"),
    ("css_family_d", {"split": "train"}, "split"),
    ("css_family_d", {"controls": "bogus"}, "controls"),
    ("css_family_d", {"allow_unregistered": "maybe"}, "allow_unregistered"),
    ("css_family_d", {"scale": -1}, "scale"),
    ("css_family_d", {"scale": 0}, "scale"),
    ("css_family_d", {"scale": "abc"}, "scale"),
    ("css_family_d", {"scale": float("nan")}, "scale"),
    ("css_family_d", {"cms_matching": "fuzzy"}, "cms_matching"),
    ("css_family_d", {"baseline_cache": "sometimes"}, "baseline_cache"),
    ("css_family_d", {"json_schema": 3}, "json_schema"),
    ("css_family_d", {"cases": MISSING}, "cases"),
    ("css_family_d", {"cases": "/tmp"}, "cases"),
    ("css_family_d", {"catalog": MISSING}, "catalog"),
    ("css_family_d", {"catalog": ""}, "catalog"),
    ("css_agent", {"tuples": 0}, "tuples"),
    ("css_agent", {"tuples": "many"}, "tuples"),
    ("css_agent", {"section_cap_bytes": -5}, "section_cap_bytes"),
    ("css_agent", {"max_messages": "x"}, "max_messages"),
    ("css_agent", {"families": "DX"}, "families"),
    ("css_agent_observation", {"kinds": "bogus"}, "kinds"),
    ("css_agent_observation", {"samples": 0}, "samples"),
    ("css_agent_observation", {"observations": MISSING}, "observations"),
    ("css_agent_observation", {"split": "holdout"}, "split"),
    ("sensitivity", {"types": "bogus"}, "types"),
    ("sensitivity", {"distribution": "softmax"}, "distribution"),
    ("sensitivity", {"logprobs": "perhaps"}, "logprobs"),
    ("sensitivity", {"vignettes": MISSING}, "vignettes"),
    ("sensitivity", {"perturbations": "/tmp"}, "perturbations"),
    ("medpic", {"kinds": "bogus"}, "kinds"),
    ("medpic", {"operations": "flip"}, "operations"),
    ("medpic", {"populations": "elderly"}, "populations"),
    ("medpic", {"rules": MISSING}, "rules"),
    ("medpic", {"questions": "/tmp"}, "questions"),
    ("medpic", {"rationale_judge": "yes please"}, "rationale_judge"),
    ("workflow", {"condition": "chatty"}, "condition"),
    ("workflow", {"split": "train"}, "split"),
    ("workflow", {"cost_ratio": 0}, "cost_ratio"),
    ("workflow", {"cost_ratio": "abc"}, "cost_ratio"),
    ("workflow", {"task_class": "surgery"}, "task_class"),
    ("workflow", {"variant": "sideways"}, "variant"),
    ("workflow", {"episodes": MISSING}, "episodes"),
    ("workflow", {"episodes": str(FLOW / "episodes.jsonl"), "seeds": str(FLOW / "seeds.yaml")}, "episodes"),
    ("workflow", {"json_schema": "x"}, "json_schema"),
]


@pytest.mark.parametrize(
    "task,args,argument", ARGUMENT_PROBES, ids=[f"{t}-{'-'.join(a)}-{i}" for i, (t, a, _) in enumerate(ARGUMENT_PROBES)]
)
def test_bad_task_argument_names_argument_value_and_allowed(task, args, argument):
    with pytest.raises(TaskInputError) as info:
        create_task(task, **args)
    message = str(info.value)
    assert f"'{argument}'" in message, message
    value = args[argument]
    assert str(value) in message or repr(value) in message or Path(str(value)).name in message, message


@pytest.mark.parametrize("args,allowed", [
    ({"mutation_mode": "bogus"}, "regex, structured"),
    ({"controls": "bogus"}, "per_case, all, none"),
])
def test_unknown_value_lists_allowed_values(args, allowed):
    with pytest.raises(TaskInputError, match=allowed):
        create_task("css_family_d", **args)


def test_data_error_at_task_build_names_file_entry_and_field(tmp_path):
    path = jsonl(CASES_SRC, set_("resected", "no"))(tmp_path)
    with pytest.raises(CatalogError) as info:
        create_task("css_family_d", cases=str(path))
    assert info.value.file == str(path) and info.value.field == "resected" and info.value.entry


def test_marker_in_another_spelling_is_refused_at_task_build(tmp_path):
    path = jsonl(CASES_SRC, case_marker("Her2"))(tmp_path)
    with pytest.raises(CatalogError, match="did you mean 'HER2'"):
        create_task("css_family_d", cases=str(path))


@pytest.mark.slow  # an inspect subprocess per case
@pytest.mark.parametrize("args", [["-T", "mutation_mode=bogus"], ["-T", "scale=abc"], ["-T", "catalog=/nonexistent.yaml"],
                                  ["-T", "kinds=bogus"], ["-T", "cases="], ["-T", "catalog=null"], ["-T", "scale=0.5"]])
def test_inspect_eval_ends_with_one_screen_message(args):
    task = "tasks/css_agent_observation" if "kinds=bogus" in args else "tasks/css_family_d"
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", task, "--model", "mockllm/model", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in out and len(out.strip().splitlines()) <= 6, out
    assert args[1].split("=")[0] in out


# ---------------------------------------------------------------- tamper, then re-lock

TAMPER = [
    (CSS / "interventions.yaml", "css_family_d"),
    (CSS / "lexicon.yaml", "css_family_d"),
    (CSS / "cases.jsonl", "css_family_d"),
    (CSS / "observations.yaml", "css_agent_observation"),
    (SENS / "perturbations.yaml", "sensitivity"),
    (SENS / "vignettes.jsonl", "sensitivity"),
    (MEDPIC / "rules.yaml", "medpic"),
    (MEDPIC / "questions.jsonl", "medpic"),
    (FLOW / "seeds.yaml", "workflow"),
    (FLOW / "episodes.jsonl", "workflow"),
    (CSS / "predictions.yaml", None),
]


def one_character_edit(text: str) -> str:
    """Change one letter inside a text value: the " the " nearest the middle of the file becomes " tha "."""
    middle = len(text) // 2
    at = text.find(" the ", middle)
    at = at if at >= 0 else text.rindex(" the ")
    return text[: at + 3] + "a" + text[at + 4:]


@pytest.fixture
def restore_bundled():
    """Put back each kept file's bytes; remove a kept path that did not exist (a lock written by the test)."""
    saved: dict[Path, bytes | None] = {}

    def keep(*paths: Path) -> None:
        for p in paths:
            saved.setdefault(p, p.read_bytes() if p.exists() else None)

    yield keep
    for path, content in saved.items():
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(content)


@pytest.mark.writes_checkout  # tampers with the bundled file itself, then restores it
@pytest.mark.parametrize("path,task", TAMPER, ids=[p.relative_to(CATALOG_DIR).as_posix() for p, _ in TAMPER])
def test_tamper_is_refused_and_tamper_then_relock_is_flagged(path, task, restore_bundled):
    restore_bundled(path, lock_path_for(path), legacy_lock_path(path))  # the bundled locks keep the legacy name
    path.write_text(one_character_edit(path.read_text()))
    with pytest.raises(UnregisteredCatalogError, match="no longer matches its lock"):
        create_task(task) if task else confirmatory_predictions(path)

    write_lock(path)  # the re-lock a reviewer would not see in the lock itself
    if task is None:
        with pytest.raises(CatalogError, match="only the published predictions"):
            confirmatory_predictions(path)
        return
    try:
        built = create_task(task)
    except CatalogError as ex:
        # The bundled episodes must be what the bundled seeds assemble to, and a MedPIC pair's members share their stem
        # and options: a re-locked edit that breaks either is refused (where the middle " the " falls decides which).
        assert (task == "workflow" and "assembles to" in str(ex)) or (task.startswith("medpic") and "pair members must share" in str(ex)), ex
        return
    record = built.metadata["registration"]
    changed = next(f for f in record["files"] if f["path"].endswith(path.relative_to(CATALOG_DIR).as_posix()))
    assert changed["registered"] and not changed["published"] and record["published"] is False
    banners = log_banners(LogRegistration("run.eval", "m", task, record, (record["fingerprint"],)))
    assert any(line.startswith("RE-LOCKED, NOT PUBLISHED") and path.name in line for line in banners)


@pytest.mark.slow  # an inspect subprocess
def test_inspect_eval_data_error_names_file_entry_and_field(tmp_path):
    path = jsonl(CASES_SRC, set_("resected", "no"))(tmp_path)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "tasks/css_family_d", "--model", "mockllm/model",
         "-T", f"cases={path}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    out = " ".join((proc.stdout + proc.stderr).split())  # rich wraps long lines
    assert proc.returncode != 0 and "Traceback" not in out, out
    assert path.name in "".join(out.split()) and "field 'resected'" in out and "entry 'fx-breast-1'" in out, out


# ---------------------------------------------------------------- path and numeric arguments (issue 20)

PATH_ARGUMENTS: list[tuple[str, str]] = [
    ("css_family_d", "cases"), ("css_family_d", "catalog"), ("css_family_d", "counterfactuals"),
    ("css", "cases"), ("css_agent", "catalog"),
    ("css_agent_observation", "observations"), ("css_agent_observation", "cases"),
    ("css_judge_audit", "probes"),
    ("sensitivity", "vignettes"), ("sensitivity", "perturbations"),
    ("medpic", "rules"), ("medpic", "questions"),
    ("workflow", "episodes"), ("workflow", "seeds"),
]


@pytest.mark.parametrize("value", [None, "", "  "], ids=["null", "empty", "blank"])
@pytest.mark.parametrize("task,argument", PATH_ARGUMENTS, ids=[f"{t}-{a}" for t, a in PATH_ARGUMENTS])
def test_empty_or_null_path_argument_is_an_error_not_the_bundled_file(task, argument, value):
    """`-T cases=` and `-T cases=null` both reach the task as None: refused, not the bundled default."""
    with pytest.raises(TaskInputError) as info:
        create_task(task, **{argument: value})
    message = str(info.value)
    assert f"task argument '{argument}'" in message and "leave it out" in message, message


# How `inspect eval` hands these to a task is checked end to end, through its public command line, by
# test_inspect_eval_ends_with_one_screen_message (`-T cases=`, `-T catalog=null`) and the test below.


def test_path_with_a_comma_works_as_inspect_passes_it(tmp_path):
    folder = tmp_path / "board, 2026"
    folder.mkdir()
    path = folder / "my,cases.jsonl"
    path.write_text(CASES_SRC.read_text())
    # What `-T cases=<path>` arrives as: Inspect splits an unquoted value on its commas, keeping the spaces.
    args = {"cases": str(path).split(",")}
    built = create_task("css_family_d", **args, unreviewed="allow")  # record-less fixture cases: regex drafts by consent
    files = built.metadata["registration"]["files"]
    assert any(f["path"] == str(path) for f in files), files


@pytest.mark.slow  # an inspect subprocess
def test_inspect_eval_reads_a_path_with_commas_whole(tmp_path):
    """Through Inspect's command line: the file at the comma path is the one read (its bad marker is what is named)."""
    folder = tmp_path / "board, 2026"
    folder.mkdir()
    path = folder / "my,cases.jsonl"
    jsonl(CASES_SRC, case_marker("Her2"))(tmp_path).rename(path)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "tasks/css_family_d", "--model", "mockllm/model",
         "-T", f"cases={path}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0 and "Traceback" not in out, out
    assert "did you mean 'HER2'" in out and "file not found" not in out, out


def test_missing_path_with_a_comma_is_named_whole(tmp_path):
    with pytest.raises(TaskInputError, match=r"file not found: .*a,b\.jsonl"):
        create_task("css_family_d", cases=[str(tmp_path / "a"), "b.jsonl"])


NUMERIC_PROBES: list[tuple[str, str, Any]] = [
    ("css_family_d", "scale", 0.5),  # below 1 cannot shorten a packet: refused (was accepted and ignored)
    ("css_family_d", "scale", 1e308),
    ("css_family_d", "scale", float("inf")),
    ("css_family_d", "scale", "inf"),
    ("css_family_d", "scale", 101),
    ("css_family_d", "scale", 5.5),  # above MAX_SCALE: the largest that builds `css` in under 60 s of CPU
    ("workflow", "cost_ratio", 1e308),
    ("workflow", "cost_ratio", float("nan")),
    ("workflow", "cost_ratio", float("inf")),
    ("workflow", "cost_ratio", "inf"),
    ("workflow", "cost_ratio", "-inf"),
    ("workflow", "cost_ratio", 0.5),
    ("workflow", "cost_ratio", 1001),
    ("css_agent", "tuples", 10**30),
    ("css_agent", "section_cap_bytes", 10**30),
    ("css_agent", "max_messages", 10**9),
    ("css_agent_observation", "samples", 10**30),
]


@pytest.mark.parametrize("task,argument,value", NUMERIC_PROBES, ids=[f"{t}-{a}-{v}" for t, a, v in NUMERIC_PROBES])
def test_numeric_argument_out_of_its_range_is_refused(task, argument, value):
    with pytest.raises(TaskInputError) as info:
        create_task(task, **{argument: value})
    message = str(info.value)
    assert f"task argument '{argument}'" in message, message


def test_scale_range_is_documented_in_the_error():
    with pytest.raises(TaskInputError, match=r"scale.*>= 1"):
        create_task("css_family_d", scale=0.5)


# ---------------------------------------------------------------- a selection that selects nothing

EMPTY_SELECTIONS = [
    ("css_family_d", {"split": "dev"}, "split='dev'"),  # the hand-written cases are all in the test split
    ("css_agent_observation", {"split": "dev"}, "split='dev'"),
    ("css_family_b", {}, "families"),  # B's first-line progression is incoherent on every hand-written case
]


@pytest.mark.parametrize("task, args, named", EMPTY_SELECTIONS, ids=[f"{t}-{n.split('=')[0]}" for t, _, n in EMPTY_SELECTIONS])
def test_a_selection_with_no_samples_names_the_input_and_the_argument(task, args, named):
    with pytest.raises(TaskInputError) as info:
        create_task(task, cases=str(HANDWRITTEN_CASES), **args)
    message = str(info.value)
    assert "dataset is empty" not in message and HANDWRITTEN_CASES.name in message and named in message, message


# ---------------------------------------------------------------- dates a calendar holds but a board cannot (issue 38)

@pytest.mark.parametrize("board_date", ["0001-01-01", "9999-12-31", "1000-06-15", "2999-01-01"])
@pytest.mark.parametrize("command", [
    ["cases", "validate", "{path}"],
    ["validate", "{path}"],
    ["catalog", "summary", "--cases", "{path}"],
    ["counterfactuals", "build", "--cases", "{path}", "--editor", "regex", "--out", "{out}"],
], ids=["cases-validate", "validate", "summary", "build"])
def test_a_board_date_outside_the_readable_years_is_one_clear_message(board_date, command, tmp_path, capsys):
    path = jsonl(CASES_SRC, set_("board_date", board_date))(tmp_path)
    argv = [a.replace("{path}", str(path)).replace("{out}", str(tmp_path / "out")) for a in command]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "board_date" in err and path.name in err, err
    assert not (tmp_path / "out").exists()


def test_a_board_date_outside_the_readable_years_is_refused_at_task_build(tmp_path):
    path = jsonl(CASES_SRC, set_("board_date", "0001-01-01"))(tmp_path)
    with pytest.raises(CatalogError) as info:
        create_task("css_family_d", cases=str(path))
    assert info.value.field == "board_date", info.value


# ---------------------------------------------------------------- an editor whose endpoint refuses (issue 38)

@pytest.fixture
def refusing_endpoint(monkeypatch):
    """An OpenAI-compatible base URL on a local port nothing listens on: every connection is refused."""

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    return port


@pytest.mark.timeout(120)
def test_an_editor_whose_endpoint_refuses_is_one_message_and_writes_nothing(refusing_endpoint, tmp_path, capsys):
    out = tmp_path / "set"
    code = main(["counterfactuals", "build", "--cases", str(CASES_SRC), "--editor", "openai/gpt-4o-mini", "--out", str(out),
                 "--max-retries", "0", "--timeout", "5", "--limit", "2", "--retries", "0"])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, err
    assert "Traceback" not in err + captured.out, err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) <= 2, err
    assert "--editor" in err and "openai/gpt-4o-mini" in err and "connect" in err.lower(), err
    assert not out.exists() or not any(out.iterdir())


@pytest.fixture
def unauthorised_endpoint(monkeypatch):
    """A local OpenAI-compatible endpoint that answers every call 401 (a revoked or mistyped key)."""

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-revoked-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    yield
    server.shutdown()
    server.server_close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("roles", [["--editor", "openai/gpt-4o-mini"], ["--editor", "openai/gpt-4o-mini", "--checker", "openai/gpt-4o"]],
                         ids=["editor", "editor-and-checker"])
def test_an_editor_endpoint_that_refuses_the_key_is_one_message(unauthorised_endpoint, roles, tmp_path, capsys):
    out = tmp_path / "set"
    code = main(["counterfactuals", "build", "--cases", str(CASES_SRC), *roles, "--out", str(out),
                 "--max-retries", "0", "--timeout", "5", "--limit", "1", "--retries", "0"])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err + captured.out, captured.err
    assert len([line for line in captured.err.splitlines() if line.strip()]) <= 2, captured.err
    assert "--editor openai/gpt-4o-mini" in captured.err and "sk-test-revoked-key-0123456789" not in captured.err, captured.err
    assert not out.exists() or not any(out.iterdir())


SECRET = "sk-proj-Zq8vN3xR7tLw2Y9bK4mP6sD1fH5jG0cA"


@pytest.mark.parametrize("task,args", [
    ("css_family_d", {"mutation_mode": SECRET}),
    ("css_family_d", {"scale": SECRET}),
    ("css_family_d", {"families": [SECRET, "D"]}),
    ("workflow", {"cost_ratio": SECRET}),
    ("medpic", {"kinds": SECRET}),
    ("css_agent", {"tuples": SECRET}),
], ids=["choice", "number", "list", "cost-ratio", "selection", "count"])
def test_a_task_argument_that_fails_validation_is_not_echoed_whole(task, args):
    with pytest.raises(TaskInputError) as info:
        create_task(task, **args)
    message = str(info.value)
    argument = next(iter(args))
    assert f"'{argument}'" in message and SECRET not in message and SECRET[:16] not in message, message
