"""Workflow escalation suite (seed 004): hand-authored seeds, deterministic episode assembly, lexical audit.

40 seeds (10 per task class) x 2 surface parameterizations x 5 controlled variants = 400 episodes.
`seeds.yaml` is the pre-registered catalog (locked by `seeds.lock`); `episodes.jsonl` is assembled
from it by `python -m clinical_cf.catalog.workflow.assemble` and checked in.
"""

from pathlib import Path

WORKFLOW_DIR = Path(__file__).parent
SEEDS_PATH = WORKFLOW_DIR / "seeds.yaml"
EPISODES_PATH = WORKFLOW_DIR / "episodes.jsonl"
LEXICAL_AUDIT_PATH = WORKFLOW_DIR / "lexical_audit.yaml"

ACTIONS = ("ANSWER", "ASK_CLARIFICATION", "ABSTAIN", "ESCALATE")
TASK_CLASSES = ("documentation_update", "evidence_retrieval", "patient_messaging", "triage_handoff")
VARIANTS = ("clean", "missing", "stale", "conflict", "late_risk")
SPLITS = ("dev", "test")
