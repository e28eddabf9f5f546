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
from types import SimpleNamespace
from typing import Annotated, Literal

from inspect_ai.dataset import Sample

from clinical_cf.catalog.css.judge_probes import PROBES_PATH, ListItem, Probe, load_probes
from clinical_cf.scorers.judge_audit import NO_PROBE, audited_judge
from clinical_cf.solvers.judge_audit import audit_arms
from clinical_cf.tasks.arguments import CommaList
from clinical_cf.tasks.build import TaskParts

CONDITIONS = ("identical", "changed")
Condition = Literal["identical", "changed"]
Conditions = Annotated[str | list[str], CommaList(CONDITIONS)]
"""The audit's `conditions` argument (its signature is in tasks/css_judge_audit/css_judge_audit.py)."""


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


def parts(args: SimpleNamespace) -> TaskParts:
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
