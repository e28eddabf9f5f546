"""Speed and memory of the embedded gguf model on a CSS-sized prompt (a benchmark, not a test).

Prints prompt-processing and generation tokens/s for a real CSS stage-1 prompt (a bundled
packet, ~2.5k tokens) next to a short prompt measured in the same run, and the process's peak
resident memory before and after loading the model.

    python bench/local_model.py [--model-path PATH] [--case css-nsclc-012] [--gen-tokens 128]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from clinical_cf.catalog.css import CASES_PATH
from clinical_cf.catalog.css.schema import load_cases
from clinical_cf.providers.gguf import default_weights
from clinical_cf.solvers.css import SUMMARY_PROMPT, SYSTEM_PROMPT


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(llm, prompt: str, gen_tokens: int) -> tuple[int, float, float]:
    """(prompt tokens, prompt tokens/s, generated tokens/s) for one chat prompt, KV cache cleared first."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
    llm.reset()
    started = time.perf_counter()
    first = llm.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0)
    prompt_s = time.perf_counter() - started
    prompt_tokens = first["usage"]["prompt_tokens"]
    llm.reset()
    started = time.perf_counter()
    full = llm.create_chat_completion(messages=messages, max_tokens=gen_tokens, temperature=0.0)
    total_s = time.perf_counter() - started
    generated = full["usage"]["completion_tokens"]
    gen_rate = (generated - 1) / max(total_s - prompt_s, 1e-6) if generated > 1 else float("nan")
    return prompt_tokens, prompt_tokens / prompt_s, gen_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-path", default=None)
    parser.add_argument("--case", default="css-nsclc-012")
    parser.add_argument("--gen-tokens", type=int, default=128)
    args = parser.parse_args()

    from llama_cpp import Llama

    before = peak_rss_mb()
    path = args.model_path or str(default_weights())
    threads = os.cpu_count() or 1
    llm = Llama(model_path=path, n_ctx=8192, n_threads=threads, n_threads_batch=threads, verbose=False)
    loaded = peak_rss_mb()

    case = next(c for c in load_cases(CASES_PATH) if c.case_id == args.case)
    css_prompt = SUMMARY_PROMPT.format(packet=case.packet)
    short_prompt = "Summarise in one sentence: a 64-year-old man with resected pancreatic cancer."
    short = measure(llm, short_prompt, args.gen_tokens)
    css = measure(llm, css_prompt, args.gen_tokens)
    after = peak_rss_mb()

    print(f"model: {path}")
    print(f"{'prompt':<22}{'tokens':>8}{'prompt tok/s':>14}{'gen tok/s':>11}")
    print(f"{'short (baseline)':<22}{short[0]:>8}{short[1]:>14.0f}{short[2]:>11.1f}")
    print(f"{'CSS stage 1 (' + args.case + ')':<22}{css[0]:>8}{css[1]:>14.0f}{css[2]:>11.1f}")
    print(f"ratio CSS/short: prompt tok/s {css[1] / short[1]:.2f}, gen tok/s {css[2] / short[2]:.2f}")
    print(f"peak RSS: {before:.0f} MB before load, {loaded:.0f} MB after load, {after:.0f} MB after the CSS prompt "
          f"(model adds {loaded - before:.0f} MB, the CSS prompt {after - loaded:.0f} MB)")


if __name__ == "__main__":
    main()
