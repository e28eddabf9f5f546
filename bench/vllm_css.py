"""One CSS family on a GPU through vLLM: samples/s and tokens/s (a benchmark, not a test).

Inspect's `vllm/` provider starts `vllm serve` for the model path given (already on the machine;
nothing is downloaded) and the same server judges, so a run needs one GPU and no network:

    pip install -e '.[vllm]'
    python bench/vllm_css.py --model-path /models/Qwen2.5-7B-Instruct [--family D] [--limit 60]

Runs the family twice on the same samples: the paper's naive pipeline (baseline arm regenerated
for every tuple, `baseline_cache=False`) as the baseline, then ours (baseline once per case through a
fresh generate cache), and prints wall time, samples/s and tokens/s for each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from inspect_ai import eval

from clinical_cf.tasks.css_task import build_css_task


def run(model: str, family: str, limit: int, connections: int, tp: int, shared: bool) -> tuple[float, int, dict[str, int]]:
    os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="css-bench-cache-")
    started = time.perf_counter()
    log = eval(
        build_css_task(families=family, baseline_cache=shared),
        model=model,
        model_args={"tensor_parallel_size": tp} if tp > 1 else {},
        model_roles={"judge": model},
        limit=limit,
        max_connections=connections,
        max_tokens=700,
        max_retries=2,
        timeout=300,
        display="plain",
    )[0]
    elapsed = time.perf_counter() - started
    if log.status != "success":
        raise SystemExit(f"eval failed: {log.error}")
    tokens = {name: usage.total_tokens for name, usage in log.stats.model_usage.items()}
    return elapsed, len(log.samples or []), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-path", required=True, help="a model directory already on this machine")
    parser.add_argument("--family", default="D")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--max-connections", type=int, default=32)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    args = parser.parse_args()
    if not os.path.isdir(args.model_path):
        raise SystemExit(f"{args.model_path} is not a directory on this machine")
    os.environ.setdefault("INSPECT_LOG_DIR", "logs/bench")
    model = f"vllm/{args.model_path}"

    naive = run(model, args.family, args.limit, args.max_connections, args.tensor_parallel_size, shared=False)
    ours = run(model, args.family, args.limit, args.max_connections, args.tensor_parallel_size, shared=True)
    print(f"{'pipeline':<28}{'samples':>8}{'seconds':>9}{'samples/s':>11}{'tokens/s':>10}")
    for label, (seconds, n, tokens) in (("naive (baseline per tuple)", naive), ("ours (baseline per case)", ours)):
        print(f"{label:<28}{n:>8}{seconds:>9.1f}{n / seconds:>11.2f}{sum(tokens.values()) / seconds:>10.0f}")
    print(f"speed-up ours/naive (samples/s): {(ours[1] / ours[0]) / (naive[1] / naive[0]):.2f}")


if __name__ == "__main__":
    main()
