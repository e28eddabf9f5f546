"""Speed of the embedded gguf model on CSS-sized work (a benchmark, not a test).

Three measurements, each timed directly (no subtraction of two noisy timings):

1. Prompt processing: a real CSS stage-1 prompt (a bundled packet) is tokenised with the chat
   template and evaluated into an empty KV cache; tokens / seconds of that `eval` alone.
2. Generation: with that prompt already in the cache, N tokens are sampled and evaluated one by one
   (greedy); tokens / seconds of that loop alone, so the context length is the CSS one. Measured
   for one context using every core, and for one context per core decoding at the same time in
   threads (what `gguf/...` does with `-M parallel`), as combined tokens/s.
3. CSS tuples per minute end to end: `css_family_d` on the bundled cases through Inspect with
   `-M parallel=1` (one context, as before) and the default (one context per core), same limit,
   same reply cap, in this run. The ratio is the speed-up.

    python bench/local_model.py [--case css-nsclc-012] [--gen-tokens 128] [--tuples 4] [--max-tokens 700] [--skip-tuples]
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time

from inspect_ai import eval

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.providers.gguf import default_weights
from clinical_cf.solvers.css import SUMMARY_PROMPT, SYSTEM_PROMPT
from clinical_cf.tasks.css_family_d.css_family_d import css_family_d


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chat_tokens(llm, prompt: str) -> list[int]:
    """The prompt as the model sees it: the GGUF's chat template applied, then tokenised."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # optional dependency: the `local` extra

    template = llm.metadata.get("tokenizer.chat_template")
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
    if template:
        eos = llm.detokenize([llm.token_eos()]).decode(errors="ignore")
        bos = llm.detokenize([llm.token_bos()]).decode(errors="ignore")
        text = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)(messages=messages).prompt
    else:
        text = f"{SYSTEM_PROMPT}\n\n{prompt}\n"
    return llm.tokenize(text.encode(), add_bos=False, special=True)


def prompt_rate(llm, tokens: list[int]) -> float:
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    return len(tokens) / (time.perf_counter() - started)


def generation(llm, tokens: list[int], n: int) -> tuple[int, float]:
    """(tokens generated, seconds) for n greedy tokens after `tokens` are in the cache (EOS ignored)."""
    llm.reset()
    llm.eval(tokens)
    started = time.perf_counter()
    for _ in range(n):
        token = llm.sample(temp=0.0)
        llm.eval([token])
    return n, time.perf_counter() - started


def parallel_generation(llms, tokens: list[int], n: int) -> float:
    """Combined tokens/s of len(llms) contexts generating n tokens each at the same time."""
    for llm in llms:
        llm.reset()
        llm.eval(tokens)
    barrier = threading.Barrier(len(llms) + 1)

    def run(llm) -> None:
        barrier.wait()
        for _ in range(n):
            llm.eval([llm.sample(temp=0.0)])

    threads = [threading.Thread(target=run, args=(llm,)) for llm in llms]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    return len(llms) * n / (time.perf_counter() - started)


def tuples_per_minute(parallel: int, tuples: int, max_tokens: int) -> tuple[float, int, int]:
    """(tuples/minute, scored tuples, replies cut by the cap) for css_family_d on the bundled model."""

    started = time.perf_counter()
    log = eval(
        css_family_d(controls="none"),
        model="gguf/smollm2",
        model_args={"parallel": parallel},
        model_roles={"judge": "gguf/smollm2"},
        limit=tuples,
        max_tokens=max_tokens,
        temperature=0.0,
        display="none",
        log_dir=os.environ.get("BENCH_LOG_DIR", "bench/out/local_model_logs"),
    )[0]
    minutes = (time.perf_counter() - started) / 60
    samples = log.samples or []
    capped = sum(1 for s in samples for e in s.events if e.event == "model" and e.output.stop_reason == "max_tokens")
    return len(samples) / minutes, len(samples), capped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-path", default=None)
    parser.add_argument("--case", default="css-nsclc-012")
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--tuples", type=int, default=4, help="CSS tuples per end-to-end run")
    parser.add_argument("--max-tokens", type=int, default=700, help="reply cap in the end-to-end runs")
    parser.add_argument("--skip-tuples", action="store_true", help="only the prompt and generation timings")
    parser.add_argument("--max-prompt-tokens", type=int, default=None, help="cut the CSS prompt to this many tokens (quick checks)")
    args = parser.parse_args()

    from llama_cpp import Llama  # optional dependency: the `local` extra

    cpus = os.cpu_count() or 1
    path = args.model_path or str(default_weights())
    print(f"model: {path}; {cpus} CPUs, load average {os.getloadavg()[0]:.2f}")
    before = peak_rss_mb()
    llm = Llama(model_path=path, n_ctx=args.n_ctx, n_threads=cpus, n_threads_batch=cpus, verbose=False)
    loaded = peak_rss_mb()

    case = next(c for c in load_cases(CASES_PATH) if c.case_id == args.case)
    tokens = chat_tokens(llm, SUMMARY_PROMPT.format(packet=case.packet))[: args.max_prompt_tokens]
    pp = prompt_rate(llm, tokens)
    n, seconds = generation(llm, tokens, args.gen_tokens)
    one = n / seconds
    llm.close()
    singles = [Llama(model_path=path, n_ctx=args.n_ctx, n_threads=1, n_threads_batch=1, verbose=False) for _ in range(cpus)]
    single = generation(singles[0], tokens, args.gen_tokens)
    combined = parallel_generation(singles, tokens, args.gen_tokens)
    after = peak_rss_mb()
    for each in singles:
        each.close()

    print(f"CSS stage-1 prompt ({args.case}): {len(tokens)} tokens")
    print(f"{'measurement':<52}{'tokens/s':>10}")
    print(f"{f'prompt processing, 1 context x {cpus} threads':<52}{pp:>10.0f}")
    print(f"{f'generation at {len(tokens)} context, 1 context x {cpus} threads':<52}{one:>10.1f}")
    print(f"{'generation, 1 context x 1 thread':<52}{single[0] / single[1]:>10.1f}")
    print(f"{f'generation, {cpus} contexts x 1 thread at once (sum)':<52}{combined:>10.1f}")
    print(f"ratio {cpus} parallel contexts / 1 context with {cpus} threads: {combined / one:.2f}x")
    print(f"peak RSS: {before:.0f} MB before load, {loaded:.0f} MB with one context, {after:.0f} MB after {cpus} more "
          f"(weights are memory-mapped and shared; each context adds its KV cache)")

    if not args.skip_tuples:
        base = tuples_per_minute(1, args.tuples, args.max_tokens)
        new = tuples_per_minute(cpus, args.tuples, args.max_tokens)
        print(f"css_family_d, {args.tuples} tuples, max_tokens {args.max_tokens}, load average {os.getloadavg()[0]:.2f}:")
        print(f"  -M parallel=1 (one context, before): {base[0]:.2f} tuples/min ({base[1]} tuples, {base[2]} replies hit the cap)")
        print(f"  -M parallel={cpus} (default now):      {new[0]:.2f} tuples/min ({new[1]} tuples, {new[2]} replies hit the cap)")
        print(f"  ratio: {new[0] / base[0]:.2f}x")


if __name__ == "__main__":
    main()
