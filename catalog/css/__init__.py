"""The Causal Sensitivity Score (CSS) suite's tumor-board cases: schema, synthetic cohort and chart renderer."""

from pathlib import Path

CSS_DIR = Path(__file__).parent
CASES_PATH = CSS_DIR / "cases.jsonl"
CATALOG_PATH = CSS_DIR / "interventions.yaml"
"""The pre-registered intervention catalog (its lock is `interventions.yaml.lock`)."""
