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

import hashlib
import html
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from uuid import uuid4

import pandas as pd
from inspect_ai.log import EvalSample, read_eval_log
from markupsafe import Markup
from pydantic import ValidationError

from clinical_cf.analysis.html import render
from clinical_cf.analysis.logs import (
    CACHE_VERSION,
    EXCLUDED_FIELDS,
    LogRows,
    _file_hash,
    cache_dir,
    in_workers,
    input_text,
    list_logs,
    read_logs,
    sample_views,
    worker_count,
)
from clinical_cf.analysis.report import JUDGE_SCORES, reduce_epochs
from clinical_cf.catalog.css.schema import render_sections
from clinical_cf.scorers.edit_record import edit_from, edit_segments
from clinical_cf.solvers.css import CSSArms

PAGE_SIZE = 50
"""Rows drawn at once; the rest are a page away (the filters count every tuple)."""


def word_diff(before: str, after: str) -> str:
    """HTML of what changed between two texts (`scorers.edit_record.edit_segments`): removed words in <del>, inserted
    in <ins>, a few words of unchanged context around each change and "…" for the rest."""
    return segments_html(edit_segments(before, after))


def segments_html(segments: list | None) -> str:
    """An edit record's segments as escaped HTML (the page draws the same with DOM nodes)."""
    out = []
    for segment in segments or []:
        kind, text = segment[0], segment[1] if len(segment) > 1 else ""
        out.append(" … " if kind == "…" else f"<del>{html.escape(text)}</del>" if kind == "-" else
                   f"<ins>{html.escape(text)}</ins>" if kind == "+" else html.escape(text))
    shown = "".join(out).strip(" …")
    return shown if "<del>" in shown or "<ins>" in shown else "(no textual change)"


def _items(arm: dict | None) -> list[str]:
    return [str(r.get("treatment", "")) for r in (arm or {}).get("recommendations", []) if isinstance(r, dict)]


def _marked(baseline: list[str], counterfactual: list[str]) -> tuple[list[list], list[list]]:
    """Each list's items with a flag: dropped from the baseline / new in the counterfactual (case-insensitive)."""
    before = {t.lower() for t in baseline}
    after = {t.lower() for t in counterfactual}
    return [[t, t.lower() not in after] for t in baseline], [[t, t.lower() not in before] for t in counterfactual]


def unread_arms(metadata: dict) -> dict[str, str]:
    """{arm: 'unreadable: reason' | 'invalid: reason'} for the arms the verdict records as not read (score metadata
    `parse` per arm, with `unreadable` / `invalid` reasons)."""
    parse = metadata.get("parse")
    if not isinstance(parse, dict):
        return {}
    out = {}
    for arm, provenance in parse.items():
        if provenance in ("unreadable", "invalid"):
            reasons = metadata.get(provenance) if isinstance(metadata.get(provenance), dict) else {}
            why = reasons.get(arm) if isinstance(reasons, dict) else None
            out[str(arm)] = f"{provenance}: {why}" if why else str(provenance)
    return out


def _shown(score: object) -> str:
    if not isinstance(score, (int, float)) or score != score:
        return "unscored"
    return f"{score:g}"


def _add(models: list[tuple], tuples: dict[str, dict], column: tuple[str, str, str], log: str, sample_id, epoch: int,
         sample_input, meta: dict, score, arms, diff_keys: set[str] | None = None, answer: bool = True,
         reducer: str = "mean", edit: list | None = None) -> None:
    """One scored sample epoch into the page's data: its tuple's edit (diffed once, by the log `diff_keys` assigns
    it to) and this epoch of its column's answer (every epoch is kept; `finish_answer` reduces them)."""
    if column not in models:
        models.append(column)
    key = f"{meta['case_id']}:{meta['intervention_id']}"
    entry = tuples.setdefault(key, {"family": str(meta["family"]), "intervention": str(meta["intervention_id"]), "answers": {}})
    if "diff" not in entry and edit is not None:  # the scorer's own record of the edit (`scorers.edit_record`)
        entry["diff"], entry["expected"] = edit, str(meta.get("expected_change", ""))
    if "diff" not in entry and (diff_keys is None or key in diff_keys):
        if "baseline_sections" in meta:
            before, after = render_sections(meta["baseline_sections"]), render_sections(meta["counterfactual_sections"])
        else:
            before, after = meta.get("baseline_packet", ""), sample_input if isinstance(sample_input, str) else ""
        entry["diff"] = edit_segments(before, after)
        entry["expected"] = str(meta.get("expected_change", ""))
    if not answer:
        return
    unread = unread_arms(score.metadata if isinstance(score.metadata, dict) else {})
    if unread:
        # An arm nothing was read from is shown as such, and the other arm's items are not "new" against it.
        baseline = [[f"({unread['baseline']})", False]] if "baseline" in unread else [[t, False] for t in _items(arms[0])]
        counterfactual = [[f"({unread['counterfactual']})", False]] if "counterfactual" in unread else \
            [[t, False] for t in _items(arms[1])]
    else:
        baseline, counterfactual = _marked(_items(arms[0]), _items(arms[1]))
    answer = entry["answers"].setdefault(column, {"judge": column[1], "reducer": reducer, "epochs": []})
    if any(e["epoch"] == int(epoch) for e in answer["epochs"]):
        return  # this epoch already came from a newer run of the column
    value = score.value if isinstance(score.value, (int, float)) and not isinstance(score.value, bool) else None
    answer["epochs"].append({
        "epoch": int(epoch),
        "value": value,
        "score": _shown(score.value),
        "why": (score.explanation or "").split("\n\nBASELINE:")[0],
        "before": baseline,
        "after": counterfactual,
        "src": f"{log}#{sample_id} (epoch {epoch})",
    })


