"""Wall time and peak memory of `clinical-cf report` at lab scale (a benchmark, not a test).

For each size (tuples per log x logs) it writes genuine Inspect logs by cloning the samples of one
mock-model CSS log (each clone gets a fresh sample id and uuid, so nothing is deduplicated away),
then runs the report alone in a fresh child process and measures that child: wall time and its own
peak RSS (`os.wait4`), never the log generation. The seed log lives outside the measured folders.
The report's own "tuples: N" line is checked against the logs written, so a report that covered
fewer tuples than it was given fails the benchmark instead of looking fast. The side-by-side page
is then opened in headless Chromium and its DOMContentLoaded and first-rows times are read from the
page (Navigation Timing), so the numbers come from the browser, not from this script's clock.

Ratios are against the first size in the same run, so they hold on a loaded machine; the load
average before and after each measurement is printed next to it.

Each size is measured twice: "cold" with an empty per-log row cache (every log's sample summaries
parsed, the side-by-side edits read from full samples) and "warm", a second report over the same
logs that reads its rows and page records from the cache keyed by each log's SHA-256
(`clinical_cf.analysis.logs.cache_dir`).

    python bench/report.py [--sizes 500x6,5000x6,50000x1] [--rewards] [--no-browser] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD_FLAG = "--child-report"


def _mock(content: str):
    from inspect_ai.model import ModelOutput, ModelUsage

    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/m", content)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return respond


def seed_log(folder: Path, limit: int = 50) -> str:
    """One real mock-model CSS log (families A-E and controls) whose samples the synthetic logs clone."""
    from inspect_ai import eval
    from inspect_ai.model import get_model

    from clinical_cf.tasks.css_task import build_css_task

    log = eval(
        build_css_task(families="ABCDE"),
        model=get_model("mockllm/m", custom_outputs=_mock(json.dumps({"recommendations": [{"treatment": "FOLFOX", "rationale": "r"}]}))),
        model_roles={"judge": get_model("mockllm/j", custom_outputs=_mock(json.dumps({"score": 1, "rationale": "r"})))},
        limit=limit,
        display="none",
        log_dir=str(folder),
    )[0]
    return log.location


def synthetic_logs(template_path: str, folder: Path, tuples: int, models: int, seed: int = 0) -> None:
    """`models` logs of `tuples` samples each; every clone has its own id, uuid, case and verdict.

    Clones are shallow copies (events and messages shared with the template), so writing a 50,000
    sample log does not hold 50,000 parsed samples in memory.
    """
    from inspect_ai.log import read_eval_log, write_eval_log

    template = read_eval_log(template_path)
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    originals = template.samples or []
    for m in range(models):
        samples = []
        for i in range(tuples):
            original = originals[i % len(originals)]
            judge = original.scores["judge_direction"].model_copy(update={"value": rng.choice((0.0, 0.5, 1.0))})
            samples.append(original.model_copy(update={
                "id": f"{original.id}#{i}",
                "uuid": uuid.uuid4().hex,
                # 7 tuples per synthetic case, as a real case carries several interventions.
                "metadata": {**original.metadata, "case_id": f"{original.metadata['case_id']}-{i // 7}"},
                "scores": {**original.scores, "judge_direction": judge},
            }))
        dataset = template.eval.dataset.model_copy(update={"samples": tuples, "sample_ids": [s.id for s in samples]})
        spec = template.eval.model_copy(update={"model": f"mockllm/model-{m}", "dataset": dataset,
                                                "eval_id": uuid.uuid4().hex, "run_id": uuid.uuid4().hex})
        log = template.model_copy(update={"eval": spec, "samples": samples})
        write_eval_log(log, str(folder / f"model-{m}.eval"))


def _child(logs: str, out: str, rewards: bool) -> None:
    """The measured process: the report (and optionally the rewards export) and nothing else.

    The row cache it uses is the one `CLINICAL_CF_CACHE_DIR` names (set by `measure`)."""
    from clinical_cf.analysis.report import export_rewards, write_report

    started = time.perf_counter()
    write_report([logs], out)
    report_s = time.perf_counter() - started
    rewards_s = None
    if rewards:
        started = time.perf_counter()
        export_rewards([logs], Path(out) / "rewards.jsonl")
        rewards_s = time.perf_counter() - started
    print(json.dumps({"report_s": report_s, "rewards_s": rewards_s}))


@dataclass
class Measurement:
    label: str
    tuples: int
    wall_s: float
    report_s: float
    rewards_s: float | None
    peak_mb: float
    load_before: float
    load_after: float
    page_mb: float | None = None
    dom_ms: float | None = None
    rows_ms: float | None = None


def measure(logs: Path, out: Path, label: str, expected: int, rewards: bool, cache: Path) -> Measurement:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, CHILD_FLAG, str(logs), str(out), str(int(rewards))],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "CLINICAL_CF_CACHE_DIR": str(cache)})
    stdout = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the report failed on {logs} (exit {os.waitstatus_to_exitcode(status)})")
    timings = json.loads(stdout.strip().splitlines()[-1])
    covered = sum(int(n) for n in re.findall(r"tuples: (\d+)", (out / "report.md").read_text()))
    if covered != expected:
        raise SystemExit(f"{label}: the report covered {covered} tuples, the logs hold {expected}")
    page = out / "side_by_side.html"
    return Measurement(label, expected, wall, timings["report_s"], timings["rewards_s"], usage.ru_maxrss / 1024,
                       load_before, os.getloadavg()[0], page_mb=page.stat().st_size / 2**20 if page.exists() else None)


def page_load(page: Path, runs: int = 3) -> tuple[float, float]:
    """Median DOMContentLoaded and first-visible-row times (ms from navigation start) in headless Chromium."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("headless Chromium is needed for the page timing (make browser), or pass --no-browser")
    dom, rows = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        for _ in range(runs):
            tab = browser.new_page()
            tab.goto(page.as_uri(), wait_until="domcontentloaded", timeout=120_000)
            tab.wait_for_selector("tbody tr", timeout=120_000)
            timing = tab.evaluate("""() => {
                const nav = performance.getEntriesByType('navigation')[0];
                return {dom: nav.domContentLoadedEventEnd, now: performance.now()};
            }""")
            dom.append(timing["dom"])
            rows.append(timing["now"])
            tab.close()
        browser.close()
    return sorted(dom)[len(dom) // 2], sorted(rows)[len(rows) // 2]


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout
        return head + (" (uncommitted changes)" if dirty.strip() else "")
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="500x6,5000x6,50000x1", help="TUPLESxLOGS, comma-separated; the first is the baseline")
    parser.add_argument("--rewards", action="store_true", help="also time the rewards export (same child process)")
    parser.add_argument("--no-browser", action="store_true", help="skip the side-by-side page timing in Chromium")
    parser.add_argument("--keep", help="write logs and reports here and keep them; logs already there are reused")
    args = parser.parse_args()
    sizes = [tuple(int(n) for n in s.lower().split("x")) for s in args.sizes.split(",")]

    import inspect_ai

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"commit {_git()}, inspect_ai {inspect_ai.__version__}, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; files under {root}")
    seeds = sorted((root / "seed").glob("*.eval")) if args.keep else []
    template = str(seeds[0]) if seeds else seed_log(root / "seed")
    results: list[Measurement] = []
    try:
        for tuples, models in sizes:
            label = f"{tuples} x {models}"
            logs = root / f"logs-{tuples}x{models}"
            if args.keep and len(list(logs.glob("model-*.eval"))) == models:
                print(f"{label}: reusing the logs in {logs}", file=sys.stderr)
            else:
                started = time.perf_counter()
                synthetic_logs(template, logs, tuples, models)
                print(f"{label}: wrote {models} logs in {time.perf_counter() - started:.0f} s (not measured)", file=sys.stderr)
            cache = root / f"cache-{tuples}x{models}"
            shutil.rmtree(cache, ignore_errors=True)  # cold: nothing cached for these logs
            for state in ("cold", "warm"):
                result = measure(logs, root / f"out-{tuples}x{models}-{state}", f"{label} {state}", tuples * models,
                                 args.rewards, cache)
                result.tuples = tuples * models
                page = root / f"out-{tuples}x{models}-{state}" / "side_by_side.html"
                if state == "cold" and not args.no_browser and page.exists():
                    result.dom_ms, result.rows_ms = page_load(page)
                results.append(result)
            if not args.keep:
                shutil.rmtree(logs)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    base = results[0]
    print(f"{'tuples x logs':<22}{'tuples':>8}{'wall s':>8}{'report s':>9}{'rewards s':>10}{'peak MB':>9}"
          f"{'s/ktuple':>9}{'x time':>8}{'x s/kt':>8}{'page MB':>8}{'DOM ms':>8}{'rows ms':>8}{'load':>11}")
    for r in results:
        per_k = r.report_s / r.tuples * 1000
        base_k = base.report_s / base.tuples * 1000
        print(f"{r.label:<22}{r.tuples:>8}{r.wall_s:>8.1f}{r.report_s:>9.1f}"
              f"{'' if r.rewards_s is None else f'{r.rewards_s:.1f}':>10}{r.peak_mb:>9.0f}{per_k:>9.2f}"
              f"{r.report_s / base.report_s:>8.1f}{per_k / base_k:>8.2f}"
              f"{'' if r.page_mb is None else f'{r.page_mb:.1f}':>8}{'' if r.dom_ms is None else f'{r.dom_ms:.0f}':>8}"
              f"{'' if r.rows_ms is None else f'{r.rows_ms:.0f}':>8}{f'{r.load_before:.1f}->{r.load_after:.1f}':>11}")
    print("cold = empty row cache, warm = the same report again (rows from the cache); "
          "wall s = child process start to exit (imports included); report s = write_report alone; peak MB = the "
          "child's own max RSS; x time / x s/kt = against the first row; DOM/rows ms = median of 3 loads in headless "
          "Chromium (DOMContentLoaded, first table row visible); load = 1-min load average before->after.")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == CHILD_FLAG:
        _child(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
    else:
        main()
