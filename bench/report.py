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
import zipfile
from dataclasses import dataclass
from pathlib import Path

import inspect_ai
from inspect_ai import eval
from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from clinical_cf.cli import main as cli
from clinical_cf.tasks.css_task import build_css_task

ROOT = Path(__file__).resolve().parents[1]
CHILD_FLAG = "--child-report"
FLOOR_FLAG = "--child-floor"


def _mock(content: str):
    def respond(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/m", content)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return respond


def seed_log(folder: Path, limit: int = 50) -> str:
    """One real mock-model CSS log (families A-E and controls) whose samples the synthetic logs clone."""

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

    The logs are written directly as Inspect's `.eval` zip (header, samples, summaries; deflate), from the
    template's own JSON with only the cloned fields changed: `write_eval_log` validates and serialises every
    sample (about 27 minutes for 50,000 on this machine), this takes a few. `read_eval_log` reads them back
    like any log (checked on the first clone of each log).
    """

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(template_path) as template:
        header = json.loads(template.read("header.json"))
        start = template.read("_journal/start.json")
        summaries = json.loads(template.read("summaries.json"))
        originals = [json.loads(template.read(f"samples/{s['id']}_epoch_{s['epoch']}.json")) for s in summaries]
    for m in range(models):
        path = folder / f"model-{m}.eval"
        partial = path.with_name(f".{path.name}.tmp")
        ids, written = [], []
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as out:
            out.writestr("_journal/start.json", start)
            for i in range(tuples):
                k = i % len(originals)
                sample, summary = dict(originals[k]), dict(summaries[k])
                verdict = rng.choice((0.0, 0.5, 1.0))
                # 7 tuples per synthetic case, as a real case carries several interventions.
                clone = {"id": f"{sample['id']}#{i}", "uuid": uuid.uuid4().hex,
                         "metadata": {**sample["metadata"], "case_id": f"{sample['metadata']['case_id']}-{i // 7}"}}
                for record in (sample, summary):
                    record.update(clone)
                    record["scores"] = {**record["scores"], "judge_direction": {**record["scores"]["judge_direction"], "value": verdict}}
                # A summary keeps Inspect's thinned metadata (strings cut at 1k), with the clone's case.
                summary["metadata"] = {**summaries[k]["metadata"], "case_id": clone["metadata"]["case_id"]}
                out.writestr(f"samples/{clone['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
                ids.append(clone["id"])
                written.append(summary)
            out.writestr("summaries.json", json.dumps(written))
            spec = {**header["eval"], "model": f"mockllm/model-{m}", "eval_id": uuid.uuid4().hex, "run_id": uuid.uuid4().hex,
                    "dataset": {**header["eval"]["dataset"], "samples": tuples, "sample_ids": ids}}
            out.writestr("header.json", json.dumps({**header, "eval": spec}))
        os.replace(partial, path)
        assert len(read_eval_log_sample_summaries(str(path))) == tuples
        assert read_eval_log(str(path), header_only=True).eval.model == f"mockllm/model-{m}"


def _floor(logs: str) -> None:
    """The measured floor: Inspect's own `read_eval_log_sample_summaries` over every log, one after another."""

    started = time.perf_counter()
    n = sum(len(read_eval_log_sample_summaries(info.name)) for info in list_eval_logs(logs))
    print(json.dumps({"report_s": time.perf_counter() - started, "rewards_s": None, "samples": n}))


def _child(logs: str, out: str, rewards: bool) -> None:
    """The measured process: `clinical-cf report LOGS --out OUT` as a user runs it (and optionally the rewards export).

    The caches it uses are the ones `CLINICAL_CF_CACHE_DIR` names (set by `measure`)."""

    started = time.perf_counter()
    argv = ["report", logs, "--out", out] + (["--rewards", str(Path(out) / "rewards.jsonl")] if rewards else [])
    if cli(argv) != 0:
        raise SystemExit(f"clinical-cf report {logs} failed")
    print(json.dumps({"report_s": time.perf_counter() - started, "rewards_s": None}))


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


def measure(logs: Path, out: Path, label: str, expected: int, rewards: bool, cache: Path, floor: bool = False) -> Measurement:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    argv = [FLOOR_FLAG, str(logs)] if floor else [CHILD_FLAG, str(logs), str(out), str(int(rewards))]
    child = subprocess.Popen([sys.executable, __file__, *argv],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "CLINICAL_CF_CACHE_DIR": str(cache)})
    stdout = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the report failed on {logs} (exit {os.waitstatus_to_exitcode(status)})")
    timings = json.loads(stdout.strip().splitlines()[-1])
    if floor:
        if timings["samples"] != expected:
            raise SystemExit(f"{label}: Inspect read {timings['samples']} summaries, the logs hold {expected}")
        return Measurement(label, expected, wall, timings["report_s"], None, usage.ru_maxrss / 1024, load_before, os.getloadavg()[0])
    covered = sum(int(n) for n in re.findall(r"tuples: (\d+)", (out / "report.md").read_text()))
    if covered != expected:
        raise SystemExit(f"{label}: the report covered {covered} tuples, the logs hold {expected}")
    pages = list(out.glob("side_by_side*.html"))
    return Measurement(label, expected, wall, timings["report_s"], timings["rewards_s"], usage.ru_maxrss / 1024,
                       load_before, os.getloadavg()[0], page_mb=max(p.stat().st_size for p in pages) / 2**20 if pages else None)


