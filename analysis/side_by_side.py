"""A static, self-contained side-by-side page: what changed, and how each model answered.

Per tuple: the edit to the input as a word diff against the baseline packet, then one column per
model with its baseline and counterfactual recommendations (items added and removed marked), the
judge's score and rationale, and the log and sample the row comes from. Filters by family,
intervention, score and model run in the page itself on the tuples' data: no server, no network.

It scales to thousands of tuples x many models because the page carries the tuples once, as JSON in
a script block (escaped for that context), and draws one page of rows at a time; the first page is
also drawn server-side, so the table is there before any script runs.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from markupsafe import Markup

from clinical_cf.analysis.html import render
from clinical_cf.analysis.logs import LogRows, input_text, sample_views
from clinical_cf.analysis.report import JUDGE_SCORES
from clinical_cf.catalog.css.schema import render_sections

PAGE_SIZE = 50
"""Rows drawn at once; the rest are a page away (the filters count every tuple)."""


def word_diff(before: str, after: str) -> str:
    """HTML of what changed between two texts: changed lines, word-diffed within, "…" for the rest.

    Lines are matched first (cheap on 10k-character packets), then only the changed lines are
    compared word by word.
    """
    lines_a, lines_b = before.splitlines(), after.splitlines()
    # Unchanged lines before the first edit and after the last are set aside in linear time.
    head, tail = _common_ends(lines_a, lines_b)
    a, b = lines_a[head:len(lines_a) - tail], lines_b[head:len(lines_b) - tail]
    out: list[str] = [" … "] if head else []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            if out and out[-1] != " … ":
                out.append(" … ")
            continue
        old, new = "\n".join(a[i1:i2]), "\n".join(b[j1:j2])
        if tag == "replace":
            out.append(_words(old, new))
        elif tag == "delete":
            out.append(f"<del>{html.escape(old)}</del>")
        else:
            out.append(f"<ins>{html.escape(new)}</ins>")
    if tail and (not out or out[-1] != " … "):
        out.append(" … ")
    text = "".join(out).strip(" …")
    return text if "<del>" in text or "<ins>" in text else "(no textual change)"


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix of two token lists."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _words(old: str, new: str) -> str:
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    # An edit touches a span: the unchanged words around it are matched in linear time, and only the
    # span between goes to SequenceMatcher (quadratic in what it is given).
    head, tail = _common_ends(a, b)
    parts: list[str] = [html.escape("".join(a[:head]))]
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(html.escape("".join(a_mid[i1:i2])))
            continue
        if i2 > i1:
            parts.append(f"<del>{html.escape(''.join(a_mid[i1:i2]))}</del>")
        if j2 > j1:
            parts.append(f"<ins>{html.escape(''.join(b_mid[j1:j2]))}</ins>")
    parts.append(html.escape("".join(a[len(a) - tail:])))
    return "".join(parts)


def _items(arm: dict | None) -> list[str]:
    return [str(r.get("treatment", "")) for r in (arm or {}).get("recommendations", []) if isinstance(r, dict)]


def _marked(baseline: list[str], counterfactual: list[str]) -> tuple[list[list], list[list]]:
    """Each list's items with a flag: dropped from the baseline / new in the counterfactual (case-insensitive)."""
    before = {t.lower() for t in baseline}
    after = {t.lower() for t in counterfactual}
    return [[t, t.lower() not in after] for t in baseline], [[t, t.lower() not in before] for t in counterfactual]


def _shown(score: object) -> str:
    if not isinstance(score, (int, float)) or score != score:
        return "unscored"
    return f"{score:g}"


def _add(models: list[tuple], tuples: dict[str, dict], column: tuple[str, str, str], log: str, sample_id, epoch: int,
         sample_input, meta: dict, score, arms) -> None:
    """One scored sample into the page's data: its tuple's edit (diffed once) and its column's answer."""
    if column not in models:
        models.append(column)
    key = f"{meta['case_id']}:{meta['intervention_id']}"
    entry = tuples.setdefault(key, {"family": str(meta["family"]), "intervention": str(meta["intervention_id"]), "answers": {}})
    if "diff" not in entry:
        if "baseline_sections" in meta:
            before, after = render_sections(meta["baseline_sections"]), render_sections(meta["counterfactual_sections"])
        else:
            before, after = meta.get("baseline_packet", ""), sample_input if isinstance(sample_input, str) else ""
        entry["diff"] = word_diff(before, after)
        entry["expected"] = str(meta.get("expected_change", ""))
    baseline, counterfactual = _marked(_items(arms[0]), _items(arms[1]))
    entry["answers"].setdefault(column, {
        "score": _shown(score.value),
        "why": (score.explanation or "").split("\n\nBASELINE:")[0],
        "before": baseline,
        "after": counterfactual,
        "src": f"{log}#{sample_id} (epoch {epoch})",
        "judge": column[1],
    })


def _arms(sample) -> tuple[dict | None, dict | None]:
    """The baseline and counterfactual arms of a sample, read with `store_as(CSSArms)`.

    A store that does not validate as today's `CSSArms` (a log from an older solver, an arm cut short)
    is read field by field under the model's own namespace, so its lists still show.
    """
    from pydantic import ValidationError

    from clinical_cf.solvers.css import CSSArms

    try:
        arms = sample.store_as(CSSArms)
        return (arms.baseline.model_dump() if arms.baseline else None,
                arms.counterfactual.model_dump() if arms.counterfactual else None)
    except ValidationError:
        store = sample.store or {}
        return tuple(store.get(f"{CSSArms.__name__}:{name}") for name in ("baseline", "counterfactual"))  # type: ignore[return-value]