def finish_answer(answer: dict) -> dict:
    """An answer with every epoch (in epoch order) and, on top, the score the log's reducer gives the tuple (the one the
    tables use) and the first epoch's lists, rationale and source (what the page shows before an epoch is opened)."""
    epochs = sorted(answer.get("epochs", []), key=lambda e: e["epoch"])
    values = pd.Series([e.pop("value", None) for e in epochs], dtype=float)
    reduced = reduce_epochs(values, str(answer.get("reducer") or "mean"))
    first = epochs[0] if epochs else {"epoch": 1, "score": "unscored", "why": "", "before": [], "after": [], "src": ""}
    # The first epoch's lists are carried once, on the answer itself (the page reads them there for epoch 1).
    shown = [{"epoch": first["epoch"], "score": first["score"]}, *epochs[1:]]
    return {**answer, "epochs": shown, "score": _shown(reduced), "why": first["why"], "before": first["before"],
            "after": first["after"], "src": first["src"]}


def _arms(sample) -> tuple[dict | None, dict | None]:
    """The baseline and counterfactual arms of a sample, read with `store_as(CSSArms)`.

    A store that does not validate as today's `CSSArms` (a log from an older solver, an arm cut short)
    is read field by field under the model's own namespace, so its lists still show.
    """

    try:
        arms = sample.store_as(CSSArms)
        return (arms.baseline.model_dump() if arms.baseline else None,
                arms.counterfactual.model_dump() if arms.counterfactual else None)
    except ValidationError:
        store = sample.store or {}
        return tuple(store.get(f"{CSSArms.__name__}:{name}") for name in ("baseline", "counterfactual"))  # type: ignore[return-value]


