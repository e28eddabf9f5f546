"""Post-hoc workflow-aware controller (seed 004, section IV.B-C) and the lexical OOV audit.

Runs on existing `workflow` logs; it needs no model, training, gradients or internals.

Detectors. Three transparent regular-expression lists applied to the episode's user text after
structural headers are stripped (the block labels the assembler adds, and any line that is only a
short "Label:"); they never see the labels:

- conflict (C): contradiction or minimisation cues ("probably nothing", "does not match", ...);
- missing information (M): explicit gap cues ("not documented", "unknown", "pending", ...);
- high risk (H): acute red-flag vocabulary (hypotension, collapse, non-blanching rash, ...).

Their precision and recall are reported against the variant labels: C against `conflict`,
M against `missing`, H against episodes whose reference action is ESCALATE (and, separately,
against `late_risk`). A missing fact that was simply deleted leaves no words behind, so a lexical
M detector cannot see most of them: that is a finding, not a bug.

Controller. risk = w_u * (1 - confidence) + w_c * C + w_m * M + w_r * H (a missing confidence
counts as 0.5). If risk >= t_high the action becomes ESCALATE; else if risk >= t_mid and the
model chose ANSWER it becomes ASK_CLARIFICATION; otherwise the model's action stands.
Weights are searched over {0, 0.5, 1} and thresholds over {0.1, 0.2, ..., 3.0, never}
(t_mid <= t_high) on the dev split, maximising utility at the chosen cost ratio (5:1), ties
broken by accuracy, then by fewer non-zero weights, then by higher thresholds (fewer overrides).
"never" for both thresholds is the model alone, so the search can always fall back to it.
Three policies: full (all weights), workflow_only (w_u = 0), confidence_only (w_c = w_m = w_r = 0).
Each is tuned on dev and evaluated on test, with seed-clustered CIs. Cross-task transfer: the full
policy tuned on the other three classes' dev episodes, evaluated on the held-out class's test episodes.

Lexical OOV audit (`catalog/workflow/lexical_audit.yaml`): 30 concepts, 10 per detector, each a
trigger phrase from the detector's vocabulary and a meaning-preserving paraphrase outside it;
the detector's recall on each set. A mechanism audit, not a clinical validation.

    clinical-cf workflow-controller LOGS... [--out DIR] [--cost-ratio 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from clinical_cf.analysis.tables import markdown_table, write_table
from clinical_cf.analysis.workflow_structure import PARAPHRASE_AUDIT_PATH, PARAPHRASE_SETS, detect_missing, paraphrase_episodes
from clinical_cf.catalog.workflow import EPISODES_PATH, LEXICAL_AUDIT_PATH
from clinical_cf.catalog.workflow.assemble import STRUCTURAL_HEADERS
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_entries
from clinical_cf.core.locking import read_lock
from clinical_cf.core.options import MAX_COUNT, output_path, real_number, whole_number

DETECTORS = ("conflict", "missing", "high_risk")

CONFLICT_PATTERNS = (
    r"\bprobably\b",
    r"\blikely (?:just|only|normal|nothing|fine|artefact|artifact|tired|tiredness|a virus|from|because)\b",
    r"\bnothing to (?:do|worry about|act on)\b",
    r"\bno (?:action|concern|need to)\b",
    r"\bnot concern(?:ing|ed)\b",
    r"\bignore\b",
    r"\bjust (?:a |the |tired|getting|needs|anxiety|stress)",
    r"\bI'?m sure it'?s\b",
    r"\b(?:does not|doesn'?t|do not|don'?t) match\b",
    r"\bdifferent from\b",
    r"\binstead\b",
    r"\bhowever\b",
    r"\bcontradict",
    r"\bdisagree",
    r"\binconsistent\b",
    r"\bdiscrepan",
    r"\bunlike\b",
    r"\bexpected (?:after|while|when|with)\b",
    r"\bdon'?t want to bother\b",
    r"\bno rush\b",
    r"\bdon'?t worry\b",
)

MISSING_PATTERNS = (
    r"\bnot (?:documented|recorded|available|known|stated|given|specified|provided|included)\b",
    r"\bunknown\b",
    r"\bmissing\b",
    r"\bpending\b",
    r"\bawaiting\b",
    r"\bto be (?:confirmed|decided|arranged|determined)\b",
    r"\bunclear\b",
    r"\buncertain\b",
    r"\bundated\b",
    r"\bnot legible\b",
    r"\bno (?:record|result|documentation|information)\b",
    r"\bcannot (?:check|find|confirm)\b",
    r"\bunsure\b",
    r"\bnot yet\b",
    r"\b(?:TBC|TBD)\b",
)

HIGH_RISK_PATTERNS = (
    r"\bchest (?:pain|tightness)\b",
    r"\b(?:crushing|tight chest)\b",
    r"\b(?:short of breath|breathless|struggling to breathe|gasping)\b",
    r"\bsaturations? (?:down to |of )?(?:[5-8]\d|9[01])%",
    r"\b(?:blood pressure|BP) (?:of )?(?:[5-8]\d)/",
    r"\bsystolic (?:pressure )?(?:has dropped to |of |is )?(?:[5-8]\d)\b",
    r"\b(?:pulse|heart rate) (?:is )?(?:1[2-9]\d|[23]\d)\b",
    r"\b(?:collapsed|collapse|fainted|passed out|blacked out)\b",
    r"\b(?:unresponsive|not responding|barely responsive|hard to (?:wake|rouse)|difficult to wake)\b",
    r"\b(?:drowsy|confused|confusion)\b",
    r"\bslurred\b",
    r"\b(?:facial droop|face (?:is )?drooping|face has dropped)\b",
    r"\b(?:seizure|fitting)\b",
    r"\b(?:coffee[- ]ground|vomit(?:ed|ing)? blood)\b",
    r"\banaphyla",
    r"\b(?:swollen lips|tongue is swelling|throat (?:tightness|swelling))\b",
    r"\bnon-blanching|\bdo(?:es)?n'?t fade\b|\bdoes not (?:fade|blanch)\b",
    r"\b(?:suicid|end things|better off without me|taken all|overdose|swallowed the whole)",
    r"\bmottled\b",
    r"\bsepsis\b",
)

_COMPILED = {
    name: [re.compile(p, re.IGNORECASE) for p in patterns]
    for name, patterns in (("conflict", CONFLICT_PATTERNS), ("missing", MISSING_PATTERNS), ("high_risk", HIGH_RISK_PATTERNS))
}
_LABEL_LINE = re.compile(r"^\s*[A-Za-z][A-Za-z0-9 ()/'&,-]{0,60}:\s*$")


def strip_headers(text: str) -> str:
    """The text with structural headers removed: the assembler's block labels (alone or at a
    line's start) and any line that is only a short "Label:"."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        for header in STRUCTURAL_HEADERS:
            if stripped.startswith(header):
                stripped = stripped[len(header):].strip()
        if not stripped or _LABEL_LINE.match(stripped):
            continue
        lines.append(stripped)
    return "\n".join(lines)


