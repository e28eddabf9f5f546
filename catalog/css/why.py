"""Why an intervention does or does not apply to a case: each applicability condition, checked and said.

`clinical-cf catalog summary --cases F --why CASE` prints, per intervention, every condition
of its filter with the case's own value ("cancer_types: endometrial is not one of breast,
gastric"), so a user learns why a HER2 3+ endometrial case gets no family A tuple (A1 names
the types it was written for) rather than guessing. Applicability itself stays
`Applicability.matches`; this module only explains it, and a test keeps the two in agreement.
"""

from __future__ import annotations

import re

from clinical_cf.catalog.css.interventions import Applicability, Intervention
from clinical_cf.catalog.css.schema import Case


def conditions(rule: Applicability, case: Case) -> list[tuple[bool, str]]:
    """(holds, explanation) for each condition the filter states."""
    out: list[tuple[bool, str]] = []
    if rule.cancer_types is not None:
        ok = case.cancer_type in rule.cancer_types
        out.append((ok, f"cancer type {case.cancer_type} {'is' if ok else 'is not'} one of {', '.join(rule.cancer_types)}"))
    if rule.sex is not None:
        out.append((case.sex == rule.sex, f"sex {case.sex} (needs {rule.sex})"))
    if rule.metastatic is not None:
        out.append((case.metastatic == rule.metastatic, f"metastatic={case.metastatic} (needs {rule.metastatic})"))
    if rule.resected is not None:
        out.append((case.resected == rule.resected, f"resected={case.resected} (needs {rule.resected})"))
    if rule.stages is not None:
        probe = rule.model_copy(update={k: None for k in Applicability.model_fields if k != "stages"})
        out.append((probe.matches(case), f"stage {case.stage} (needs {', '.join(rule.stages)})"))
    for name, wanted in (rule.biomarkers or {}).items():
        allowed = wanted if isinstance(wanted, list) else [wanted]
        status = case.marker_status(name)
        shown = f"{case.biomarkers[name]} = {status}" if name in case.biomarkers and case.biomarkers[name] != status else status
        out.append((status in allowed, f"{name} {shown} (needs {' or '.join(allowed)})"))
    if rule.min_prior_lines is not None:
        out.append((case.prior_lines >= rule.min_prior_lines, f"prior lines {case.prior_lines} (needs >= {rule.min_prior_lines})"))
    if rule.max_prior_lines is not None:
        out.append((case.prior_lines <= rule.max_prior_lines, f"prior lines {case.prior_lines} (needs <= {rule.max_prior_lines})"))
    if rule.packet_matches is not None:
        m = re.search(rule.packet_matches, case.packet)
        out.append((m is not None, f"packet {'says' if m else 'does not say'} {m.group(0)!r}" if m else
                    f"packet does not match {rule.packet_matches[:80]!r}"))
    if rule.packet_excludes is not None:
        m = re.search(rule.packet_excludes, case.packet)
        out.append((m is None, f"packet says {m.group(0)!r}, which excludes it" if m else "packet has none of the excluding words"))
    return out


def explain(intervention: Intervention, case: Case) -> tuple[bool, list[str]]:
    """(applies, the reasons): the failing conditions when it does not apply, all conditions when it does."""
    checks = conditions(intervention.applies_to, case)
    applies = intervention.applies_to.matches(case)
    if applies:
        return True, [text for _, text in checks] or ["no condition: applies to every case"]
    return False, [text for ok, text in checks if not ok]
