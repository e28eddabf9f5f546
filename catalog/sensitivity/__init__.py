"""Sensitivity suite (seed 001): diagnostic vignettes and pre-registered perturbations with expected directions."""

from pathlib import Path

SENSITIVITY_DIR = Path(__file__).parent
VIGNETTES_PATH = SENSITIVITY_DIR / "vignettes.jsonl"
PERTURBATIONS_PATH = SENSITIVITY_DIR / "perturbations.yaml"
