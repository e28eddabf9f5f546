"""Wall time and peak memory of `clinical-cf report` on synthetic logs (a benchmark, not a test).

Builds logs for N tuples x M models by cloning the samples of one real mock-model CSS log (so the
logs are genuine Inspect logs), then times `write_report` on them, next to the same report on a
tenth of the tuples in the same run (the ratio shows how the report scales).

    python bench/report.py [--tuples 5000] [--models 6]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.analysis.report import write_report
from clinical_cf.tasks.css_task import build_css_task


def _mock(content: str):
    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/m", content)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return respond


def synthetic_logs(folder: Path, tuples: int, models: int) -> None:
    """`models` logs of `tuples` samples each, cloned from one real log with varied verdicts."""
    seed_log = eval(
        build_css_task(families="ABCDE"),
        model=get_model("mockllm/m", custom_outputs=_mock(json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "r"}]}))),
        model_roles={"judge": get_model("mockllm/j", custom_outputs=_mock(json.dumps({"score": 1, "rationale": "r"})))},
        limit=50,
        display="none",
        log_dir=str(folder / "seed"),
    )[0]
    template = read_eval_log(seed_log.location)
    rng = random.Random(0)
    for m in range(models):
        log = template.model_copy(deep=True)
        log.eval.model = f"mockllm/model-{m}"
        samples = []
        for i in range(tuples):
            sample = template.samples[i % len(template.samples)].model_copy(deep=True)
            sample.id = f"{sample.id}#{i}"
            sample.metadata["case_id"] = f"{sample.metadata['case_id']}-{i // 7}"
            sample.scores["judge_direction"].value = rng.choice((0.0, 0.5, 1.0))
            samples.append(sample)
        log.samples = samples
        write_eval_log(log, str(folder / f"model-{m}.eval"))


def timed_report(folder: Path, out: Path) -> tuple[float, float]:
    started = time.perf_counter()
    write_report([str(folder)], out)
    return time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tuples", type=int, default=5000)
    parser.add_argument("--models", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        synthetic_logs(small, max(1, args.tuples // 10), args.models)
        synthetic_logs(large, args.tuples, args.models)
        small_s, small_mb = timed_report(small, Path(tmp) / "out-small")
        large_s, large_mb = timed_report(large, Path(tmp) / "out-large")
    print(f"{'logs':<28}{'seconds':>9}{'peak RSS MB':>13}")
    print(f"{f'{args.tuples // 10} tuples x {args.models} models':<28}{small_s:>9.1f}{small_mb:>13.0f}")
    print(f"{f'{args.tuples} tuples x {args.models} models':<28}{large_s:>9.1f}{large_mb:>13.0f}")
    print(f"ratio (10x the tuples): time {large_s / small_s:.1f}x")


if __name__ == "__main__":
    main()
