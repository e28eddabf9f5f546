"""Human validation of the CSS judge (CSS paper section 4.7).

`export_sheet` draws a stratified sample of judged tuples and writes a blinded annotation sheet
(CSV and a self-contained HTML form): case, intervention, expected change and the two
recommendation lists, with no model or judge identity. The key that links each row back to its
log, sample, model and LLM verdict is written to a separate file that raters never see.
`agreement` reads the raters' sheets back and reports pairwise human kappa, LLM-vs-majority
kappa overall and per family, exact agreement, LLM vs human means per family, and the same
restricted to the rows the majority of raters marked coherent.
"""

from __future__ import annotations

import hashlib
import html
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from inspect_ai.log import read_eval_log

from clinical_cf.analysis.report import JUDGE_SCORES, _log_paths
from clinical_cf.analysis.stats import VERDICTS, verdict_kappa

SHEET_COLUMNS = ["row_id", "family", "intervention", "expected_change", "baseline_recommendations",
                 "counterfactual_recommendations", "score", "coherent", "comment"]


def judged_rows(paths: list[str]) -> pd.DataFrame:
    """Every scored CSS tuple with the texts a rater needs and the key fields raters must not see."""
    rows = []
    for path in _log_paths(paths):
        try:
            log = read_eval_log(path)
        except Exception:
            continue
        for sample in log.samples or []:
            scores = sample.scores or {}
            name = next((n for n in JUDGE_SCORES if n in scores), None)
            if name is None or sample.metadata.get("family") in (None, "N"):
                continue
            score = scores[name]
            if not isinstance(score.value, (int, float)) or score.value != score.value:
                continue
            meta = score.metadata or {}
            rows.append({
                "log": path, "sample_id": sample.id, "epoch": sample.epoch, "model": log.eval.model,
                "judge": meta.get("judge_model"), "llm_score": float(score.value),
                "family": sample.metadata["family"], "intervention": sample.metadata.get("intervention"),
                "expected_change": sample.metadata.get("expected_change"),
                "baseline_recommendations": meta.get("baseline_recommendations"),
                "counterfactual_recommendations": meta.get("counterfactual_recommendations"),
            })
    return pd.DataFrame(rows)


