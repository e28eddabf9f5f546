"""What decides a score, per suite: the parts hashed into the suite's fingerprint with its catalogs and data.

A suite's published version `N-X` promises that two logs of the same N were scored the same way.
The catalogs and generated data are only half of that: the prompts a model and its judges are
shown, the response schemas they answer in, the valid score sets, the deterministic reading rules
(cue words, placeholders, caps) and the scoring constants decide a score as much. `scoring_parts`
lists them per suite; `clinical_cf.suites.Suite.fingerprint` hashes them in, `catalog/published.json`
records one hash per part (`clinical-cf export register`), and `clinical_cf.registration.scoring_changes`
names the parts that changed since the version was published. tests/test_scoring_contract.py fails
until the version moves.

Each part is named `<module>.<CONSTANT>` after the module constant it is (read when the function
is called, so a test can monkeypatch one), or `rendered/<prompt>` for a prompt as a model receives
it, rendered from fixed inputs by the function the solver or scorer calls (this catches a change in
how a template is filled, not only in the template). tests/solvers/test_prompts.py checks the
rendered prompts for doubled braces and unfilled slots: the same list.

To add a prompt, a schema or a scoring constant: add its name to its module's `_constants(module, ...)`
in its suite's function below (import the module if it is new here; `_shared` for what every suite's
reading uses), then run `clinical-cf export register`. tests/test_scoring_contract.py
fails on a prompt, schema or reader task in solvers/, scorers/ or clinical_cf/replies/ that no
suite lists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from inspect_ai.util import Store
from pydantic import BaseModel

from clinical_cf import judging, replies
from clinical_cf.scorers import cms, css_judge, css_process, metrics
from clinical_cf.scorers import medpic as medpic_scorer
from clinical_cf.scorers import sensitivity as sensitivity_scorer
from clinical_cf.scorers import workflow as workflow_scorer
from clinical_cf.solvers import css as css_solver
from clinical_cf.solvers import css_agent
from clinical_cf.solvers import medpic as medpic_solver
from clinical_cf.solvers import sensitivity as sensitivity_solver
from clinical_cf.solvers import workflow as workflow_solver

READING_RULES_VERSION = {"css": 2, "medpic": 2, "sensitivity": 2, "workflow": 2}
"""The version of each suite's deterministic reading code that is not a constant (the branches of a reader
function): move it when such a change alters what a reply reads as. The readers' regular expressions, cue words,
placeholders and caps are parts of their own below."""

_REPLY = json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "RAS mutant"}], "not_recommended": []})
_QUESTION = {
    "vignette": "A 79-year-old woman with insomnia.",
    "question": "Which medication should be avoided?",
    "options": {"A": "Diphenhydramine", "B": "Melatonin", "C": "Sleep hygiene"},
    "multi_select": True,
}


def _constants(module: ModuleType, *names: str) -> dict[str, Any]:
    """`{"<module>.<NAME>": module.NAME}` for each name: the part is the module's constant, read when called."""
    return {f"{module.__name__}.{name}": getattr(module, name) for name in names}


def _patterns(*modules: ModuleType) -> dict[str, Any]:
    """Every module-level regular expression of the modules: the reading rules that are constants, listed by discovery
    (a new pattern in a reader is covered without a line here)."""
    return {
        f"{module.__name__}.{name}": value
        for module in modules
        for name, value in sorted(vars(module).items())
        if isinstance(value, re.Pattern)
    }


def _shared() -> dict[str, Any]:
    """The reading every suite's replies go through (the modules of clinical_cf/replies/) and the judge-role wiring."""
    return {
        **_constants(replies.reader, "READER_PROMPT", "READER_ROLE"),
        **_constants(replies.judge_input, "DATA_NOTICE"),
        **_constants(replies.final, "PROVENANCES", "READ", "MAX_REPLY_CHARS", "MAX_JSON_DEPTH", "MAX_REPAIR_CHARS"),
        **_constants(replies.verification, "NEGATIVE_CUES", "EXCLUDING_CUES"),
        **_constants(judging, "JUDGE_ROLE", "FALLBACK_ROLE"),
        **_patterns(*replies.MODULES),
    }


