"""The published version covers what decides a score (issue 26): one word of a prompt, a schema or a valid
score set changes the suite's fingerprint, and the published record is stale until `clinical-cf export register`
moves the version."""

import dataclasses
import importlib
import json
import re
from types import ModuleType

import pytest
from inspect_ai.model import ResponseSchema

import clinical_cf.judging
import clinical_cf.replies.reader
import clinical_cf.scorers.css_judge
import clinical_cf.scorers.medpic
import clinical_cf.solvers.css
import clinical_cf.solvers.medpic
import clinical_cf.solvers.workflow
from clinical_cf.exports.register import PublishedSuite, next_version
from clinical_cf.registration import PUBLISHED_PATH, published, scoring_changes, unpublished_scoring, write_published
from clinical_cf.replies import ReaderTask
from clinical_cf.scoring_contract import READING_RULES_PART, imported_modules, part_hash, shared_parts
from clinical_cf.suites import SUITES

SCORING_MODULES = [
    *(f"clinical_cf.replies.{m}" for m in ("final", "json_answers", "whole", "items", "contract", "verification", "judge_input", "reader")),
    "clinical_cf.judging",
    *(f"clinical_cf.solvers.{m}" for m in ("css", "css_agent", "judge_audit", "medpic", "sensitivity", "workflow")),
    *(f"clinical_cf.scorers.{m}" for m in ("cms", "css_judge", "css_process", "judge_audit", "medpic", "metrics", "sensitivity", "workflow")),
]
PROMPT_NAME = re.compile(r"PROMPTS?$|_PROMPT_|INSTRUCTIONS?|REQUEST$|NOTICE$|CHECKLIST$|DEFINITIONS$|FORMAT|SEMANTICS|^VALID_")
NOT_SCORING = {
    # Span titles and a placeholder value: shown in the transcript, never to a model or a scorer.
    "clinical_cf.solvers.css.BASELINE_SPAN", "clinical_cf.solvers.css.COUNTERFACTUAL_SPAN",
    "clinical_cf.scorers.judge_audit.NO_PROBE", "clinical_cf.judging.UNDER_TEST",
}


def _constants(module: ModuleType):
    for name, value in vars(module).items():
        if (name.isupper() or isinstance(value, re.Pattern)) and not isinstance(value, ModuleType):
            yield f"{module.__name__}.{name}", value


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_part_is_named_after_the_constant_it_is(suite):
    for name, value in SUITES[suite].scoring_parts().items():
        if name.startswith("rendered/") or name.endswith(("__defaults__", "]")):  # rendered, a default, one suite's entry
            continue
        module, _, attribute = name.rpartition(".")
        assert getattr(importlib.import_module(module), attribute) is value, name


def test_every_prompt_schema_reader_and_score_set_is_in_a_suites_contract():
    parts = {name: value for suite in SUITES for name, value in SUITES[suite].scoring_parts().items()}
    listed_values = {id(value) for value in parts.values()}  # a constant imported from the module that defines it
    missing = []
    for module in map(importlib.import_module, SCORING_MODULES):
        for name, value in _constants(module):
            decides = isinstance(value, (ResponseSchema, ReaderTask, re.Pattern)) or PROMPT_NAME.search(name.rpartition(".")[2]) is not None
            if decides and name not in parts and id(value) not in listed_values and name not in NOT_SCORING:
                missing.append(name)
    assert not missing, f"not in any suite's scoring contract (its Suite.scoring, clinical_cf/suites/<name>.py): {missing}"


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_the_published_scoring_is_current(suite):
    assert not scoring_changes(suite), unpublished_scoring()
    assert published()[suite]["fingerprint"] == SUITES[suite].fingerprint()


ONE_WORD = [
    # (module, constant, edit, suites it must flag): a judge, a reader, a solver prompt and a valid score set.
    (clinical_cf.scorers.css_judge, "JUDGE_PROMPT", lambda v: v.replace("auditing", "checking", 1), {"css"}),
    (clinical_cf.scorers.medpic, "RATIONALE_PROMPT", lambda v: v.replace("specific", "particular", 1), {"medpic"}),
    (clinical_cf.replies.reader, "READER_PROMPT", lambda v: v.replace("convert", "turn", 1), set(SUITES)),
    # The judge-role wiring is shared, but only the code of suites with a judge uses it (CSS's direction judge, MedPIC's
    # rationale judge): the others keep their fingerprints.
    (clinical_cf.judging, "JUDGE_ROLE", lambda v: v + "_role", {"css", "medpic"}),
    (clinical_cf.solvers.css, "SUMMARY_PROMPT", lambda v: v.replace("Summarise", "Summarize", 1), {"css"}),
    (clinical_cf.solvers.workflow, "UNCERTAINTY_CHECKLIST", lambda v: v.replace("far", "much", 1), {"workflow"}),
    (clinical_cf.scorers.css_judge, "VALID_SCORES", lambda v: (0.0, 1.0), {"css"}),
    # A reader's rule: the MedPIC answer line's grammar (a module-level regular expression, found by discovery).
    (clinical_cf.solvers.medpic, "_ANSWER_LINE", lambda v: re.compile(v.pattern.replace("answers?", "answer"), v.flags), {"medpic"}),
]


