"""End to end: the sensitivity task on a mock model that reads the vignette."""

import pytest
from inspect_ai import eval

from clinical_cf.solvers.sensitivity import SensitivityArms
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from helpers import MockModel, clinician


@pytest.mark.slow  # a sensitivity eval over every vignette pair
def test_profile_of_a_model_blind_to_background():
    log = eval(
        sensitivity(types="surface,clinical_semantic,background,conflicting_result"),
        model=MockModel("mockllm/model", clinician).model,
        limit=60,
        display="none",
    )[0]
    assert log.status == "success", log.error
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert metrics["surface_consistency"] == 1.0 and metrics["surface_flip_rate"] == 0.0
    assert metrics["surface_consistency_stderr"] == 0.0
    assert metrics["clinical_semantic_consistency"] == 1.0
    assert metrics["conflicting_result_consistency"] == 1.0 and metrics["conflicting_result_entropy_change"] > 0
    # Background never moves this model: under-sensitive to it.
    assert metrics["background_consistency"] == 0.0 and metrics["background_under_sensitive"] == 1.0
    assert log.eval.metadata["skipped"]  # pregnancy skipped for men and outside 18-45, counted
    sample = log.samples[0]
    assert sample.store_as(SensitivityArms).baseline["logprob_note"]  # mockllm returns no logprobs
    assert sample.scores["direction_consistency"].metadata["distribution"] == "verbalised"


def test_types_as_inspect_passes_an_unquoted_comma_list():
    # `-T types=surface,timeline` reaches the task as a list.
    task = sensitivity(types=["surface", "timeline"])
    assert {s.metadata["type"] for s in task.dataset} == {"surface", "timeline"}