def _collect_log(path: str, run: str) -> tuple[list[tuple], dict[str, dict]]:
    """One CSS log's tuples (a worker process): full samples without the transcript, arms read with `store_as`."""
    from inspect_ai.log import read_eval_log

    from clinical_cf.analysis.logs import EXCLUDED_FIELDS

    log = read_eval_log(path, exclude_fields=set(EXCLUDED_FIELDS))
    roles = log.eval.model_roles or {}
    default_judge = roles["judge"].model if "judge" in roles else ""
    models: list[tuple] = []
    tuples: dict[str, dict] = {}
    for sample in log.samples or []:
        scores, meta = sample.scores or {}, sample.metadata or {}
        name = next((n for n in JUDGE_SCORES if n in scores), None)
        if name is None or not {"family", "case_id", "intervention_id"} <= set(meta):
            continue
        judge = (scores[name].metadata or {}).get("judge_model") or default_judge
        _add(models, tuples, (log.eval.model, judge, run), path, sample.id, sample.epoch, sample.input, meta, scores[name],
             _arms(sample))
    return models, tuples


def _collect_rows(frame: pd.DataFrame) -> tuple[list[tuple], dict[str, dict]]:
    """The same from rows the log reader already holds in full (store included)."""
    from inspect_ai.log import EvalSample

    models: list[tuple] = []
    tuples: dict[str, dict] = {}
    for sample in sample_views(frame):
        name = next((n for n in JUDGE_SCORES if n in sample.scores), None)
        meta = sample.metadata
        if name is None or not {"family", "case_id", "intervention_id"} <= set(meta):
            continue
        judge = (sample.scores[name].metadata or {}).get("judge_model") or ""
        # The store as Inspect reads it back: `store_as` on the sample, never the namespaced key strings.
        arms = _arms(EvalSample.model_construct(store=sample.store))
        _add(models, tuples, (sample.model, judge, ""), sample.log, sample.id, sample.epoch,
             sample.input if isinstance(sample.input, str) else input_text(sample.input), meta, sample.scores[name], arms)
    return models, tuples


def collect(paths: Sequence[str] | LogRows | pd.DataFrame, workers: int | None = None) -> tuple[list[str], dict[str, dict]]:
    """Columns, and per tuple key (case:intervention): its edit, expected change and each column's answer.

    A column is one model, judge and run: named by the model alone when every column shares one judge
    and run (the page then names the judge above the table), else `model · judge J · run R`.
    Rows already read in full are used as they are; otherwise each CSS log is read in full (transcript
    excluded) in its own worker process, oldest first, so a rerun's answer replaces the earlier run's,
    and the main process only merges the small per-tuple records.
    """
    import os
    from concurrent.futures import ProcessPoolExecutor

    from clinical_cf.analysis.logs import list_logs, read_logs

    if isinstance(paths, pd.DataFrame) and any(c.startswith("store_") for c in paths.columns):
        parts = [_collect_rows(paths)]
    else:
        if isinstance(paths, pd.DataFrame):
            logs = paths.drop_duplicates("log").reindex(columns=["log", "run", "created"])
        else:
            rows = paths if isinstance(paths, LogRows) else read_logs(list_logs(paths), suites=["css"], mode="summaries")
            logs = rows.suite_logs("css")
        if logs.empty:
            return [], {}
        logs = logs.assign(run=logs["run"].fillna("").astype(str), created=logs["created"].fillna("").astype(str))
        jobs = list(zip(logs.sort_values("created")["log"].astype(str), logs.sort_values("created")["run"]))
        workers = workers or min(len(jobs), os.cpu_count() or 1)
        if workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(_collect_log, *zip(*jobs)))
        else:
            parts = [_collect_log(path, run) for path, run in jobs]
    columns: list[tuple] = []
    tuples: dict[str, dict] = {}
    for part_columns, part_tuples in parts:
        columns += [c for c in part_columns if c not in columns]
        for key, entry in part_tuples.items():
            merged = tuples.setdefault(key, {k: v for k, v in entry.items() if k != "answers"} | {"answers": {}})
            merged["answers"].update(entry["answers"])  # logs in creation order: the latest run wins
    single = len({(judge, run) for _, judge, run in columns}) <= 1
    names = {c: c[0] if single else f"{c[0]} · judge {c[1] or '?'}" + (f" · run {c[2]}" if c[2] else "") for c in columns}
    for entry in tuples.values():
        entry["answers"] = {names[c]: a for c, a in entry["answers"].items()}
    return sorted(names.values()), tuples


def write_side_by_side(paths: Sequence[str] | LogRows | pd.DataFrame, file: str | Path) -> Path:
    """Write the page for the CSS logs under `paths` (or the log reader's CSS rows) to `file`."""
    models, tuples = collect(paths)
    rows = []
    for key, entry in sorted(tuples.items()):
        answers = [entry["answers"].get(m) for m in models]
        rows.append({"key": key, "family": entry["family"], "intervention": entry["intervention"], "diff": entry["diff"],
                     "expected": entry["expected"], "answers": answers,
                     "scores": sorted({a["score"] for a in answers if a is not None})})
    judges = sorted({a["judge"] for entry in tuples.values() for a in entry["answers"].values() if a.get("judge")})
    page = render(
        "side_by_side.html.j2",
        judges=judges,
        models=models,
        first_page=[{**row, "diff": Markup(row["diff"])} for row in rows[:PAGE_SIZE]],
        data={"models": models, "tuples": rows, "page_size": PAGE_SIZE},
        families=sorted({r["family"] for r in rows}),
        interventions=sorted({r["intervention"] for r in rows}),
        total=len(rows),
        page_size=PAGE_SIZE,
    )
    path = Path(file)
    path.write_text(page, encoding="utf-8")
    return path