@pytest.mark.parametrize("module, constant, edit, suites", ONE_WORD, ids=[c[1] for c in ONE_WORD])
def test_one_changed_word_is_reported_by_suite_and_part_until_the_version_moves(monkeypatch, tmp_path, module, constant, edit, suites):
    before = {name: SUITES[name].fingerprint() for name in SUITES}
    record = tmp_path / "published.json"
    record.write_text(PUBLISHED_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    edited = edit(getattr(module, constant))
    assert edited != getattr(module, constant)
    monkeypatch.setattr(module, constant, edited)

    part = f"{module.__name__}.{constant}"
    flagged = {name for name in SUITES if scoring_changes(name, record)}
    assert flagged == suites
    for name in suites:
        assert f"{part} changed" in scoring_changes(name, record)
        assert SUITES[name].fingerprint() != before[name]
    report = "\n".join(unpublished_scoring(record))
    assert all(f"suite {name!r}" in report for name in suites) and part in report
    for name in set(SUITES) - suites:
        assert SUITES[name].fingerprint() == before[name]

    # The version rule moves N on the new fingerprint; once written, the record is current again.
    name = sorted(suites)[0]
    old = PublishedSuite.model_validate(published(record)[name])
    new_version = next_version(old, SUITES[name].fingerprint())
    assert int(new_version.split("-")[0]) == int(old.version.split("-")[0]) + 1
    write_published({n: next_version(PublishedSuite.model_validate(published(record)[n]), SUITES[n].fingerprint()) for n in suites}, record)
    assert not any(scoring_changes(n, record) for n in SUITES)


def test_a_part_that_is_code_is_refused_not_hashed_by_its_address():
    with pytest.raises(TypeError, match="cannot be hashed"):
        part_hash(lambda: 1)
    assert part_hash({"b": 1, "a": frozenset({"y", "x"})}) == part_hash({"a": frozenset({"x", "y"}), "b": 1})
    assert part_hash((0.0, 0.5, 1.0)) != part_hash((0.0, 1.0))


def test_rendered_prompts_are_parts_and_follow_their_templates(monkeypatch):
    for suite in SUITES.values():
        assert set(suite.prompts()) <= set(suite.scoring_parts()), suite.name
    before = SUITES["css"].fingerprint()
    monkeypatch.setattr(clinical_cf.solvers.css, "stage2_prompt", lambda summary, json_schema=True: f"Summary: {summary}")
    assert SUITES["css"].fingerprint() != before  # a change in how a template is filled, not only in the template


def test_published_json_names_every_part():
    record = json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))
    for suite in SUITES:
        assert set(record[suite]["scoring"]) == set(SUITES[suite].scoring_parts())


def test_a_suite_hashes_only_the_shared_parts_its_code_imports():
    for name, suite in SUITES.items():
        shared = {part for part in shared_parts() if part in suite.scoring_parts()}
        assert ("clinical_cf.judging.JUDGE_ROLE" in shared) == (name in {"css", "medpic"}), name  # those with a judge
        assert "clinical_cf.replies.reader.READER_PROMPT" in shared, name  # every bundled suite's replies are read
    # A suite whose scorer and parts use none of the shared reading (as the docs' recipe suite) hashes none of it.
    alone = dataclasses.replace(SUITES["medpic"], scorers=(), scoring=lambda: {"x.y": 1}, prompts=dict)
    assert set(alone.scoring_parts()) == {"x.y", READING_RULES_PART.format(suite="medpic")}


def test_the_import_reader_follows_imports_through_other_modules():
    reached = imported_modules(frozenset({"clinical_cf.scorers.css_judge"}))
    assert {"clinical_cf.scorers.css_judge", "clinical_cf.judging", "clinical_cf.replies.reader"} <= reached
    assert "clinical_cf.analysis.report" not in reached and "clinical_cf.cli" not in reached
