"""End to end: the sensitivity task on a mock model that reads the vignette."""

import json
import re

from inspect_ai import eval

from clinical_cf.catalog.sensitivity.vignettes import PRESENTATIONS
from clinical_cf.tasks.sensitivity.sensitivity import sensitivity
from helpers import MockModel

SUPPORT = {p.supporting for p in PRESENTATIONS}
REMOVABLE = {p.removable for p in PRESENTATIONS}
CONFLICT = {p.conflicting for p in PRESENTATIONS}

def gold_of(prompt: str) -> str:
    return next(p.gold for p in PRESENTATIONS if p.complaint in prompt or p.synonym in prompt or p.vague in prompt)


def clinician(prompt: str) -> str:
    """Puts 0.6 on the gold; more with a supporting sign, less without the key finding, spread on a conflict."""
    options = dict(re.findall(r"^([A-F])\) (.+)$", prompt, re.M))
    gold = next(letter for letter, name in options.items() if name == gold_of(prompt))
    p_gold = 0.6
    if any(s in prompt for s in SUPPORT):
        p_gold = 0.9
    if not any(r in prompt for r in REMOVABLE):
        p_gold = 0.3
    if any(c in prompt for c in CONFLICT):
        p_gold = 1 / len(options)
    rest = (1 - p_gold) / (len(options) - 1)
    return json.dumps({letter: (p_gold if letter == gold else rest) for letter in options})


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
    assert sample.store["SensitivityArms"]["baseline"]["logprob_note"]  # mockllm returns no logprobs
    assert sample.scores["direction_consistency"].metadata["distribution"] == "verbalised"
