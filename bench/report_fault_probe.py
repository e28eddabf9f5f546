"""Blind fault probe of `clinical-cf report` from outside (issue 48 with issue 46's report-writing defects).

A measurement, not a pass/fail test: every probe runs the installed `clinical-cf report` in a fresh
process in its own session (real signals, no test hooks, no CLINICAL_CF_TEST_PHASES) and classifies
what a user would see:

- ok           the report did what README/docs/report.md say (a complete report, or the documented exit)
- clean        one clear line and a documented non-zero exit, `--out` as it was
- unclear      a clean exit whose line names the wrong file (a hidden staging path, a cache entry, --out
               for a file it could not write)
- silent       exit 0 or a plausible result that is wrong (a partial/stale report, a lost signal)
- traceback    a Python traceback on the terminal
- hang         still running long after the event
- leftover     a process of the report's session alive after it ended, or a hidden temp entry in `--out`

Classes: (1) SIGINT / SIGTERM / SIGHUP at a seeded schedule of delays spread over a measured cold run;
(2) two reports into one `--out` at once; (3) `--out` read-only (as an unprivileged user), under
RLIMIT_FSIZE, symlinked, missing, inside the log folder, removed mid-run; (4) logs truncated, replaced or
deleted while read (then: does a cached rerun agree with a --no-cache report of what is there now?);
(5) logs and outputs `touch -d`-ed into the future and past around a content change (a changed log must
never give a stale report), and a log named RUN.EVAL.

    python bench/report_fault_probe.py [--work DIR] [--signals 36] [--tuples 60] [--models 3] [--seed 48]
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib.util
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [str(Path(sys.executable).with_name("clinical-cf")), "report"]
HANG_S = 180.0


def _bench():
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_report"] = module
    spec.loader.exec_module(module)
    return module


def build_logs(work: Path, tuples: int, models: int) -> tuple[Path, Path]:
    """logs/ (seed 0) and alt/ (same names, seed 1: other verdicts) of synthetic CSS logs."""

    logs, alt = work / "logs", work / "alt"
    if (logs / f"model-{models - 1}.eval").exists() and (alt / f"model-{models - 1}.eval").exists():
        return logs, alt
    bench = _bench()
    seed = bench.seed_log(work / "seed", limit=20)
    bench.synthetic_logs(seed, logs, tuples, models, seed=0)
    bench.synthetic_logs(seed, alt, tuples, models, seed=1)
    return logs, alt


def session_pids(sid: int) -> list[int]:
    """Live (non-zombie) processes of session `sid`."""

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry.name))
    return found


class Run:
    def __init__(self, args: list[str], env: dict | None = None, preexec=None, readonly: Path | None = None):
        cmd = CLI + args
        if readonly:  # root writes through permissions: make the folder a read-only bind mount in a private namespace
            ro = shlex.quote(str(readonly))
            cmd = ["unshare", "-m", "sh", "-c", f'mount --bind {ro} {ro} && mount -o remount,bind,ro {ro} {ro} && exec "$@"', "sh"] + cmd
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=True,
            preexec_fn=preexec,
        )
        self.sid = self.proc.pid
        self.transcript = Path(args[args.index("--out") + 1]).parent / f"terminal-{self.sid}.txt" if "--out" in args else None

    def wait(self, timeout: float = HANG_S) -> tuple[int | None, str, float]:
        try:
            out, _ = self.proc.communicate(timeout=timeout)
            rc = self.proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(self.sid, signal.SIGKILL)
            out, _ = self.proc.communicate()
            rc = None
        if self.transcript and self.transcript.parent.is_dir():
            self.transcript.write_text(f"rc {rc}\n{out}")
        time.sleep(0.3)
        self.left = session_pids(self.sid)
        for pid in self.left:  # only processes of the session this probe started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return rc, out, time.monotonic() - self.t0


def digest(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) if folder.is_dir() else []


def last_line(out: str) -> str:
    lines = [x for x in out.splitlines() if x.strip()]
    return lines[-1][:200] if lines else ""


class Probe:
    def __init__(self, work: Path, logs: Path, alt: Path):
        self.work, self.logs, self.alt = work, logs, alt
        self.results: list[tuple[str, str, str, str]] = []  # (class, case, outcome, detail)
        self.n = 0
        self.fracs = (0.15, 0.4, 0.7)
        self.stamps = ("2099-01-01", "1990-01-01", "+1 hour", "-1 hour", "@0")
        self.targets = ("log", "out", "cache", "all")
        self.limits = (2_000, 20_000, 120_000, 400_000, 1_500_000)

    def fresh(self, name: str) -> Path:
        self.n += 1
        path = self.work / f"{self.n:03d}-{name}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def record(self, cls: str, case: str, outcome: str, detail: str) -> None:
        self.results.append((cls, case, outcome, detail))
        print(f"{cls:10s} {case:42s} {outcome:9s} {detail}", flush=True)

    def reference(self) -> dict[str, str]:
        d = self.fresh("reference")
        rc, out, wall = Run([str(self.logs), "--out", str(d / "out"), "--no-cache"]).wait()
        assert rc == 0, out
        self.ref, self.ref_wall = digest(d / "out"), wall
        d2 = self.fresh("reference-alt")
        rc, out, _ = Run([str(self.alt), "--out", str(d2 / "out"), "--no-cache"]).wait()
        assert rc == 0, out
        self.ref_alt = digest(d2 / "out")
        return self.ref

    def out_state(self, out: Path, before: dict[str, str]) -> str:
        """'' when --out is as before or holds a complete report identical to the reference; else why not."""

        now = digest(out)
        if now == before or now == {**before, **self.ref}:
            return ""
        names = set(now) - set(before)
        if names and names != set(self.ref):
            return f"partial: {len(names)}/{len(self.ref)} files"
        changed = [k for k in self.ref if k in now and now[k] != self.ref[k] and now.get(k) != before.get(k)]
        return (
            f"differs from the reference: {changed[:3]}"
            if changed
            else f"unexpected files: {sorted(set(now) - set(self.ref) - set(before))[:3]}"
        )

    def classify(
        self, rc, out, run: Run, outdir: Path, before: dict[str, str], want_rc: set[int], ok_rc: set[int] = frozenset({0})
    ) -> tuple[str, str]:
        lines = [x for x in out.splitlines() if x.strip()]
        if rc is None:
            return "hang", f"killed after {HANG_S:.0f} s; last: {last_line(out)}"
        if "Traceback (most recent call last)" in out:
            return "traceback", last_line(out)
        if run.left:
            return "leftover", f"rc {rc}, {len(run.left)} live process(es) of the report's session"
        if hidden(outdir):
            return "leftover", f"rc {rc}, hidden entries in --out: {hidden(outdir)[:3]}"
        state = self.out_state(outdir, before)
        if rc in ok_rc:
            return ("ok", f"rc {rc}") if not state else ("silent", f"rc {rc}, {state}")
        if rc in want_rc:
            if state:
                return "silent", f"rc {rc}, {state}"
            if rc < 0:
                return "clean", f"rc {rc}: killed by the signal's default action, no message of its own"
            msg = last_line(out)
            if "/." in msg or ".report-" in msg or (msg.startswith(f"error: {outdir}:") and "too large" in msg):
                # docs/report.md: an error names the file it was writing by its final name (never a hidden
                # staging path or a cache entry; a folder only when --out itself was removed)
                return "unclear", f"rc {rc}, names the wrong file: {msg}"
            return "clean", f"rc {rc}: {msg}"
        return "silent", f"rc {rc} (wanted {sorted(want_rc)}): {last_line(out)} ({len(lines)} lines)"

    # (1) signals ------------------------------------------------------------------------------------
    def signals(self, count: int, seed: int) -> None:
        rng = random.Random(seed)
        span = self.cold_wall * 1.05
        sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
        want = {signal.SIGINT: {130, -2}, signal.SIGTERM: {143, -15}, signal.SIGHUP: {129, -1}}
        words = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hang"}
        plan = [(sigs[i % 3], rng.uniform(0.02, span)) for i in range(count)]
        for sig, delay in plan:
            d = self.fresh(f"sig-{sig.name}")
            out = d / "out"
            out.mkdir()
            (out / "mine.txt").write_text("a user's own file\n")
            before = digest(out)
            run = Run([str(self.logs), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
            time.sleep(delay)
            finished_first = run.proc.poll() is not None
            if not finished_first:
                os.kill(run.proc.pid, sig)
            rc, text, wall = run.wait()
            case = f"{sig.name} at {delay:5.1f} s"
            if finished_first:
                outcome, detail = self.classify(rc, text, run, out, before, set())
                self.record("signal", case, outcome, "finished before the signal; " + detail)
                continue
            outcome, detail = self.classify(rc, text, run, out, before, want[sig], ok_rc=set())
            if outcome == "silent" and rc == 0:
                detail = "signal lost: " + detail
            if outcome == "clean" and rc > 0:
                tail = [x for x in text.splitlines() if x.strip() and not x.startswith("read log")]
                msg = [x for x in tail if words[sig] in x.lower() or "signal" in x.lower() or "hangup" in x.lower()]
                if sig != signal.SIGHUP and len(msg) != 1:
                    outcome, detail = "silent", f"rc {rc} but {len(msg)} interruption lines: {last_line(text)}"
            self.record("signal", case, outcome, f"{detail} ({wall:.1f} s)")

    # (2) two reports into one --out ---------------------------------------------------------------
    def concurrent(self) -> None:
        for stagger in (0.0, 0.5 * self.cold_wall, 0.9 * self.cold_wall):
            for same_logs in (True, False):
                d = self.fresh("concurrent")
                out = d / "out"
                out.mkdir()
                a = Run([str(self.logs), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(d / "c1")})
                time.sleep(stagger)
                b = Run([str(self.logs if same_logs else self.alt), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(d / "c2")})
                (ra, ta, _), (rb, tb, _) = a.wait(), b.wait()
                case = f"stagger {stagger:4.1f} s, {'same' if same_logs else 'other'} logs"
                now = digest(out)
                bad = [x for x in (ta, tb) if "Traceback (most recent call last)" in x]
                if ra is None or rb is None:
                    self.record("concurrent", case, "hang", f"rc {ra}/{rb}")
                elif bad:
                    self.record("concurrent", case, "traceback", last_line(bad[0]))
                elif a.left or b.left or hidden(out):
                    self.record("concurrent", case, "leftover", f"procs {a.left + b.left}, hidden {hidden(out)[:3]}")
                elif now == self.ref or now == self.ref_alt:
                    which = "A" if now == self.ref else "B"
                    outcome = "ok" if (ra, rb) == (0, 0) else "clean"
                    self.record("concurrent", case, outcome, f"rc {ra}/{rb}, --out is report {which} whole; {last_line(ta if ra else tb)}")
                else:
                    mixed = sum(1 for k in now if now[k] == self.ref.get(k)), sum(1 for k in now if now[k] == self.ref_alt.get(k))
                    self.record(
                        "concurrent",
                        case,
                        "silent",
                        f"rc {ra}/{rb}, --out mixes reports (files like A {mixed[0]}, like B {mixed[1]}, of {len(now)})",
                    )

    # (3) --out faults ------------------------------------------------------------------------------
    def out_faults(self) -> None:
        # read-only folder, as an unprivileged user (root writes anywhere)
        d = self.fresh("readonly")
        out = d / "out"
        out.mkdir()
        (out / "mine.txt").write_text("x\n")
        before = digest(out)
        run = Run([str(self.logs), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")}, readonly=out)
        rc, text, _ = run.wait()
        self.record("out", "read-only --out (ro bind mount)", *self.classify(rc, text, run, out, before, {1, 2}))
        # RLIMIT_FSIZE at several limits, onto an --out holding an older report
        for limit in self.limits:
            for cold in (True, False):
                d = self.fresh(f"fsize-{limit}")
                out = d / "out"
                shutil.copytree(self.work / "001-reference" / "out", out)
                (out / "report.md").write_text("an older report\n")
                before = digest(out)
                env = {"CLINICAL_CF_CACHE_DIR": str(d / "cache")}
                if not cold:  # warm the cache without a limit first, then hit the limit on the copy path
                    Run([str(self.logs), "--out", str(d / "warm")], env=env).wait()

                def lim(n=limit):
                    import resource  # deferred: probe-only

                    resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))

                run = Run([str(self.logs), "--out", str(out)], env=env, preexec=lim)
                rc, text, _ = run.wait()
                outcome, detail = self.classify(rc, text, run, out, before, {1, 2})
                if outcome == "clean" and "input:" in text:
                    outcome, detail = "unclear", "error says input: " + detail
                self.record("out", f"RLIMIT_FSIZE {limit} B ({'cold' if cold else 'warm'})", outcome, detail)
        # symlinked --out, dangling symlink, missing folder, missing parent, a file as --out
        d = self.fresh("symlink")
        (d / "real").mkdir()
        (d / "link").symlink_to(d / "real")
        run = Run([str(self.logs), "--out", str(d / "link")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
        rc, text, _ = run.wait()
        self.record("out", "symlinked --out", *self.classify(rc, text, run, d / "real", {}, {2}))
        d = self.fresh("dangling")
        (d / "link").symlink_to(d / "nowhere")
        run = Run([str(self.logs), "--out", str(d / "link")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
        rc, text, _ = run.wait()
        self.record("out", "dangling symlink --out", *self.classify(rc, text, run, d / "nowhere", {}, {2}))
        for name, rel in (("missing --out", "out"), ("missing --out parent", "a/b/out")):
            d = self.fresh("missing")
            run = Run([str(self.logs), "--out", str(d / rel)], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
            rc, text, _ = run.wait()
            outcome, detail = self.classify(rc, text, run, d / rel, {}, {2})

            self.record("out", name, outcome, detail)
        d = self.fresh("file-out")
        (d / "out").write_text("not a folder\n")
        run = Run([str(self.logs), "--out", str(d / "out")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
        rc, text, _ = run.wait()
        outcome, detail = (
            ("clean", f"rc {rc}: {last_line(text)}")
            if rc == 2 and "Traceback" not in text
            else ("traceback" if "Traceback" in text else "silent", f"rc {rc}: {last_line(text)}")
        )
        if (d / "out").read_text() != "not a folder\n":
            outcome, detail = "silent", "the user's file was replaced"
        self.record("out", "--out is a file", outcome, detail)
        # --out inside the log folder, twice (the second report reads a folder holding the first)
        d = self.fresh("inside")
        shutil.copytree(self.logs, d / "logs")
        saved = self.ref
        self.ref = {}  # logs.csv and the pages name the logs by path: the reference is a report of this copy
        Run([str(d / "logs"), "--out", str(d / "ref"), "--no-cache"], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache0")}).wait()
        self.ref = digest(d / "ref")
        for i in (1, 2):
            run = Run([str(d / "logs"), "--out", str(d / "logs" / "report")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
            rc, text, _ = run.wait()
            self.record(
                "out",
                f"--out inside the log folder (run {i})",
                *self.classify(rc, text, run, d / "logs" / "report", {} if i == 1 else self.ref, {2}),
            )
        self.ref = saved
        # --out removed while the report runs
        for frac in (0.2, 0.35, 0.5, 0.6, 0.7):
            d = self.fresh("removed")
            out = d / "out"
            out.mkdir()
            run = Run([str(self.logs), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
            time.sleep(frac * self.cold_wall)
            if run.proc.poll() is not None:
                run.wait()
                self.record("out", f"--out removed at {frac:.0%} of the run", "ok", "finished before the removal")
                continue
            shutil.rmtree(out, ignore_errors=True)
            rc, text, _ = run.wait()
            if rc is None or "Traceback" in text or run.left:
                outcome, detail = self.classify(rc, text, run, out, {}, {1, 2})
            elif rc == 0:
                outcome, detail = (
                    ("ok", "rc 0, report written") if digest(out) == self.ref else ("silent", f"rc 0, --out holds {len(digest(out))} files")
                )
            else:
                outcome, detail = (
                    ("clean", f"rc {rc}: {last_line(text)}")
                    if rc in (1, 2) and "/." not in last_line(text)
                    else ("silent", f"rc {rc}: {last_line(text)}")
                )
            self.record("out", f"--out removed at {frac:.0%} of the run", outcome, detail)

    # (4) logs changed while read -------------------------------------------------------------------
    def cached_agrees(self, logs: Path, cache: Path, d: Path) -> str:
        """'' when a cached report over `logs` equals a --no-cache one; else the files that differ."""

        r1 = Run([str(logs), "--out", str(d / "cached")], env={"CLINICAL_CF_CACHE_DIR": str(cache)})
        c1, t1, _ = r1.wait()
        r2 = Run([str(logs), "--out", str(d / "fresh"), "--no-cache"], env={"CLINICAL_CF_CACHE_DIR": str(cache)})
        c2, t2, _ = r2.wait()
        a, b = digest(d / "cached"), digest(d / "fresh")
        if c1 != c2:
            return f"cached rc {c1} vs fresh rc {c2}: {last_line(t1)} | {last_line(t2)}"
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return f"stale cached report: {diff[:4]}" if diff else ""

    def logs_changed(self, rng: random.Random) -> None:
        for action in ("truncate", "replace", "delete", "garbage"):
            for frac in self.fracs:
                d = self.fresh(f"change-{action}")
                logs = d / "logs"
                shutil.copytree(self.logs, logs)
                victim = logs / f"model-{rng.randrange(len(list(logs.iterdir())))}.eval"
                cache = d / "cache"
                out = d / "out"
                run = Run([str(logs), "--out", str(out)], env={"CLINICAL_CF_CACHE_DIR": str(cache)})
                time.sleep(frac * self.cold_wall)
                data = victim.read_bytes()
                if action == "truncate":
                    with open(victim, "r+b") as f:
                        f.truncate(len(data) // 2)
                elif action == "replace":
                    tmp = victim.with_suffix(".new")
                    shutil.copy(self.alt / victim.name, tmp)
                    os.replace(tmp, victim)
                elif action == "delete":
                    victim.unlink()
                else:
                    with open(victim, "r+b") as f:
                        f.seek(len(data) // 3)
                        f.write(os.urandom(4096))
                rc, text, _ = run.wait()
                outcome, detail = self.classify(rc, text, run, out, {}, {1, 2})
                if outcome == "silent" and rc == 0 and "differs" in detail:
                    outcome, detail = "ok", "rc 0, a report of one consistent state"  # re-judged below
                    got = digest(out)
                    if action == "replace" and got != self.ref:
                        detail = "rc 0, a report of the logs as replaced (the rerun check below decides)"
                if outcome in ("ok", "clean"):
                    stale = self.cached_agrees(logs, cache, d)
                    if stale:
                        outcome, detail = "silent", f"after: {stale}"
                self.record("logchange", f"{action} at {frac:.0%}", outcome, detail)

    # (5) clocks and dates --------------------------------------------------------------------------
    def dates(self) -> None:
        for stamp in self.stamps:
            for target in self.targets:
                d = self.fresh("touch")
                logs, cache, out = d / "logs", d / "cache", d / "out"
                shutil.copytree(self.logs, logs)
                env = {"CLINICAL_CF_CACHE_DIR": str(cache)}
                Run([str(logs), "--out", str(out)], env=env).wait()  # first report: fills both caches
                # a content change that keeps the victim's dates (touch -r): only the bytes say it changed
                victim = logs / "model-1.eval"
                ref = d / "stamp"
                ref.touch()
                os.utime(ref, (victim.stat().st_atime, victim.stat().st_mtime))
                shutil.copy(self.alt / "model-1.eval", victim)
                subprocess.run(["touch", "-r", str(ref), str(victim)], check=True)
                paths = {"log": [logs], "out": [out], "cache": [cache], "all": [logs, out, cache]}[target]
                for p in paths:
                    files = [str(x) for x in p.rglob("*")] + [str(p)]
                    subprocess.run(["touch", "-d", stamp, *files], check=True)
                if target in ("out", "all"):
                    (out / "mine-future.txt").write_text("mine\n")
                    subprocess.run(["touch", "-d", "2099-01-01", str(out / "mine-future.txt")], check=True)
                run = Run([str(logs), "--out", str(out)], env=env)
                rc, text, _ = run.wait()
                case = f"touch -d '{stamp}' on {target}"
                if rc is None or "Traceback" in text or run.left:
                    self.record("dates", case, *self.classify(rc, text, run, out, {}, {2}))
                    continue
                got = {k: v for k, v in digest(out).items() if k != "mine-future.txt"}
                fresh = d / "fresh"
                Run([str(logs), "--out", str(fresh), "--no-cache"], env=env).wait()
                want = digest(fresh)
                if rc != 0:
                    self.record("dates", case, "silent", f"rc {rc}: {last_line(text)}")
                elif got != want:
                    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
                    self.record("dates", case, "silent", f"stale report after a content change: {diff[:4]}")
                else:
                    # the user's future-dated file must not travel into the next report through the cache
                    other = d / "other"
                    Run([str(logs), "--out", str(other)], env=env).wait()
                    if (other / "mine-future.txt").exists():
                        self.record("dates", case, "silent", "a user's future-dated file was copied into another --out")
                    elif hidden(out):
                        self.record("dates", case, "leftover", f"hidden {hidden(out)[:3]}")
                    else:
                        self.record("dates", case, "ok", "rc 0, report equals a --no-cache report")

    def upper_case(self) -> None:
        d = self.fresh("upper")
        logs = d / "logs"
        shutil.copytree(self.logs, logs)
        os.rename(logs / "model-0.eval", logs / "RUN.EVAL")
        run = Run([str(logs), "--out", str(d / "out")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
        rc, text, _ = run.wait()
        named = "RUN.EVAL" in text
        self.record(
            "dates",
            "RUN.EVAL in a folder",
            "ok" if rc == 0 and named else ("traceback" if "Traceback" in text else "silent"),
            f"rc {rc}, named: {named}",
        )
        run = Run([str(logs / "RUN.EVAL"), "--out", str(d / "out2")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")})
        rc, text, _ = run.wait()
        self.record(
            "dates",
            "RUN.EVAL named",
            "clean" if rc == 2 and "RUN.EVAL" in text and "Traceback" not in text else "silent",
            f"rc {rc}: {last_line(text)}",
        )


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/report_fault_probe")
    parser.add_argument("--signals", type=int, default=36)
    parser.add_argument("--tuples", type=int, default=60)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--quick", action="store_true", help="fewer cases per class (for the slow test)")
    parser.add_argument("--only", default="signal,concurrent,out,logchange,dates", help="classes to run")
    args = parser.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    logs, alt = build_logs(work / "data", args.tuples, args.models)
    probe = Probe(work, logs, alt)
    if args.quick:
        probe.fracs, probe.stamps, probe.targets, probe.limits = (0.4,), ("2099-01-01", "1990-01-01"), ("log", "all"), (20_000, 400_000)
    loads = [loadavg()]
    probe.reference()
    d = probe.fresh("cold")
    rc, out, probe.cold_wall = Run([str(logs), "--out", str(d / "out")], env={"CLINICAL_CF_CACHE_DIR": str(d / "cache")}).wait()
    print(f"reference {probe.ref_wall:.1f} s (--no-cache), cold {probe.cold_wall:.1f} s; load {loadavg()}", flush=True)
    only = set(args.only.split(","))
    rng = random.Random(args.seed)
    if "signal" in only:
        probe.signals(args.signals, args.seed)
        loads.append(loadavg())
    if "concurrent" in only:
        probe.concurrent()
        loads.append(loadavg())
    if "out" in only:
        probe.out_faults()
        loads.append(loadavg())
    if "logchange" in only:
        probe.logs_changed(rng)
        loads.append(loadavg())
    if "dates" in only:
        probe.dates()
        probe.upper_case()
        loads.append(loadavg())
    table = collections.defaultdict(collections.Counter)
    for cls, _, outcome, _ in probe.results:
        table[cls][outcome] += 1
    kinds = ("ok", "clean", "unclear", "silent", "traceback", "hang", "leftover")
    print("\nclass       " + " ".join(f"{k:>9s}" for k in kinds) + "      n")
    for cls, counts in table.items():
        print(f"{cls:11s} " + " ".join(f"{counts[k]:9d}" for k in kinds) + f" {sum(counts.values()):6d}")
    total = collections.Counter(o for _, _, o, _ in probe.results)
    print(f"{'all':11s} " + " ".join(f"{total[k]:9d}" for k in kinds) + f" {sum(total.values()):6d}")
    print(f"load average (1, 5, 15 min) at each class boundary: {' | '.join(loads)}")
    (work / "results.json").write_text(json.dumps({"results": probe.results, "loads": loads}, indent=1))
    return {"results": probe.results, "loads": loads}


if __name__ == "__main__":
    main()
