"""Model calls per tuple for a full CSS run on mock models (a benchmark, not a test).

Prints, for the same run:
  floor  = counterfactual arm (2 calls) + judge (1) per tuple, plus the baseline arm (2) once per case
  naive  = both arms and the judge for every tuple (the CSS paper's pipeline: 5 calls per tuple)
  ours   = calls actually made with the shared baseline (Inspect generate cache + per-case lock)
and the same run with `baseline_cache=False`, which should equal the naive count.

    python bench/css_calls.py [--families ABCDE] [--cases PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from collections import Counter

from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.tasks.css_task import build_css_task


class CountingMock:
    """Replies `reply`, tagged with a digest of the prompt so different cases never share a reply."""

    def __init__(self, name: str, reply: str) -> None:
        self.name, self.reply, self.calls = name, reply, Counter()

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        prompt = messages[-1].text
        self.calls[prompt] += 1
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
        out = ModelOutput.from_content(self.name, self.reply.replace("{digest}", digest))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def run(families: str, cases: str | None, limit: int | None, baseline_cache: bool) -> tuple[int, int, int, int, float]:
    under_test = CountingMock("mockllm/model", json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "{digest}"}]}))
    judge = CountingMock("mockllm/judge", json.dumps({"score": 1, "rationale": "ok"}))
    # A fresh generate cache per run, so nothing from an earlier run is reused.
    os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=os.environ["INSPECT_LOG_DIR"])
    task = build_css_task(families=families, cases=cases, baseline_cache=baseline_cache)
    started = time.perf_counter()
    log = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=under_test),
        model_roles={"judge": get_model("mockllm/judge", custom_outputs=judge)},
        limit=limit,
        display="none",
        log_dir=os.environ["INSPECT_LOG_DIR"],
    )[0]
    elapsed = time.perf_counter() - started
    samples = log.samples or []
    n_cases = len({s.metadata["case_id"] for s in samples})
    return len(samples), n_cases, under_test.total, judge.total, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default="ABCDE")
    parser.add_argument("--cases")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["INSPECT_LOG_DIR"] = tmp
        run(args.families, args.cases, 2, True)  # warm-up: imports and first-eval setup
        _, _, naive_model_calls, naive_judge_calls, naive_s = run(args.families, args.cases, args.limit, False)
        tuples, cases, model_calls, judge_calls, shared_s = run(args.families, args.cases, args.limit, True)

    floor = 2 * tuples + tuples + 2 * cases
    naive = 5 * tuples
    ours = model_calls + judge_calls
    measured_naive = naive_model_calls + naive_judge_calls
    print(f"CSS families {args.families}: {tuples} tuples over {cases} cases")
    print(f"{'pipeline':<34}{'calls':>8}{'per tuple':>11}{'vs naive':>10}{'seconds':>9}")
    print(f"{'floor (baseline once per case)':<34}{floor:>8}{floor / tuples:>11.3f}{floor / naive:>10.3f}{'':>9}")
    print(f"{'ours (shared baseline)':<34}{ours:>8}{ours / tuples:>11.3f}{ours / naive:>10.3f}{shared_s:>9.1f}")
    print(f"{'naive (paper pipeline), expected':<34}{naive:>8}{naive / tuples:>11.3f}{1:>10.3f}{'':>9}")
    print(
        f"{'naive, measured (no cache)':<34}{measured_naive:>8}{measured_naive / tuples:>11.3f}"
        f"{measured_naive / naive:>10.3f}{naive_s:>9.1f}"
    )


if __name__ == "__main__":
    main()
