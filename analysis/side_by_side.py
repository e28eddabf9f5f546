"""A static, self-contained side-by-side page: what changed, and how each model answered.

Per tuple: the edit to the input as a word diff against the baseline packet, then one column per
model with its baseline and counterfactual recommendations (items added and removed marked), the
judge's score and rationale, and the log and sample the row comes from. Filters by family,
intervention, score and model run in the page itself: no server, no network.
"""

from __future__ import annotations

import difflib
import html
import re
from pathlib import Path

from inspect_ai.log import read_eval_log

from clinical_cf.analysis.report import JUDGE_SCORES, _log_paths
from clinical_cf.catalog.css.schema import render_sections


def word_diff(before: str, after: str) -> str:
    """HTML of what changed between two texts: changed lines, word-diffed within, "…" for the rest.

    Lines are matched first (cheap on 10k-character packets), then only the changed lines are
    compared word by word.
    """
    a, b = before.splitlines(), after.splitlines()
    out: list[str] = []
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
    text = "".join(out).strip(" …")
    return text if "<del>" in text or "<ins>" in text else "(no textual change)"


def _words(old: str, new: str) -> str:
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    parts: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(html.escape("".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(f"<del>{html.escape(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            parts.append(f"<ins>{html.escape(''.join(b[j1:j2]))}</ins>")
    return "".join(parts)


def _items(arm: dict | None) -> list[str]:
    return [r.get("treatment", "") for r in (arm or {}).get("recommendations", [])]


def _list_diff(baseline: list[str], counterfactual: list[str]) -> str:
    before = {t.lower() for t in baseline}
    after = {t.lower() for t in counterfactual}
    left = "".join(f"<li class='{'gone' if t.lower() not in after else ''}'>{html.escape(t)}</li>" for t in baseline)
    right = "".join(f"<li class='{'new' if t.lower() not in before else ''}'>{html.escape(t)}</li>" for t in counterfactual)
    return f"<div class='arms'><ol>{left or '<li>(none)</li>'}</ol><ol>{right or '<li>(none)</li>'}</ol></div>"


def collect(paths: list[str]) -> tuple[list[str], dict[str, dict]]:
    """Models, and per tuple key: its edit and each model's answers."""
    models: list[str] = []
    tuples: dict[str, dict] = {}
    for path in _log_paths(paths):
        try:
            log = read_eval_log(path)
        except Exception:
            continue
        model = log.eval.model
        for sample in log.samples or []:
            scores = sample.scores or {}
            name = next((n for n in JUDGE_SCORES if n in scores), None)
            if name is None or "family" not in sample.metadata:
                continue
            if model not in models:
                models.append(model)
            meta = sample.metadata
            key = f"{meta['case_id']}:{meta['intervention_id']}"
            entry = tuples.setdefault(key, {"family": meta["family"], "intervention": meta["intervention_id"], "answers": {}})
            if "diff" not in entry:
                if "baseline_sections" in meta:
                    before, after = render_sections(meta["baseline_sections"]), render_sections(meta["counterfactual_sections"])
                else:
                    before, after = meta["baseline_packet"], sample.input if isinstance(sample.input, str) else ""
                entry["diff"] = word_diff(before, after)
                entry["expected"] = meta.get("expected_change", "")
            store = sample.store or {}
            score = scores[name]
            entry["answers"].setdefault(model, {
                "score": score.value,
                "rationale": (score.explanation or "").split("\n\nBASELINE:")[0],
                "lists": _list_diff(_items(store.get("CSSArms:baseline")), _items(store.get("CSSArms:counterfactual"))),
                "source": f"{path}#{sample.id} (epoch {sample.epoch})",
            })
    return models, tuples


def write_side_by_side(paths: list[str], file: str | Path) -> Path:
    models, tuples = collect(paths)
    rows = []
    for key, entry in sorted(tuples.items()):
        cells = []
        for model in models:
            ans = entry["answers"].get(model)
            if ans is None:
                cells.append(f"<td data-model='{html.escape(model)}' class='missing'>not run</td>")
                continue
            score = ans["score"]
            shown = "unscored" if score != score else f"{score:g}"
            cells.append(
                f"<td data-model='{html.escape(model)}'><div class='score s{shown.replace('.', '_')}'>score {shown}</div>"
                f"{ans['lists']}<p class='why'>{html.escape(ans['rationale'])}</p>"
                f"<p class='src'>{html.escape(ans['source'])}</p></td>"
            )
        scores = " ".join(
            "unscored" if a["score"] != a["score"] else f"{a['score']:g}" for a in entry["answers"].values()
        )
        rows.append(
            f"<tr data-family='{entry['family']}' data-intervention='{html.escape(entry['intervention'])}' data-scores='{scores}'>"
            f"<td class='edit'><b>{html.escape(key)}</b><p>{entry['diff']}</p><p class='exp'>Expected: {html.escape(entry['expected'])}</p></td>"
            + "".join(cells) + "</tr>"
        )
    options = lambda values: "".join(f"<option>{html.escape(v)}</option>" for v in values)  # noqa: E731
    families = sorted({e["family"] for e in tuples.values()})
    interventions = sorted({e["intervention"] for e in tuples.values()})
    page = f"""<!doctype html><html><head><meta charset='utf-8'><title>CSS side by side</title>
<style>body{{font-family:sans-serif;margin:1em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;vertical-align:top;padding:4px;font-size:12px}}
td.edit{{max-width:420px}}del{{background:#fdd}}ins{{background:#dfd;text-decoration:none}}.arms{{display:grid;grid-template-columns:1fr 1fr;gap:4px}}
li.gone{{text-decoration:line-through;color:#a00}}li.new{{color:#070;font-weight:bold}}.score{{font-weight:bold}}.src,.exp{{color:#666}}</style></head><body>
<h1>CSS side by side</h1>
<p>Left: the edit to the chart (word diff) and the pre-registered expected change. Per model: baseline (left) and
counterfactual (right) recommendations, struck-through when dropped and bold when added, the judge's score and rationale.</p>
<p>Family <select id='family'><option value=''>all</option>{options(families)}</select>
Intervention <select id='intervention'><option value=''>all</option>{options(interventions)}</select>
Score <select id='score'><option value=''>any</option><option>0</option><option>0.5</option><option>1</option><option>unscored</option></select>
Model <select id='model'><option value=''>all</option>{options(models)}</select> <span id='count'></span></p>
<table><thead><tr><th>tuple</th>{''.join(f"<th data-model='{html.escape(m)}'>{html.escape(m)}</th>" for m in models)}</tr></thead>
<tbody>{''.join(rows)}</tbody></table>
<script>
const byId = id => document.getElementById(id);
function apply() {{
  const f = byId('family').value, i = byId('intervention').value, s = byId('score').value, m = byId('model').value;
  let shown = 0;
  for (const row of document.querySelectorAll('tbody tr')) {{
    const ok = (!f || row.dataset.family === f) && (!i || row.dataset.intervention === i)
      && (!s || row.dataset.scores.split(' ').includes(s));
    row.style.display = ok ? '' : 'none';
    if (ok) shown++;
  }}
  for (const cell of document.querySelectorAll('[data-model]')) cell.style.display = (!m || cell.dataset.model === m) ? '' : 'none';
  byId('count').textContent = shown + ' tuples shown';
}}
for (const id of ['family', 'intervention', 'score', 'model']) byId(id).onchange = apply;
apply();
</script></body></html>"""
    path = Path(file)
    path.write_text(page, encoding="utf-8")
    return path

