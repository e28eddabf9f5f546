"""Solver of the CSS judge audit: both arms come from the sample, no model under test is called.

The pre-built replies go through `arm_result`, the reader every CSS arm goes through, so the
judge sees exactly what a CSS run would send it for such replies (normalised, capped items).
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

from clinical_cf.solvers.css import CSSArms, arm_result


@solver
def audit_arms() -> Solver:
    """Put the sample's baseline and (probed) counterfactual replies into the CSS arms."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        arms = state.store_as(CSSArms)
        arms.baseline = arm_result(state.metadata["baseline_reply"])
        arms.counterfactual = arm_result(state.metadata["counterfactual_reply"])
        state.output.completion = arms.counterfactual.raw
        return state

    return solve