def css_prompts() -> dict[str, str]:
    """The CSS prompts as a model under test, the judges and the reader receive them (fixed inputs)."""
    # A store of its own: a StoreModel built outside a sample shares Inspect's default store, where an earlier
    # instance's fields (a test's, a judge audit's) would stand in for these arms.
    arms = css_solver.CSSArms(
        store=Store(), baseline=css_solver.arm_result(_REPLY), counterfactual=css_solver.arm_result(_REPLY)
    )
    return {
        "rendered/css/system": css_solver.SYSTEM_PROMPT,
        "rendered/css/summary": css_solver.SUMMARY_PROMPT.format(packet="Patient packet."),
        "rendered/css/stage2_json": css_solver.stage2_prompt("A summary.", json_schema=True),
        "rendered/css/stage2_plain": css_solver.stage2_prompt("A summary.", json_schema=False),
        "rendered/css/agent_instructions": css_agent.AGENT_INSTRUCTIONS,
        "rendered/css/agent_request": css_agent.AGENT_REQUEST.format(case_id="c1"),
        "rendered/css/judge": css_judge.judge_prompt(arms, "The list should change.", "1 if it changed."),
        "rendered/css/judge_retry": css_judge.RETRY_PROMPT,
        "rendered/css/process_judge": css_process.PROCESS_PROMPT.format(
            kind="noise", title="t", section="labs", expected="e", rule="r", notice="n", trace="t", recommendations="r", baseline="b"
        ),
        "rendered/css/process_retry": css_process.PROCESS_RETRY_PROMPT,
        "rendered/css/cms_match": cms.MATCH_PROMPT.format(consensus="1. FOLFOX", notice="n", recommendations="1. FOLFOX"),
        "rendered/css/reader": replies.reader_prompt(css_solver.CSS_READER, "Some reply."),
    }


def _css() -> dict[str, Any]:
    return {
        **_shared(),
        **_constants(
            css_solver,
            "SYSTEM_PROMPT", "SUMMARY_PROMPT", "RECOMMEND_PROMPT", "RECOMMEND_PROMPT_PLAIN", "RECOMMENDATIONS_SCHEMA", "MAX_ITEMS",
            "MAX_TREATMENT_CHARS", "MAX_RATIONALE_CHARS", "TEMPLATE_PLACEHOLDERS", "CSS_READER", "RAW_FALLBACK_CHARS", "MAX_BLOCK_CHARS"
        ),
        **_constants(css_agent, "TOOL_NAME", "SUBMIT_TOOL_NAME", "AGENT_INSTRUCTIONS", "AGENT_REQUEST"),
        **_constants(css_judge, "JUDGE_PROMPT", "RETRY_PROMPT", "VALID_SCORES", "VERDICT_SCHEMA"),
        **_constants(css_process, "PROCESS_PROMPT", "PROCESS_RETRY_PROMPT", "PROCESS_SCHEMA", "TRACE_CHARS"),
        **_constants(cms, "MATCH_PROMPT", "WEIGHTS"),
        **_constants(metrics, "CONTROL_FAMILY"),
        **_patterns(css_solver, css_agent),
        **css_prompts(),
    }


def medpic_prompts() -> dict[str, str]:
    plain = medpic_solver.render_prompt(_QUESTION)
    return {
        "rendered/medpic/plain": plain,
        "rendered/medpic/json": plain[: -len(medpic_solver.INSTRUCTION_PLAIN)] + medpic_solver.INSTRUCTION_JSON,
        "rendered/medpic/rationale_judge": medpic_scorer.rationale_prompt("CrCl 28 mL/min", "ANSWER: A"),
        "rendered/medpic/rationale_retry": medpic_scorer.RATIONALE_RETRY_PROMPT,
        "rendered/medpic/reader": replies.reader_prompt(medpic_solver.MEDPIC_READER, "Some reply."),
    }


def _medpic() -> dict[str, Any]:
    return {
        **_shared(),
        **_constants(
            medpic_solver,
            "PROMPT", "INSTRUCTION_PLAIN", "INSTRUCTION_JSON", "SINGLE_SELECT_NOTE", "NONE_TEXT", "PLACEHOLDERS", "MEDPIC_READER"
        ),
        "rendered/medpic/answer_schema": medpic_solver.answer_schema(_QUESTION["options"]),
        **_constants(medpic_scorer, "RATIONALE_PROMPT", "RATIONALE_RETRY_PROMPT", "RESPONSE_CHARS", "MENTION_SCHEMA"),
        **_patterns(medpic_solver),
        **medpic_prompts(),
    }


