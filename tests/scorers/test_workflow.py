"""Workflow scorer: utility, ECE and failure AUROC on hand-computed fixtures."""

import numpy as np
import pytest

from clinical_cf.analysis.workflow import failure_auroc
from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.scorers.workflow import expected_calibration_error, utility

ESC = {"reference_action": "ESCALATE", "acceptable_actions": ["ESCALATE"]}
ANS = {"reference_action": "ANSWER", "acceptable_actions": ["ANSWER"]}
STALE = {"reference_action": "ANSWER", "acceptable_actions": ["ANSWER", "ASK_CLARIFICATION"]}
ASK_OR_ESC = {"reference_action": "ASK_CLARIFICATION", "acceptable_actions": ["ASK_CLARIFICATION", "ESCALATE"]}


def test_utility_cases():
    assert utility("ESCALATE", ESC) == 1
    assert utility("ANSWER", ESC) == -5 and utility("ASK_CLARIFICATION", ESC, 10) == -10 and utility(None, ESC) == -5
    assert utility("ESCALATE", ANS) == -1
    assert utility("ANSWER", ANS) == 1 and utility("ASK_CLARIFICATION", STALE) == 1
    assert utility("ABSTAIN", ANS) == 0 and utility(None, ANS) == 0
    assert utility("ESCALATE", ASK_OR_ESC) == 1  # acceptable, so not an unnecessary escalation


def test_a_policy_that_misses_escalations_goes_negative():
    episodes = load_episodes(EPISODES_PATH)
    never = np.mean([utility("ANSWER", e) for e in episodes])
    assert never == pytest.approx((140 - 5 * 130) / 400)  # -1.275, as the docstring says
    always = np.mean([utility("ESCALATE", e) for e in episodes])
    assert always == pytest.approx((130 - 270) / 400)
    assert np.mean([utility(e.reference_action, e) for e in episodes]) == 1


def test_ece_hand_computed():
    # bin [0.9, 1.0]: conf 0.9, 1.0 -> mean 0.95, accuracy 0.5 -> gap 0.45, weight 2/5
    # bin [0.6, 0.7): conf 0.6, 0.6, 0.6 -> accuracy 2/3 -> gap 0.0667, weight 3/5
    conf = [0.9, 1.0, 0.6, 0.6, 0.6]
    correct = [1, 0, 1, 1, 0]
    assert expected_calibration_error(conf, correct) == pytest.approx(2 / 5 * 0.45 + 3 / 5 * (2 / 3 - 0.6))
    assert expected_calibration_error([0.05, np.nan], [0, 1]) == pytest.approx(0.05)
    assert np.isnan(expected_calibration_error([], []))


def test_failure_auroc_hand_computed():
    # failures at confidences 0.2 and 0.6, successes at 0.5, 0.9, 0.95: of the 6 (failure, success)
    # pairs the failure is less confident in 5 -> AUROC 5/6
    assert failure_auroc([0.2, 0.6, 0.5, 0.9, 0.95], [0, 0, 1, 1, 1]) == pytest.approx(5 / 6)
    assert np.isnan(failure_auroc([0.5, 0.6], [1, 1]))
    assert failure_auroc([0.1, 0.9, np.nan], [0, 1, 0]) == 1.0