def export_sheet(paths: list[str], out_dir: str | Path, n: int = 100, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write sheet.csv, sheet.html (raters) and key.csv (analysts): a family-stratified sample of n rows."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = judged_rows(paths)
    if rows.empty:
        raise ValueError("no judged CSS tuples in the given logs")
    rng = np.random.default_rng(seed)
    # Equal allocation across families (the paper's validation covered every family), capped by availability.
    families = sorted(rows["family"].unique())
    per_family = max(1, n // len(families))
    picked = pd.concat(
        [group.iloc[rng.permutation(len(group))[:per_family]] for _, group in rows.groupby("family")]
    )
    picked = picked.iloc[rng.permutation(len(picked))].reset_index(drop=True)
    picked["row_id"] = [hashlib.sha256(f"{seed}:{r.log}:{r.sample_id}:{r.epoch}:{r.model}".encode()).hexdigest()[:10] for r in picked.itertuples()]
    sheet = picked.assign(score="", coherent="", comment="")[SHEET_COLUMNS]
    sheet_csv, key_csv, form = out / "sheet.csv", out / "key.csv", out / "sheet.html"
    sheet.to_csv(sheet_csv, index=False)
    picked[["row_id", "log", "sample_id", "epoch", "model", "judge", "llm_score", "family"]].to_csv(key_csv, index=False)
    form.write_text(_form_html(sheet), encoding="utf-8")
    return sheet_csv, form, key_csv


def _form_html(sheet: pd.DataFrame) -> str:
    """A static form: one card per row, radio buttons, and a button that downloads the filled CSV."""
    cards = []
    for row in sheet.itertuples():
        rid = html.escape(row.row_id)
        radios = " ".join(
            f"<label><input type='radio' name='s_{rid}' value='{v:g}'> {v:g}</label>" for v in VERDICTS
        )
        cards.append(
            f"<section data-row='{rid}'><h3>Row {rid} (family {html.escape(str(row.family))})</h3>"
            f"<p><b>Intervention:</b> {html.escape(str(row.intervention))}</p>"
            f"<p><b>Expected change:</b> {html.escape(str(row.expected_change))}</p>"
            f"<div class='cols'><pre>{html.escape(str(row.baseline_recommendations))}</pre>"
            f"<pre>{html.escape(str(row.counterfactual_recommendations))}</pre></div>"
            f"<p><b>Score</b> {radios} &nbsp; <label><input type='checkbox' name='c_{rid}' checked> medically coherent</label></p>"
            f"<p><input type='text' name='m_{rid}' placeholder='comment' size='80'></p></section>"
        )
    rows_json = json.dumps(sheet[[c for c in SHEET_COLUMNS if c not in ("score", "coherent", "comment")]].to_dict("records"))
    return f"""<!doctype html><html><head><meta charset='utf-8'><title>CSS annotation</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}section{{border:1px solid #ccc;padding:.5em 1em;margin:1em 0}}
.cols{{display:grid;grid-template-columns:1fr 1fr;gap:1em}}pre{{white-space:pre-wrap;background:#f7f7f7;padding:.5em}}</style></head><body>
<h1>CSS judge validation</h1>
<p>For each row, compare the recommendations before (left) and after (right) the chart change with the expected change.
Score 1 = updated in the expected direction, 0.5 = acknowledged but not (fully) updated, 0 = unchanged or wrong direction.
Untick "coherent" if the counterfactual case is medically incoherent.</p>
{''.join(cards)}
<button id='download'>Download my answers (CSV)</button>
<script>
const ROWS = {rows_json};
const COLS = {json.dumps(SHEET_COLUMNS)};
function q(v) {{ return '"' + String(v ?? '').replace(/"/g, '""') + '"'; }}
document.getElementById('download').onclick = () => {{
  const lines = [COLS.join(',')];
  for (const r of ROWS) {{
    const s = document.querySelector(`input[name="s_${{r.row_id}}"]:checked`);
    const c = document.querySelector(`input[name="c_${{r.row_id}}"]`).checked ? 'yes' : 'no';
    const m = document.querySelector(`input[name="m_${{r.row_id}}"]`).value;
    lines.push(COLS.map(k => q(k === 'score' ? (s ? s.value : '') : k === 'coherent' ? c : k === 'comment' ? m : r[k])).join(','));
  }}
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([lines.join('\\n')], {{type: 'text/csv'}}));
  a.download = 'annotations.csv';
  a.click();
}};
</script></body></html>"""


def _majority(values: list[float]) -> float:
    """The most frequent verdict; a tie goes to the median of the raters' verdicts."""
    counts = pd.Series(values).value_counts()
    top = counts[counts == counts.max()].index.tolist()
    return float(top[0]) if len(top) == 1 else float(np.median(values))


def agreement(key_csv: str | Path, rater_csvs: list[str | Path]) -> dict[str, pd.DataFrame]:
    """Agreement tables from the key and two or more raters' filled sheets."""
    key = pd.read_csv(key_csv)
    raters = {}
    for path in rater_csvs:
        sheet = pd.read_csv(path, dtype={"row_id": str})
        bad = sheet[~sheet["score"].isin(list(VERDICTS))]
        if len(bad):
            raise ValueError(f"{path}: row {bad.iloc[0]['row_id']}: field 'score' must be 0, 0.5 or 1 (got {bad.iloc[0]['score']!r})")
        raters[Path(path).stem] = sheet.set_index("row_id")
    if len(raters) < 2:
        raise ValueError("human agreement needs at least two raters")
    key = key.set_index(key["row_id"].astype(str))
    common = key.index.intersection(set.intersection(*(set(r.index) for r in raters.values())))
    frame = key.loc[sorted(common), ["family", "llm_score"]].copy()
    for name, sheet in raters.items():
        frame[name] = sheet.loc[frame.index, "score"].astype(float)
        frame[f"{name}_coherent"] = sheet.loc[frame.index, "coherent"].astype(str).str.lower().isin(["yes", "true", "1"])
    names = list(raters)
    frame["majority"] = [_majority([row[n] for n in names]) for _, row in frame.iterrows()]
    frame["coherent"] = frame[[f"{n}_coherent" for n in names]].sum(axis=1) > len(names) / 2

    pairwise = pd.DataFrame([
        {"rater_a": a, "rater_b": b, "kappa": verdict_kappa(frame[a], frame[b]),
         "kappa_linear": verdict_kappa(frame[a], frame[b], weighted=True), "agreement": float((frame[a] == frame[b]).mean())}
        for a, b in combinations(names, 2)
    ])

    def versus_majority(subset: pd.DataFrame, label: str) -> list[dict]:
        out = []
        for family, group in [("all", subset), *subset.groupby("family")]:
            out.append({
                "rows": label, "family": family, "n": len(group),
                "llm_vs_majority_kappa": verdict_kappa(group["llm_score"], group["majority"]) if len(group) > 1 else float("nan"),
                "exact_agreement": float((group["llm_score"] == group["majority"]).mean()),
                "llm_mean": group["llm_score"].mean(), "human_mean": group["majority"].mean(),
            })
        return out

    llm = pd.DataFrame(versus_majority(frame, "all") + versus_majority(frame[frame["coherent"]], "coherent only"))
    return {"rows": frame.reset_index(), "pairwise": pairwise, "llm_vs_humans": llm}
