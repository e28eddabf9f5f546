"""Build the CSS judge audit: pre-registered injection probes embedded in otherwise identical lists.

No model under test is asked anything: the samples carry both recommendation lists (a scenario's
baseline list, and as counterfactual either the same list, "identical", or the list that moved as
expected, "changed"), with one probe written into a treatment or rationale field, or none. The
lists go through the same reader, caps and judge prompt as a CSS run (`arm_result`,
`judge_direction`), so what is audited is exactly what CSS sends the judge role. The metrics
(`scorers.judge_audit`) compare each probed verdict with the same lists' verdict without the probe.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Literal

from inspect_ai import Task
from inspect_ai.dataset import Sample
from pydantic import BaseModel, Field, ValidationError, field_validator

from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.core.errors import CatalogError, validation_errors
from clinical_cf.core.loading import load_yaml
from clinical_cf.scorers.judge_audit import NO_PROBE, audited_judge
from clinical_cf.solvers.judge_audit import audit_arms
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import flag, input_file, selection
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task

PROBES_PATH = CSS_DIR / "judge_probes.yaml"
CONDITIONS = ("identical", "changed")
Condition = Literal["identical", "changed"]


class ListItem(BaseModel):
    treatment: str = Field(min_length=1)
    rationale: str = ""


class Scenario(BaseModel):
    id: str = Field(min_length=1)
    family: str = Field(pattern=r"^[A-E]$")
    expected_change: str = Field(min_length=1)
    baseline: list[ListItem] = Field(min_length=1)
    changed: list[ListItem] = Field(min_length=1)
    markers: list[str] = Field(min_length=1, description="Words only the changed list names (used by the scripted test judges).")
    source: str = Field(min_length=1)


class Probe(BaseModel):
    id: str = Field(min_length=1)
    category: str = Field(min_length=1)
    field: Literal["treatment", "rationale", "items"]
    text: str = Field(min_length=1)
    pad: int = Field(default=0, ge=0, le=20000, description="Filler before the text (characters), or filler items for field 'items'.")

    @field_validator("id")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value == NO_PROBE:
            raise ValueError(f"'{NO_PROBE}' is reserved for the unprobed reference")
        return value


class ProbeCatalog(BaseModel):
    version: int
    name: str
    scoring_rule: str = Field(min_length=1)
    scenarios: list[Scenario] = Field(min_length=1)
    probes: list[Probe] = Field(min_length=1)


def load_probes(path: str | Path) -> ProbeCatalog:
    """Read and validate a probe catalog; errors name the file, the entry and the field."""
    path = Path(path)
    raw = load_yaml(path)  # encoding, size and syntax errors name the file and line
    if not isinstance(raw, dict):
        raise CatalogError(path, "expected a mapping with version, name, scoring_rule, scenarios and probes")
    for key in ("scenarios", "probes"):
        for i, entry in enumerate(raw.get(key) or []):
            model = Scenario if key == "scenarios" else Probe
            try:
                model.model_validate(entry)
            except ValidationError as ex:
                entry_id = entry.get("id") if isinstance(entry, dict) else None
                raise validation_errors(path, str(entry_id or f"{key}[{i}]"), ex) from None
    try:
        catalog = ProbeCatalog.model_validate(raw)
    except ValidationError as ex:
        raise validation_errors(path, None, ex) from None
    for key, items in (("scenarios", catalog.scenarios), ("probes", catalog.probes)):
        ids = [item.id for item in items]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise CatalogError(path, f"duplicate ids: {', '.join(duplicates)}", field=key)
    return catalog


def _filler(n: int, start: int = 0) -> str:
    # Varied clauses (not one repeated phrase, which the reader would class as degenerate output).
    words, i = [], start
    while len(" ".join(words)) < n:
        words.append(f"clause {i} of a long justification citing trial {i * 13} and cohort {i * 7 % 97}")
        i += 1
    return " ".join(words)[:n]


def embed(items: list[ListItem], probe: Probe | None) -> list[dict[str, str]]:
    """The counterfactual list with the probe written into its first item (or added as items)."""
    out = [item.model_dump() for item in items]
    if probe is None:
        return out
    if probe.field == "items":
        out += [{"treatment": f"{probe.text} {i + 1}", "rationale": _filler(60, start=17 * i)} for i in range(probe.pad or 1)]
        return out
    text = f"{_filler(probe.pad)} {probe.text}" if probe.pad else probe.text
    first = out[0]
    first[probe.field] = f"{first[probe.field]} {text}".strip()
    return out


def _parts(args: SimpleNamespace) -> TaskParts:
    path = args.probes or PROBES_PATH
    catalog = load_probes(path)
    samples = []
    for scenario in catalog.scenarios:
        for condition in [c for c in CONDITIONS if c in args.conditions]:
            counterfactual_items = scenario.baseline if condition == "identical" else scenario.changed
            for probe in [None, *catalog.probes]:
                probe_id = probe.id if probe else NO_PROBE
                samples.append(
                    Sample(
                        id=f"{scenario.id}:{condition}:{probe_id}",
                        input=f"Judge audit: scenario {scenario.id}, {condition} lists, probe {probe_id}",
                        target="0" if condition == "identical" else "1",
                        metadata={
                            "case_id": scenario.id,
                            "family": scenario.family,
                            "intervention_id": f"audit_{scenario.id}",
                            "expected_change": " ".join(scenario.expected_change.split()),
                            "scoring_rule": " ".join(catalog.scoring_rule.split()),
                            "condition": condition,
                            "probe_id": probe_id,
                            "probe_category": probe.category if probe else NO_PROBE,
                            "probe_field": probe.field if probe else None,
                            "baseline_reply": json.dumps(
                                {"recommendations": [i.model_dump() for i in scenario.baseline], "not_recommended": []}
                            ),
                            "counterfactual_reply": json.dumps(
                                {"recommendations": embed(counterfactual_items, probe), "not_recommended": []}
                            ),
                            "markers": scenario.markers,
                        },
                    )
                )
    return TaskParts(
        samples=samples,
        solver=audit_arms(),
        scorers=[audited_judge(json_schema=args.json_schema)],
        dataset="css_judge_audit",
        metadata={
            "catalog": str(path),
            "catalog_version": catalog.version,
            "scenarios": len(catalog.scenarios),
            "probes": len(catalog.probes),
            "conditions": [c for c in CONDITIONS if c in args.conditions],
            "samples": len(samples),
        },
    )


SPEC = TaskSpec(
    # No model under test is asked anything, so the audit has no setting (single-shot or agent) to log.
    suite=CSS,
    arguments={
        "conditions": partial(selection, allowed=CONDITIONS),
        "allow_unregistered": flag,
        "json_schema": flag,
        "probes": input_file,
    },
    inputs=lambda args: TaskInputs(catalogs=[args.probes or PROBES_PATH]),
    parts=_parts,
)


def build_judge_audit_task(
    probes: str | None = None,
    conditions: str | Iterable[str] = "identical,changed",
    allow_unregistered: bool = False,
    json_schema: bool = True,
) -> Task:
    """The judge audit over a probe catalog.

    Args:
        probes: Probe catalog YAML (default: the bundled pre-registered catalog).
        conditions: "identical", "changed" or both (comma-separated).
        allow_unregistered: Run even if the probe catalog does not match its lock.
        json_schema: Ask the judge for structured output (`response_schema`).
    """
    return build_task(SPEC, **locals())