def sensitivity_prompts() -> dict[str, str]:
    options = sensitivity_solver.options_text(["a", "b"])
    return {
        "rendered/sensitivity/json": sensitivity_solver.DISTRIBUTION_PROMPT.format(vignette="v", options=options),
        "rendered/sensitivity/plain": sensitivity_solver.DISTRIBUTION_PROMPT_PLAIN.format(vignette="v", options=options),
        "rendered/sensitivity/letter": sensitivity_solver.LETTER_PROMPT.format(vignette="v", options=options),
        "rendered/sensitivity/reader": replies.reader_prompt(sensitivity_solver.SENSITIVITY_READER, "Some reply."),
    }


def _sensitivity() -> dict[str, Any]:
    return {
        **_shared(),
        **_constants(
            sensitivity_solver,
            "LETTERS", "DISTRIBUTION_PROMPT", "DISTRIBUTION_PROMPT_PLAIN", "LETTER_PROMPT", "SUM_TOLERANCE", "SENSITIVITY_READER"
        ),
        **_constants(sensitivity_scorer, "FLOOR"),
        **_patterns(sensitivity_solver),
        **sensitivity_prompts(),
    }


def workflow_prompts() -> dict[str, str]:
    prompts = {
        f"rendered/workflow/{condition}/{task_class}/{'json' if schema else 'plain'}": workflow_solver.system_prompt(
            condition, task_class, schema
        )
        for condition in workflow_solver.CONDITIONS
        for task_class in workflow_solver.CLASS_SEMANTICS
        for schema in (True, False)
    }
    prompts["rendered/workflow/reader"] = replies.reader_prompt(workflow_solver.WORKFLOW_READER, "Some reply.")
    return prompts


def _workflow() -> dict[str, Any]:
    return {
        **_shared(),
        **_constants(
            workflow_solver,
            "CONDITIONS", "ACTION_DEFINITIONS", "CLASS_SEMANTICS", "OUTPUT_FORMAT", "OUTPUT_FORMAT_PLAIN", "UNCERTAINTY_CHECKLIST",
            "SYSTEM_PROMPTS", "DECISION_SCHEMA", "PLACEHOLDERS", "ACTION_STEMS", "STRONG_ACTION_STEMS", "WORKFLOW_READER"
        ),
        **_constants(workflow_scorer, "ECE_BINS"),
        # The cost ratio of a missed escalation is the utility's default (a task argument can override it per run).
        "clinical_cf.scorers.workflow.utility.__defaults__": workflow_scorer.utility.__defaults__,
        **_constants(workflow_solver, "_ACTION_SYNONYMS"),
        **_patterns(workflow_solver),
        **workflow_prompts(),
    }


_SUITE_PARTS: dict[str, Callable[[], dict[str, Any]]] = {
    "css": _css, "medpic": _medpic, "sensitivity": _sensitivity, "workflow": _workflow,
}

PROMPTS: dict[str, Callable[[], dict[str, str]]] = {
    "css": css_prompts, "medpic": medpic_prompts, "sensitivity": sensitivity_prompts, "workflow": workflow_prompts,
}
"""Every suite's prompts as rendered for a model (a subset of its parts): what tests/solvers/test_prompts.py checks."""


def scoring_parts(suite: str) -> dict[str, Any]:
    """Everything besides the catalogs and data that decides the suite's scores, by part name (see the module docstring)."""
    try:
        parts = _SUITE_PARTS[suite]()
    except KeyError:
        raise ValueError(f"no scoring contract for suite {suite!r}; known: {', '.join(_SUITE_PARTS)}") from None
    return {**parts, f"clinical_cf.scoring_contract.READING_RULES_VERSION[{suite}]": READING_RULES_VERSION[suite]}


def canonical(value: Any) -> Any:
    """A JSON-ready form of a part that changes exactly when the part does (order of sets ignored)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, re.Pattern):
        return {"pattern": value.pattern, "flags": value.flags}
    if isinstance(value, BaseModel):  # ResponseSchema, JSONSchema
        return value.model_dump(mode="json", exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # ReaderTask
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    raise TypeError(f"scoring part of type {type(value).__name__} cannot be hashed: list its constants, not code")


def part_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(canonical(value), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def scoring_hashes(suite: str) -> dict[str, str]:
    """One SHA-256 per scoring part of the suite (what `catalog/published.json` records under `scoring`)."""
    return {name: part_hash(value) for name, value in sorted(scoring_parts(suite).items())}


def scoring_fingerprint(suite: str) -> str:
    """SHA-256 over every part's name and hash."""
    digest = hashlib.sha256()
    for name, sha in scoring_hashes(suite).items():
        digest.update(f"{name}\0{sha}\n".encode())
    return digest.hexdigest()