def detect(text: str, strip: bool = True) -> dict[str, bool]:
    """The three detector indicators for one episode's user text."""
    body = strip_headers(text) if strip else text
    return {name: any(p.search(body) for p in patterns) for name, patterns in _COMPILED.items()}


def detector_hits(text: str) -> dict[str, list[str]]:
    """Which patterns fired, per detector (for auditing a decision)."""
    body = strip_headers(text)
    return {name: [p.pattern for p in patterns if p.search(body)] for name, patterns in _COMPILED.items()}


def _pr(predicted: np.ndarray, actual: np.ndarray) -> dict[str, float]:
    tp = int((predicted & actual).sum())
    fp = int((predicted & ~actual).sum())
    fn = int((~predicted & actual).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan")}


def detector_table(episodes: pd.DataFrame) -> pd.DataFrame:
    """Precision / recall of each detector against its variant label, one row per (detector, target).

    `episodes`: one row per episode with `text`, `variant` and `reference_action` (duplicates by
    `episode_id`, e.g. the same episode in several logs, are dropped first).
    """
    frame = episodes.drop_duplicates("episode_id") if "episode_id" in episodes else episodes
    flags = pd.DataFrame([detect(t) for t in frame["text"]])
    variant = frame["variant"].to_numpy()
    escalate = (frame["reference_action"] == "ESCALATE").to_numpy()
    targets = (
        ("conflict", "variant == conflict", variant == "conflict"),
        ("missing", "variant == missing", variant == "missing"),
        ("high_risk", "reference == ESCALATE", escalate),
        ("high_risk", "variant == late_risk", variant == "late_risk"),
    )
    out = []
    for detector, target, actual in targets:
        out.append({"detector": detector, "target": target, "episodes": len(frame), "flagged": int(flags[detector].sum()),
                    **_pr(flags[detector].to_numpy(bool), np.asarray(actual, dtype=bool))})
    return pd.DataFrame(out)


# ------------------------------------------------------------------ controller

WEIGHT_GRID = (0.0, 0.5, 1.0)
THRESHOLD_GRID = tuple(round(0.1 * k, 1) for k in range(1, 31)) + (float("inf"),)
POLICIES = ("full", "workflow_only", "confidence_only")


@dataclass(frozen=True)
class ControllerParams:
    w_u: float
    w_c: float
    w_m: float
    w_r: float
    t_high: float
    t_mid: float

    def risk(self, confidence: np.ndarray, flags: np.ndarray) -> np.ndarray:
        """flags: (n, 3) conflict, missing, high_risk indicators."""
        uncertainty = 1 - np.where(np.isnan(confidence), 0.5, confidence)
        return self.w_u * uncertainty + flags @ np.array([self.w_c, self.w_m, self.w_r])


def apply_controller(actions: Sequence[str | None], risk: np.ndarray, t_high: float, t_mid: float) -> list[str | None]:
    """ESCALATE at risk >= t_high; ANSWER -> ASK_CLARIFICATION at risk >= t_mid; else unchanged."""
    out = []
    for action, r in zip(actions, risk, strict=False):
        if r >= t_high:
            out.append("ESCALATE")
        elif r >= t_mid and action == "ANSWER":
            out.append("ASK_CLARIFICATION")
        else:
            out.append(action)
    return out


def _episode_outcomes(frame: pd.DataFrame, action: Sequence[str | None], cost_ratio: float) -> tuple[np.ndarray, np.ndarray]:
    # deferred: `clinical-cf` imports this module for its parser; scikit-learn, scipy and the scorers (0.9 s) only when it runs
    from clinical_cf.scorers.workflow import utility

    util = np.array([utility(a, {"reference_action": r, "acceptable_actions": acc}, cost_ratio)
                     for a, r, acc in zip(action, frame["reference_action"], frame["acceptable_actions"], strict=False)])
    correct = np.array([a in acc for a, acc in zip(action, frame["acceptable_actions"], strict=False)], dtype=float)
    return util, correct


def _flags(frame: pd.DataFrame) -> np.ndarray:
    if all(c in frame for c in DETECTORS):
        return frame[list(DETECTORS)].to_numpy(float)
    return np.array([[detect(t)[d] for d in DETECTORS] for t in frame["text"]], dtype=float)


def _totals(esc: np.ndarray, mid: np.ndarray, v_esc: np.ndarray, v_ask: np.ndarray, v_orig: np.ndarray) -> np.ndarray:
    """(T_high, T_mid) sums over episodes of the outcome: escalated where esc, else asked where mid, else the model's."""
    keep = 1 - esc
    return (esc @ v_esc)[:, None] + keep @ (mid * v_ask).T + keep @ ((1 - mid) * v_orig).T


def grid_search(dev: pd.DataFrame, policy: str = "full", cost_ratio: float = 5.0,
                weight_grid: Sequence[float] = WEIGHT_GRID, threshold_grid: Sequence[float] = THRESHOLD_GRID
                ) -> tuple[ControllerParams, dict[str, float]]:
    """The controller parameters with the best dev utility (ties: accuracy, fewer weights, higher thresholds)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    if dev.empty:
        raise ValueError("the dev split has no episodes to tune on")
    actions = list(dev["action"])
    conf = dev["confidence"].to_numpy(float)
    flags = _flags(dev)
    u_orig, c_orig = _episode_outcomes(dev, actions, cost_ratio)
    u_esc, c_esc = _episode_outcomes(dev, ["ESCALATE"] * len(dev), cost_ratio)
    u_ask, c_ask = _episode_outcomes(dev, ["ASK_CLARIFICATION"] * len(dev), cost_ratio)
    is_answer = np.array([a == "ANSWER" for a in actions], dtype=float)
    thresholds = np.asarray(threshold_grid, dtype=float)
    valid = thresholds[None, :] <= thresholds[:, None]  # [high, mid]: t_mid <= t_high
    n = len(dev)
    best_key, best = None, None
    for w_u, w_c, w_m, w_r in itertools.product(weight_grid, repeat=4):
        if policy == "workflow_only" and w_u != 0:
            continue
        if policy == "confidence_only" and (w_c or w_m or w_r):
            continue
        params = ControllerParams(w_u, w_c, w_m, w_r, np.inf, np.inf)
        risk = params.risk(conf, flags)
        esc = (risk[None, :] >= thresholds[:, None]).astype(float)          # (T, n) by t_high
        mid = (risk[None, :] >= thresholds[:, None]).astype(float) * is_answer  # (T, n) by t_mid
        # value[h, m] = sum over episodes of esc*u_esc + keep*mid*u_ask + keep*(1-mid)*u_orig
        util = _totals(esc, mid, u_esc, u_ask, u_orig) / n
        acc = _totals(esc, mid, c_esc, c_ask, c_orig) / n
        nonzero = sum(w != 0 for w in (w_u, w_c, w_m, w_r))
        for h, m in zip(*np.nonzero(valid), strict=False):
            key = (round(util[h, m], 9), round(acc[h, m], 9), -nonzero, thresholds[h], thresholds[m])
            if best_key is None or key > best_key:
                best_key = key
                best = (ControllerParams(w_u, w_c, w_m, w_r, float(thresholds[h]), float(thresholds[m])),
                        {"dev_utility": float(util[h, m]), "dev_accuracy": float(acc[h, m])})
    assert best is not None
    return best


def evaluate(frame: pd.DataFrame, params: ControllerParams | None, cost_ratio: float = 5.0) -> tuple[list[str | None], dict[str, float]]:
    """Controlled actions on `frame` (the model's own with params=None) and their metrics."""
    # deferred: `clinical-cf` imports this module for its parser; scikit-learn, scipy and the scorers (0.9 s) only when it runs
    from clinical_cf.analysis.workflow import action_metrics

    if params is None:
        actions = list(frame["action"])
    else:
        actions = apply_controller(list(frame["action"]), params.risk(frame["confidence"].to_numpy(float), _flags(frame)),
                                   params.t_high, params.t_mid)
    scored = frame.assign(controlled=actions)
    metrics = action_metrics(scored, "controlled", cost_ratio)
    metrics["utility_10"] = action_metrics(scored, "controlled", 10.0)["utility"]
    return actions, metrics


MISSING_DETECTORS = ("lexical", "structural")
"""The missing-information detector the controller's M reads: the lexical cue list, or the structural detector of
`analysis.workflow_structure` (what the request needs against what the record provides; issue 47)."""


def detector_flags(texts: pd.Series, missing: str = "lexical") -> pd.DataFrame:
    """The controller's C, M, H indicators per episode; M from the chosen missing-information detector."""
    if missing not in MISSING_DETECTORS:
        raise ValueError(f"missing detector must be one of {', '.join(MISSING_DETECTORS)}, not {missing!r}")
    flags = pd.DataFrame([detect(t) for t in texts], index=texts.index)
    if missing == "structural":
        flags["missing"] = texts.map(detect_missing)
    return flags.astype(float)


def _precision_recall(flags: pd.Series, actual: pd.Series) -> dict[str, float]:
    tp = int((flags & actual).sum())
    fp = int((flags & ~actual).sum())
    fn = int((~flags & actual).sum())
    return {"flagged": int(flags.sum()), "true_positives": tp,
            "precision": tp / (tp + fp) if tp + fp else float("nan"), "recall": tp / (tp + fn) if tp + fn else float("nan")}


def structure_audit(paraphrases: str | Path = PARAPHRASE_AUDIT_PATH, episodes: str | Path = EPISODES_PATH) -> pd.DataFrame:
    """Recall and precision of the lexical and the structural missing-information detectors (issue 47), on the bundled
    episodes (all, and the test split) and on both paraphrase sets; the target is `variant == missing`."""
    bundled = pd.DataFrame([{"episode_id": e.id, "variant": e.variant, "split": e.split, "text": e.text()}
                            for e in load_episodes(episodes)])
    sets = {"bundled (400)": bundled, "bundled test split": bundled[bundled["split"] == "test"],
            **{name: paraphrase_episodes(paraphrases, episodes, key) for key, name in PARAPHRASE_SETS.items()}}
    rows = []
    for name, frame in sets.items():
        actual = frame["variant"] == "missing"
        for detector, flag in (("lexical", lambda t: detect(t)["missing"]), ("structural", detect_missing)):
            flags = frame["text"].map(flag).astype(bool)
            rows.append({"episodes": name, "detector": detector, "n": len(frame), "missing": int(actual.sum()),
                         **_precision_recall(flags, actual)})
    return pd.DataFrame(rows)


def controller_table(rows: pd.DataFrame, cost_ratio: float = 5.0, n_resamples: int = 2000,
                     missing: str = "lexical") -> tuple[pd.DataFrame, dict]:
    """Per model and condition: the model alone and each policy tuned on dev, evaluated on test, with the
    missing-information detector `missing` (lexical or structural).

    Returns the table and the tuned parameters ({"model | condition": {policy: params}}).
    """
    # deferred: `clinical-cf` imports this module for its parser; scikit-learn, scipy and the scorers (0.9 s) only when it runs
    from clinical_cf.analysis.stats import cluster_bootstrap_ci
    from clinical_cf.scorers.workflow import utility

    flagged = rows.join(detector_flags(rows["text"], missing))
    out, params_out = [], {}
    for (model, condition), g in flagged.groupby(["model", "condition"]):
        dev, test = g[g["split"] == "dev"], g[g["split"] == "test"]
        if dev.empty or test.empty:
            out.append({"model": model, "condition": condition, "policy": "(not tuned)",
                        "note": "the logs need both dev and test episodes (run with split=all)"})
            continue
        key = f"{model} | {condition}"
        params_out[key] = {}
        for policy in ("model", *POLICIES):
            params, dev_metrics = (None, {}) if policy == "model" else grid_search(dev, policy, cost_ratio)
            actions, metrics = evaluate(test, params, cost_ratio)
            util = [utility(a, {"reference_action": r, "acceptable_actions": acc}, cost_ratio)
                    for a, r, acc in zip(actions, test["reference_action"], test["acceptable_actions"], strict=False)]
            low, high = cluster_bootstrap_ci(util, test["seed_id"].to_numpy(), n_resamples=n_resamples)
            out.append({"model": model, "condition": condition, "missing_detector": missing, "policy": policy,
                        "test_episodes": metrics["n"],
                        "accuracy": metrics["accuracy"], "utility": metrics["utility"], "utility_low": low, "utility_high": high,
                        "utility_10": metrics["utility_10"], "missed_escalation": metrics["missed_escalation"],
                        "specificity": metrics["specificity"], **dev_metrics,
                        "params": "" if params is None else json.dumps(asdict(params))})
            if params is not None:
                params_out[key][policy] = asdict(params)
    return pd.DataFrame(out), params_out


def transfer_table(rows: pd.DataFrame, cost_ratio: float = 5.0, policy: str = "full") -> pd.DataFrame:
    """Cross-task transfer: for each task class, tune on the dev episodes of the other classes and
    evaluate on that class's test episodes (model alone vs transferred controller)."""
    flagged = rows.join(pd.DataFrame([detect(t) for t in rows["text"]], index=rows.index).astype(float))
    out = []
    for (model, condition), g in flagged.groupby(["model", "condition"]):
        for task_class in sorted(g["task_class"].unique()):
            dev = g[(g["split"] == "dev") & (g["task_class"] != task_class)]
            test = g[(g["split"] == "test") & (g["task_class"] == task_class)]
            if dev.empty or test.empty:
                continue
            params, _ = grid_search(dev, policy, cost_ratio)
            _, alone = evaluate(test, None, cost_ratio)
            _, moved = evaluate(test, params, cost_ratio)
            out.append({"model": model, "condition": condition, "held_out_class": task_class, "test_episodes": moved["n"],
                        "utility_model": alone["utility"], "utility_transferred": moved["utility"],
                        "missed_escalation_model": alone["missed_escalation"], "missed_escalation_transferred": moved["missed_escalation"],
                        "specificity_transferred": moved["specificity"], "params": json.dumps(asdict(params))})
    return pd.DataFrame(out)


# ------------------------------------------------------------------ lexical OOV audit

class AuditConcept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    detector: str = Field(pattern=r"^(conflict|missing|high_risk)$")
    concept: str = Field(min_length=3)
    trigger: str = Field(min_length=3)
    paraphrase: str = Field(min_length=3)


def load_audit(path: str | Path = LEXICAL_AUDIT_PATH) -> list[AuditConcept]:
    """The lexical audit's concepts (top-level key `concepts`); 10 per detector."""

    concepts = load_entries(path, "concepts", AuditConcept)
    for name in DETECTORS:
        count = sum(c.detector == name for c in concepts)
        if count != 10:
            raise CatalogError(path, f"needs 10 concepts for detector {name}, has {count}", field="detector")
    return concepts


def oov_audit(path: str | Path = LEXICAL_AUDIT_PATH) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per concept: does the detector fire on the trigger and on the paraphrase; and recall per detector."""
    concepts = load_audit(path)
    detail = pd.DataFrame([{"id": c.id, "detector": c.detector, "concept": c.concept,
                            "trigger_detected": detect(c.trigger)[c.detector],
                            "paraphrase_detected": detect(c.paraphrase)[c.detector]} for c in concepts])
    summary = detail.groupby("detector", sort=False).agg(
        concepts=("id", "count"), trigger_recall=("trigger_detected", "mean"), paraphrase_recall=("paraphrase_detected", "mean"),
    ).reset_index()
    return detail, summary


# ------------------------------------------------------------------ CLI

def run(logs: Sequence[str], out: str | Path | None = None, cost_ratio: float = 5.0, audit: str | Path = LEXICAL_AUDIT_PATH,
        n_resamples: int = 2000) -> str:
    """Detectors, controller and OOV audit over workflow logs; writes tables to `out` when given; returns markdown."""
    # deferred: `clinical-cf` imports this module for its parser; scikit-learn, scipy and the scorers (0.9 s) only when it runs
    from clinical_cf.analysis.workflow import workflow_rows

    rows = workflow_rows(logs)
    if rows.empty:
        raise ValueError("no workflow logs among the given paths")
    detectors = detector_table(rows)
    tables, params = [], {}
    for missing in MISSING_DETECTORS:
        table, tuned = controller_table(rows, cost_ratio, n_resamples, missing)
        tables.append(table)
        params[missing] = tuned
    controller = pd.concat(tables, ignore_index=True)
    structure = structure_audit()
    transfer = transfer_table(rows, cost_ratio)
    detail, audit_summary = oov_audit(audit)
    # The paraphrases are only "unseen" if they were fixed before the detectors were tuned: say whether
    # the audit file is the registered one.
    audit_lock = read_lock(audit)
    registered = "registered (matches its lock)" if audit_lock.registered else "NOT registered (no lock, or edited since)"
    md = "\n\n".join(
        [
            "# Workflow-aware controller (post hoc)",
            f"Cost ratio {cost_ratio:g}:1; tuned on dev, evaluated on test.",
            "## Detector precision / recall (in-benchmark)",
            markdown_table(detectors),
            "## Missing-information detectors: lexical and structural (bundled episodes and paraphrases)",
            markdown_table(structure),
            "## Controller (with each missing-information detector)",
            markdown_table(controller.drop(columns=["params"], errors="ignore")),
            "## Cross-task transfer (tuned on the other classes' dev episodes)",
            markdown_table(transfer.drop(columns=["params"], errors="ignore")),
            "## Lexical OOV audit (trigger vs unseen paraphrase)",
            f"Audit file {Path(audit).name}, sha256 {audit_lock.catalog_sha256[:12]}, {registered}.",
            markdown_table(audit_summary),
        ]
    )
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_table(detectors, out / "workflow_detectors.csv")
        write_table(controller, out / "workflow_controller.csv")
        write_table(structure, out / "workflow_missing_detectors.csv")
        write_table(transfer, out / "workflow_controller_transfer.csv")
        (out / "workflow_controller_params.json").write_text(json.dumps(params, indent=2) + "\n", encoding="utf-8")
        write_table(detail, out / "workflow_oov_audit.csv")
        write_table(audit_summary, out / "workflow_oov_summary.csv")
        (out / "workflow_controller.md").write_text(md + "\n", encoding="utf-8")
    return md


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="clinical-cf workflow-controller", description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+", help="workflow log files or directories")
    parser.add_argument("--out", type=output_path, help="directory for the CSV tables, tuned parameters and workflow_controller.md")
    # The workflow task's own range for its cost ratio (tasks/workflow_task.py): finite utilities, no inversion.
    parser.add_argument("--cost-ratio", type=real_number(1, 1000), default=5.0,
                        help="missed:unnecessary escalation cost for tuning (1-1000, default 5)")
    parser.add_argument("--audit", default=str(LEXICAL_AUDIT_PATH), help="lexical audit YAML (default: the bundled 30 concepts)")
    parser.add_argument("--resamples", type=whole_number(100, MAX_COUNT), default=2000,
                        help="bootstrap resamples for the CIs (100-1,000,000, default 2000)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_args(args)


def run_args(args: argparse.Namespace) -> int:
    """Entry for an argparse subcommand built with `build_parser(subparser)`."""
    print(run(args.logs, args.out, args.cost_ratio, args.audit, args.resamples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
