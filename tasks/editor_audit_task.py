"""Build the editor audit: the editor role edits bundled cases whose correct counterfactual is known.

Bundled cases carry a structured record, so structured mode gives, for every applicable (case,
intervention) of families A-E, the correct and complete counterfactual. Each sample asks the
`editor` role for that edit with exactly the messages `counterfactuals build` sends (the
pre-registered description of the change and the packet), and `scorers.editor_audit` scores the
free-text reply against the structured reference: completeness, changes it should not make, and
whether the build's deterministic checks would accept it. One log per editor model: the report
shows each editor's rates, so a user learns whether an editor can be trusted before reviewing
hundreds of its counterfactuals.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CASES_PATH, CATALOG_PATH
from clinical_cf.catalog.css.counterfactuals import editor_messages
from clinical_cf.catalog.css.expand import expand_tuples
from clinical_cf.catalog.validate import load_checked_cases, load_checked_interventions
from clinical_cf.scorers.editor_audit import editor_fidelity
from clinical_cf.solvers.editor_audit import editor_edit
from clinical_cf.tasks.arguments import TaskInputError
from clinical_cf.tasks.build import TaskParts
from clinical_cf.tasks.css_task import fixed_subset


def parts(args: SimpleNamespace) -> TaskParts:
    catalog_path, cases_path = args.catalog or CATALOG_PATH, args.cases or CASES_PATH
    catalog = load_checked_interventions(catalog_path)
    cases = [c for c in load_checked_cases(cases_path) if c.record is not None]
    if not cases:
        raise TaskInputError(f"{cases_path}: no case has a structured record; the audit needs the structured route's reference")
    expansion = expand_tuples(cases, catalog, "structured", families=args.families, residue="drop")
    chosen = fixed_subset([t for t in expansion.tuples if t.intervention.edit_instruction], args.tuples)
    samples = []
    for t in chosen:
        instruction = t.intervention.edit_instruction_for(t.case)
        if instruction is None:
            continue
        samples.append(
            Sample(
                id=t.id,
                input=editor_messages(t.case, t.intervention, instruction, dict(t.baseline.sections)),
                metadata={
                    "case_id": t.case.case_id,
                    "intervention_id": t.intervention.id,
                    "family": t.intervention.family,
                    "baseline_sections": json.dumps(dict(t.baseline.sections)),
                    "reference_sections": json.dumps(dict(t.counterfactual.sections)),
                },
            )
        )
    return TaskParts(
        samples=samples,
        solver=editor_edit(role=args.editor, max_tokens=args.max_tokens),
        scorers=[editor_fidelity(catalog=str(catalog_path), cases=str(cases_path))],
        dataset="css_editor_audit",
        metadata={
            "catalog": str(catalog_path),
            "catalog_version": catalog.version,
            "families": args.families,
            "cases": len(cases),
            "samples": len(samples),
            "editor_role": args.editor,
            "reference": "structured mode (cases with a record)",
        },
    )