def page_load(page: Path, runs: int = 3) -> tuple[float, float]:
    """Median DOMContentLoaded and first-visible-row times (ms from navigation start) in headless Chromium."""
    from playwright.sync_api import sync_playwright  # optional dependency: a dev extra, and Chromium

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


TARGETS = "targets: cold <= 1.1 x floor; warm < 3 s; 50,000 x 1 peak < 1,536 MB; side_by_side files < 25 MB each"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000x6,50000x1", help="TUPLESxLOGS, comma-separated")
    parser.add_argument("--size", help="one size only (e.g. 500x2 while developing); overrides --sizes")
    parser.add_argument("--rewards", action="store_true", help="also time the rewards export (same child process)")
    parser.add_argument("--browser", action="store_true", help="also time the side-by-side page in headless Chromium")
    parser.add_argument("--no-browser", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    parser.add_argument("--keep", help="write logs and reports here and keep them; logs already there are reused")
    args = parser.parse_args()
    sizes = [tuple(int(n) for n in s.lower().split("x")) for s in (args.size or args.sizes).split(",")]

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"commit {_git()}, inspect_ai {inspect_ai.__version__}, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; files under {root}")
    seeds = sorted((root / "seed").glob("*.eval")) if args.keep else []
    template = str(seeds[0]) if seeds else seed_log(root / "seed")
    rows: list[tuple[str, Measurement, Measurement, Measurement]] = []
    try:
        for tuples, models in sizes:
            label = f"{tuples:,} x {models}"
            logs = root / f"logs-{tuples}x{models}"
            if args.keep and len(list(logs.glob("model-*.eval"))) == models:
                print(f"{label}: reusing the logs in {logs}", file=sys.stderr)
            else:
                started = time.perf_counter()
                synthetic_logs(template, logs, tuples, models)
                print(f"{label}: wrote {models} logs directly in {time.perf_counter() - started:.0f} s (not measured)", file=sys.stderr)
            cache = root / f"cache-{tuples}x{models}"
            shutil.rmtree(cache, ignore_errors=True)  # cold: nothing cached for these logs
            floor = measure(logs, root / "unused", f"{label} floor", tuples * models, False, cache, floor=True)
            cold = measure(logs, root / f"out-{tuples}x{models}-cold", f"{label} cold", tuples * models, args.rewards, cache)
            warm = measure(logs, root / f"out-{tuples}x{models}-warm", f"{label} warm", tuples * models, args.rewards, cache)
            page = root / f"out-{tuples}x{models}-cold" / "side_by_side.html"
            if args.browser and page.exists():
                cold.dom_ms, cold.rows_ms = page_load(page)
            rows.append((label, floor, cold, warm))
            print(f"{label}: floor {floor.wall_s:.1f} s, cold {cold.wall_s:.1f} s, warm {warm.wall_s:.1f} s", file=sys.stderr)
            if not args.keep:
                shutil.rmtree(logs)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    print(f"{'tuples x logs':<16}{'cold s':>8}{'warm s':>8}{'floor s':>9}{'cold/floor':>11}{'peak MB':>9}{'floor MB':>9}"
          f"{'peak/floor':>11}{'page MB':>9}{'DOM ms':>8}{'load (1-min)':>22}")
    for label, floor, cold, warm in rows:
        load = f"{floor.load_before:.1f} {cold.load_before:.1f} {warm.load_before:.1f}->{warm.load_after:.1f}"
        peak = max(cold.peak_mb, warm.peak_mb)
        print(f"{label:<16}{cold.wall_s:>8.1f}{warm.wall_s:>8.1f}{floor.wall_s:>9.1f}{cold.wall_s / floor.wall_s:>11.2f}"
              f"{peak:>9.0f}{floor.peak_mb:>9.0f}{peak / floor.peak_mb:>11.2f}"
              f"{'' if cold.page_mb is None else f'{cold.page_mb:.1f}':>9}{'' if cold.dom_ms is None else f'{cold.dom_ms:.0f}':>8}"
              f"{load:>22}")
    print("cold = empty row cache, warm = the same report again; floor = Inspect's read_eval_log_sample_summaries over the same "
          "logs, one after another; every time is the wall time of a fresh child process (imports included); peak MB = that "
          "child's max RSS (report: the larger of cold and warm); page MB = the largest side_by_side file; load = 1-min load "
          "average before the floor, cold and warm runs (and after warm).")
    print(TARGETS)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == FLOOR_FLAG:
        _floor(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == CHILD_FLAG:
        _child(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
    else:
        main()
