"""One CSS family on a GPU through vLLM: samples/s and tokens/s (a benchmark, not a test).

Inspect's `vllm/` provider starts `vllm serve` for the model path given (already on the machine;
nothing is downloaded) and the same server judges, so a run needs one GPU and no network:

    pip install -e '.[vllm]'
    python bench/vllm_css.py --model-path /models/Qwen2.5-7B-Instruct [--family D] [--limit 60]

Prints wall time, samples/s and tokens/s for the model under test and the judge, next to the same
figures for the first half of the samples (a warm-up baseline in the same run: server start-up and
first-batch effects show up as the ratio).
"""

from __future__ import annotations

import argparse
import os
import time

from inspect_ai import eval

from clinical_cf.tasks.css_task import build_css_task


def run(model: str, family: str, limit: int, connections: int, tp: int) -> tuple[float, int, dict[str, int]]:
    started = time.perf_counter()
    log = eval(
        build_css_task(families=family),
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

    half = max(1, args.limit // 2)
    warm_s, warm_n, warm_tokens = run(model, args.family, half, args.max_connections, args.tensor_parallel_size)
    full_s, full_n, full_tokens = run(model, args.family, args.limit, args.max_connections, args.tensor_parallel_size)
    print(f"{'run':<16}{'samples':>8}{'seconds':>9}{'samples/s':>11}{'tokens/s':>10}")
    for label, seconds, n, tokens in (("first half", warm_s, warm_n, warm_tokens), ("full", full_s, full_n, full_tokens)):
        print(f"{label:<16}{n:>8}{seconds:>9.1f}{n / seconds:>11.2f}{sum(tokens.values()) / seconds:>10.0f}")
    print(f"ratio full/first-half samples/s: {(full_n / full_s) / (warm_n / warm_s):.2f}")


if __name__ == "__main__":
    main()