def _collect_log_cached(path: str, run: str, diff_keys: set[str] | None = None, answers: bool = True):
    """`_collect_log` through the per-log cache (`logs.cache_dir`): keyed by the log's SHA-256 and what was asked,
    so a second report over the same logs parses no full sample. The entry is JSON (never executable); one
    that does not read back is rebuilt from the log with a warning."""

    folder = cache_dir()
    digest = _file_hash(path) if folder is not None else None
    if digest is None:
        return _collect_log(path, run, diff_keys, answers)
    asked = hashlib.sha256(repr((run, sorted(diff_keys or []), answers, PAGE_SIZE)).encode()).hexdigest()[:16]
    cached = folder / f"{digest}.side-{asked}.{CACHE_VERSION}.json"
    if cached.is_file():
        try:
            columns, tuples = _decode(json.loads(cached.read_text(encoding="utf-8")))
            for entry in tuples.values():  # the cache is by content: the page names the path it was given now
                for answer in entry["answers"].values():
                    for epoch in answer["epochs"]:
                        epoch["src"] = f"{path}#{epoch['src'].rsplit('#', 1)[-1]}"
            return columns, tuples
        except Exception as ex:  # noqa: BLE001 - a damaged entry costs a re-read, never the page
            print(f"report: warning: {path}: side-by-side cache entry {cached.name} is damaged ({type(ex).__name__}: {ex}); "
                  "rebuilt from the log", file=sys.stderr)
    result = _collect_log(path, run, diff_keys, answers)
    partial = cached.with_name(f".{cached.name}.{uuid4().hex}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(_encode(result)), encoding="utf-8")
        os.replace(partial, cached)
    except OSError:
        pass  # a read-only or full cache folder costs speed, never the page
    finally:
        partial.unlink(missing_ok=True)
    return result


def _encode(result: tuple[list[tuple], dict[str, dict]]) -> dict:
    columns, tuples = result
    return {"columns": [list(c) for c in columns],
            "tuples": {k: {**e, "answers": [[list(c), a] for c, a in e["answers"].items()]} for k, e in tuples.items()}}


def _decode(data: dict) -> tuple[list[tuple], dict[str, dict]]:
    columns = [tuple(c) for c in data["columns"]]
    tuples = {k: {**e, "answers": {tuple(c): a for c, a in e["answers"]}} for k, e in data["tuples"].items()}
    for entry in tuples.values():
        for answer in entry["answers"].values():
            for epoch in answer["epochs"]:
                for arm in ("before", "after"):
                    epoch[arm] = [list(item) for item in epoch[arm]]
    return columns, tuples


def _collect_log(path: str, run: str, diff_keys: set[str] | None = None, answers: bool = True) -> tuple[list[tuple], dict[str, dict]]:
    """One CSS log's tuples (a worker process): full samples without the transcript, arms read with `store_as`;
    with `answers=False` only the edits (diffs) of `diff_keys`."""

    # Edits only (`answers=False`, the usual case: answers come from the summaries): the store, which holds both
    # arms' raw replies, is not parsed at all.
    log = read_eval_log(path, exclude_fields=set(EXCLUDED_FIELDS) | (set() if answers else {"store"}))
    roles = log.eval.model_roles or {}
    default_judge = roles["judge"].model if "judge" in roles else ""
    reducer = str((log.eval.config.epochs_reducer or ["mean"])[0])
    models: list[tuple] = []
    tuples: dict[str, dict] = {}
    for sample in log.samples or []:
        scores, meta = sample.scores or {}, sample.metadata or {}
        name = next((n for n in JUDGE_SCORES if n in scores), None)
        if name is None or not {"family", "case_id", "intervention_id"} <= set(meta):
            continue
        judge = (scores[name].metadata or {}).get("judge_model") or default_judge
        if not answers and f"{meta['case_id']}:{meta['intervention_id']}" not in (diff_keys or set()):
            continue
        _add(models, tuples, (log.eval.model, judge, run), path, sample.id, sample.epoch, sample.input, meta, scores[name],
             _arms(sample) if answers else (None, None), diff_keys, answer=answers, reducer=reducer)
    return models, tuples


SUMMARY_TEXT_LIMIT = 1000
"""Inspect's sample summaries cut score-metadata strings at about 1k characters: a list that long is read in full."""


def _listed(text: object) -> list[dict] | None:
    """The recommendations of a numbered list as the judge scorer writes it (`1. FOLFOX — why`, one item a line),
    or None when the text is absent or may have been cut short in the summary.

    Inspect's summaries collapse a string's whitespace, so the list may arrive on one line
    (`1. FOLFOX — why 2. Radiation — why`): items are found by their consecutive numbers, not by lines.
    """
    # Inspect thins a long string with `textwrap.shorten`, which ends it with "..." (a first item of 1,100 characters
    # without a space leaves "1. ...": read as a list, it would lose every item): such a list is read in full.
    if not isinstance(text, str) or len(text) >= SUMMARY_TEXT_LIMIT - 5 or text.endswith("..."):
        return None
    flat = " ".join(text.split())
    if not flat.startswith("1. "):
        return []
    items, number, start = [], 1, 0
    while True:
        body = start + len(f"{number}. ")
        end = flat.find(f" {number + 1}. ", body)  # linear: one scan per item, each from where the last ended
        chunk = flat[body:] if end == -1 else flat[body:end]
        if end == -1:  # the scorer appends "Not recommended: A; B" after the last item
            chunk = chunk.split(" Not recommended: ")[0]
        items.append({"treatment": chunk.split(" — ")[0].strip()})
        if end == -1:
            return items
        number, start = number + 1, end + 1


def _collect_summaries(frame: pd.DataFrame) -> tuple[list[tuple], dict[str, dict], set[str]]:
    """Answers from sample summaries (score value, rationale and both lists from the judge's score metadata),
    and the logs whose lists are missing or cut short there (they are read in full)."""
    models: list[tuple] = []
    tuples: dict[str, dict] = {}
    full: set[str] = set()
    runs = dict(zip(frame["log"], frame["run"].fillna("").astype(str), strict=False)) if "run" in frame.columns else {}
    reducers = dict(zip(frame["log"], frame["reducer"].fillna("mean").astype(str), strict=False)) if "reducer" in frame.columns else {}
    # Newest log first, so a rerun's answer is the one a column keeps (`_add` keeps the first it is given).
    order = [c for c in ("created", "epoch") if c in frame.columns]
    for sample in sample_views(frame.sort_values(order, ascending=[False, True][: len(order)], kind="stable")):
        name = next((n for n in JUDGE_SCORES if n in sample.scores), None)
        meta = sample.metadata
        if name is None or not {"family", "case_id", "intervention_id"} <= set(meta):
            continue
        score = sample.scores[name]
        smeta = score.metadata or {}
        lists = summary_lists(smeta)
        if None in lists:
            full.add(sample.log)
            continue
        judge = smeta.get("judge_model") or ""
        edit = edit_from(smeta)
        _add(models, tuples, (sample.model, judge, runs.get(sample.log, "")), sample.log, sample.id, sample.epoch,
             None, meta, score, ({"recommendations": lists[0]}, {"recommendations": lists[1]}), diff_keys=set(),
             reducer=reducers.get(sample.log, "mean"), edit=edit)
    return models, tuples, full


def summary_lists(smeta: dict) -> tuple[list[dict] | None, list[dict] | None]:
    """Both arms' recommendations from a judge score's summary metadata: the scorer's own item lists
    (`baseline_items`, `counterfactual_items`, issue 45), else (older logs) the numbered lists read back from the
    explanation text; None for an arm the summary does not carry whole (Inspect dropped or cut the field)."""
    out = []
    for arm in ("baseline", "counterfactual"):
        items = smeta.get(f"{arm}_items")
        if isinstance(items, list) and all(isinstance(t, str) for t in items):
            out.append([{"treatment": t} for t in items])
        else:
            out.append(_listed(smeta.get(f"{arm}_recommendations")))
    return out[0], out[1]


def _collect_rows(frame: pd.DataFrame) -> tuple[list[tuple], dict[str, dict]]:
    """The same from rows the log reader already holds in full (store included)."""

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
    Rows already read in full are used as they are. Otherwise (the report's summary rows, or paths) the
    answers come from the sample summaries (the judge's score metadata carries both lists), the newest run
    of a column winning; full samples are read, in worker processes, only for each tuple's edit (from the
    first log that holds it) and for logs whose lists the summaries do not carry whole.
    """

    if isinstance(paths, pd.DataFrame) and any(c.startswith("store_") for c in paths.columns):
        parts = [_collect_rows(paths)]
    else:
        if isinstance(paths, pd.DataFrame):
            frame = paths
        else:
            rows = paths if isinstance(paths, LogRows) else read_logs(list_logs(paths), suites=["css"], mode="summaries")
            frame = rows.suite("css")
        if frame.empty or "metadata_case_id" not in frame.columns:
            return [], {}
        frame = frame.assign(run=frame["run"].fillna("").astype(str) if "run" in frame.columns else "",
                             created=frame["created"].fillna("").astype(str) if "created" in frame.columns else "")
        frame = frame.sort_values(["created", "log"], kind="stable")
        # Answers and edits come from the summaries (the scorer records both); full samples are read only for the
        # edits no summary carried (logs written before issue 45, or an edit too large for a summary: one log per
        # tuple, the oldest holding it) and for logs whose lists the summaries do not carry whole.
        summary_columns, summary_tuples, full = _collect_summaries(frame)
        keys = frame["metadata_case_id"].astype(str) + ":" + frame["metadata_intervention_id"].astype(str)
        lacking = keys[~keys.isin({k for k, e in summary_tuples.items() if "diff" in e})]
        first = lacking.groupby(lacking.to_numpy()).head(1).index
        diff_keys = {log: set(lacking.loc[first][frame.loc[first, "log"] == log]) for log in frame["log"].unique()}
        jobs = [(path, run, diff_keys.get(path, set()), path in full)
                for path, run in frame.drop_duplicates("log")[["log", "run"]].itertuples(index=False, name=None)
                if path in full or diff_keys.get(path)]
        workers = workers or worker_count(len(jobs))
        if workers > 1 and len(jobs) > 1:
            parts = list(in_workers(_collect_log_cached, jobs, workers))
        else:
            parts = [_collect_log_cached(*job) for job in jobs]
        parts = [(summary_columns, summary_tuples), *parts]
    columns: list[tuple] = []
    tuples: dict[str, dict] = {}
    for part_columns, part_tuples in parts:
        columns += [c for c in part_columns if c not in columns]
        for key, entry in part_tuples.items():
            merged = tuples.setdefault(key, {k: v for k, v in entry.items() if k != "answers"} | {"answers": {}})
            if "diff" not in merged and "diff" in entry:
                merged["diff"], merged["expected"] = entry["diff"], entry["expected"]
            merged["answers"].update(entry["answers"])  # logs in creation order: the latest run wins
    single = len({(judge, run) for _, judge, run in columns}) <= 1
    names = {c: c[0] if single else f"{c[0]} · judge {c[1] or '?'}" + (f" · run {c[2]}" if c[2] else "") for c in columns}
    for entry in tuples.values():
        entry["answers"] = {names[c]: finish_answer(a) for c, a in entry["answers"].items()}
    return sorted(names.values()), tuples


PAGE_BYTES = 20 * 2**20
"""The most one side-by-side file may hold (20 MB, under the 25 MB a browser opens without trouble): a larger
set of tuples is split into parts in tuple order, with `side_by_side.html` as their index."""


def write_side_by_side(paths: Sequence[str] | LogRows | pd.DataFrame, file: str | Path, limit: int = PAGE_BYTES) -> Path:
    """Write the page for the CSS logs under `paths` (or the log reader's CSS rows) to `file`.

    When the tuples do not fit in `limit` bytes, `file` is an index linking `<stem>_partNNN.html` files,
    each at most `limit` bytes and each a complete page (filters and paging work within a part).
    """

    models, tuples = collect(paths)
    rows = []
    for key, entry in sorted(tuples.items()):
        answers = [entry["answers"].get(m) for m in models]
        rows.append({"key": key, "family": entry["family"], "intervention": entry["intervention"],
                     "diff": entry.get("diff", [["=", "(edit not available: no scored sample carried it)"]]),
                     "expected": entry.get("expected", ""), "answers": answers,
                     "scores": sorted({a["score"] for a in answers if a is not None})})
    options = sorted({score for row in rows for score in row["scores"]}, key=lambda v: (v == "unscored", v))
    judges = sorted({a["judge"] for entry in tuples.values() for a in entry["answers"].values() if a.get("judge")})
    path = Path(file)
    page = _page(rows, models, judges, None, options)
    if len(page.encode()) <= limit:
        _atomic_write(path, page)
        return path
    # Split: a row is carried twice (JSON, and HTML on a part's first page), so budget each part by twice its JSON.
    budget = max(1, limit - len(_page([], models, judges, None, options).encode()) - 4096)
    chunks: list[list[dict]] = [[]]
    used = 0
    for row in rows:
        size = 2 * len(json.dumps(row))
        if chunks[-1] and used + size > budget:
            chunks.append([])
            used = 0
        chunks[-1].append(row)
        used += size
    names = [f"{path.stem}_part{i:03d}.html" for i in range(1, len(chunks) + 1)]
    for i, (chunk, name) in enumerate(zip(chunks, names, strict=True)):
        part = {"number": i + 1, "of": len(chunks), "first": chunk[0]["key"], "last": chunk[-1]["key"], "all": len(rows),
                "index": path.name, "previous": names[i - 1] if i else None, "next": names[i + 1] if i + 1 < len(names) else None}
        _atomic_write(path.with_name(name), _page(chunk, models, judges, part, options))
    index = render("side_by_side_index.html.j2", total=len(rows), models=models, judges=judges, limit_mb=round(limit / 2**20, 1),
                   parts=[{"file": n, "count": len(c), "first": c[0]["key"], "last": c[-1]["key"],
                           "families": ", ".join(sorted({r["family"] for r in c}))} for n, c in zip(names, chunks, strict=True)])
    _atomic_write(path, index)
    return path


def _page(rows: list[dict], models: list[str], judges: list[str], part: dict | None, options: list[str] = ()) -> str:
    return render(
        "side_by_side.html.j2",
        score_options=list(options),
        judges=judges,
        models=models,
        first_page=[{**row, "diff": Markup(segments_html(row["diff"]))} for row in rows[:PAGE_SIZE]],
        data={"models": models, "tuples": rows, "page_size": PAGE_SIZE},
        families=sorted({r["family"] for r in rows}),
        interventions=sorted({r["intervention"] for r in rows}),
        total=len(rows),
        page_size=PAGE_SIZE,
        part=part,
    )


def _atomic_write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{uuid4().hex}.tmp")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
