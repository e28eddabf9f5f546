"""End to end: the sensitivity task on a mock model that reads the vignette."""

import json
import re

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


def _reads_the_ct(prompt: str) -> str:
    """0.8 on ischaemic stroke; after a CT that shows haemorrhage, 0.9 on intracerebral haemorrhage (the right move)."""
    options = dict(re.findall(r"^([A-F])\) (.+)$", prompt, re.M))
    top = "Intracerebral haemorrhage" if "basal ganglia haemorrhage" in prompt else "Acute ischaemic stroke"
    rest = 0.1 / (len(options) - 1) if top == "Intracerebral haemorrhage" else 0.2 / (len(options) - 1)
    return json.dumps({k: (1 - rest * (len(options) - 1) if name == top else rest) for k, name in options.items()})


@pytest.mark.slow  # an eval of two pairs
def test_a_confident_move_to_haemorrhage_after_a_ct_showing_it_scores_consistent():
    task = sensitivity(types="conflicting_result")
    stroke = [s for s in task.dataset if s.metadata["presentation"] == "stroke"]
    assert {s.metadata["expected"] for s in stroke} == {"flip_to_target"}
    assert {s.metadata["expected_target"] for s in stroke} == {"Intracerebral haemorrhage"}
    log = eval(task, model=MockModel("mockllm/model", _reads_the_ct).model, sample_id=[s.id for s in stroke[:2]], display="none")[0]
    assert log.status == "success", log.error
    assert [s.scores["direction_consistency"].value for s in log.samples] == [1.0, 1.0]
