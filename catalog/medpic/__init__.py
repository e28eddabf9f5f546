"""MedPIC suite (seed 002): verified medication-safety rules and MedRule2Pair GF/CF questions."""

from pathlib import Path

MEDPIC_DIR = Path(__file__).parent
RULES_PATH = MEDPIC_DIR / "rules.yaml"
QUESTIONS_PATH = MEDPIC_DIR / "questions.jsonl"
