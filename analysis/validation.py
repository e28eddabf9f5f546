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
import io
import sys
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from clinical_cf.analysis.html import render
from clinical_cf.analysis.logs import LogRows, sample_views, suite_samples
from clinical_cf.analysis.report import JUDGE_SCORES
from clinical_cf.analysis.stats import VERDICTS, verdict_kappa
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import read_text_checked

SHEET_COLUMNS = ["row_id", "family", "intervention", "expected_change", "baseline_recommendations",
                 "counterfactual_recommendations", "score", "coherent", "comment"]


def judged_rows(paths: Sequence[str] | LogRows | pd.DataFrame) -> pd.DataFrame:
    """Every scored CSS tuple with the texts a rater needs and the key fields raters must not see."""
    rows = []
    for sample in sample_views(suite_samples(paths, "css")):
        name = next((n for n in JUDGE_SCORES if n in sample.scores), None)
        if name is None or sample.metadata.get("family") in (None, "N"):
            continue
        score = sample.scores[name]
        if not isinstance(score.value, (int, float)) or score.value != score.value:
            continue
        meta = score.metadata or {}
        rows.append({
            "log": sample.log, "sample_id": sample.id, "epoch": sample.epoch, "model": sample.model,
            "judge": meta.get("judge_model"), "llm_score": float(score.value),
            "family": sample.metadata["family"], "intervention": sample.metadata.get("intervention"),
            "expected_change": sample.metadata.get("expected_change"),
            "baseline_recommendations": meta.get("baseline_recommendations"),
            "counterfactual_recommendations": meta.get("counterfactual_recommendations"),
        })
    return pd.DataFrame(rows)


def family_quota(available: dict[str, int], n: int) -> tuple[dict[str, int], str]:
    """Rows per family for a sheet of `n`: equal shares (the first families in name order take the remainder), a
    family short of its share giving the rest to the others, so the sheet holds `n` rows whenever the logs hold
    that many judged tuples; and a note saying why not (or which families were short), empty when none was."""
    families = sorted(available)
    quota = dict.fromkeys(families, 0)
    remaining = n
    while remaining > 0:
        open_ = [f for f in families if quota[f] < available[f]]
        if not open_:
            break
        share, extra = divmod(remaining, len(open_))
        for i, family in enumerate(open_):
            give = min(share + (1 if i < extra else 0), available[family] - quota[family])
            quota[family] += give
            remaining -= give
    total = sum(quota.values())
    short = [f"{f} ({available[f]})" for f in families if quota[f] == available[f] and available[f] < n / len(families)]
    if total < n:
        note = (f"the sheet holds {total} of the {n} rows asked: the logs hold only {sum(available.values())} judged "
                f"interventional tuples (per family: {', '.join(f'{f} {available[f]}' for f in families)})")
    elif short:
        note = (f"families with fewer judged tuples than an equal share gave every one they have ({', '.join(short)}); "
                f"the other families filled the sheet to {n} rows")
    else:
        note = ""
    return quota, note


def export_sheet(paths: list[str], out_dir: str | Path, n: int = 100, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write sheet.csv, sheet.html (raters) and key.csv (analysts): a family-stratified sample of n rows."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = judged_rows(paths)
    if rows.empty:
        raise ValueError("no judged CSS tuples in the given logs")
    rng = np.random.default_rng(seed)
    # Equal allocation across families (the paper's validation covered every family), capped by availability.
    quota, note = family_quota(rows["family"].value_counts().to_dict(), n)
    if note:
        print(f"annotate export: {note}", file=sys.stderr)
    picked = pd.concat(
        [group.iloc[rng.permutation(len(group))[:quota[family]]] for family, group in rows.groupby("family")]
    )
    picked = picked.iloc[rng.permutation(len(picked))].reset_index(drop=True)
    picked["row_id"] = [
        hashlib.sha256(f"{seed}:{r.log}:{r.sample_id}:{r.epoch}:{r.model}".encode()).hexdigest()[:10] for r in picked.itertuples()
    ]
    sheet = picked.assign(score="", coherent="", comment="")[SHEET_COLUMNS]
    sheet_csv, key_csv, form = out / "sheet.csv", out / "key.csv", out / "sheet.html"
    sheet.to_csv(sheet_csv, index=False)
    picked[["row_id", "log", "sample_id", "epoch", "model", "judge", "llm_score", "family"]].to_csv(key_csv, index=False)
    form.write_text(_form_html(sheet), encoding="utf-8")
    return sheet_csv, form, key_csv


def _form_html(sheet: pd.DataFrame) -> str:
    """A static form: one card per row, radio buttons, and a button that downloads the filled CSV.

    Model output reaches the page twice, as card text (HTML-escaped by the template) and as the rows'
    data for the download (JSON escaped for its script block), so no reply can end a block or run script.
    """
    fields = [c for c in SHEET_COLUMNS if c not in ("score", "coherent", "comment")]
    rows = [{k: ("" if v is None or (isinstance(v, float) and v != v) else str(v)) for k, v in r.items()}
            for r in sheet[fields].to_dict("records")]
    return render("annotation.html.j2", rows=rows, verdicts=[f"{v:g}" for v in VERDICTS], columns=SHEET_COLUMNS)


def _majority(values: list[float]) -> float:
    """The most frequent verdict; a tie goes to the median of the raters' verdicts."""
    counts = pd.Series(values).value_counts()
    top = counts[counts == counts.max()].index.tolist()
    return float(top[0]) if len(top) == 1 else float(np.median(values))


KEY_COLUMNS = ("row_id", "family", "llm_score")
RATER_COLUMNS = ("row_id", "score", "coherent")


def _read_sheet(path: str | Path, required: tuple[str, ...]) -> pd.DataFrame:
    """A key or rater sheet read through the bounded loader; a missing column or duplicate row is a `CatalogError`."""

    text = read_text_checked(path)
    try:
        sheet = pd.read_csv(io.StringIO(text), dtype={"row_id": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as ex:
        raise CatalogError(path, f"is not a readable CSV sheet ({ex})") from None
    missing = [c for c in required if c not in sheet.columns]
    if missing:
        raise CatalogError(path, f"has no column {', '.join(repr(c) for c in missing)} (columns: {', '.join(map(str, sheet.columns))})",
                           field=missing[0])
    duplicated = sheet["row_id"][sheet["row_id"].duplicated()]
    if len(duplicated):
        raise CatalogError(path, "appears twice in the sheet", entry=str(duplicated.iloc[0]), field="row_id")
    return sheet


def agreement(key_csv: str | Path, rater_csvs: list[str | Path]) -> dict[str, pd.DataFrame]:
    """Agreement tables from the key and two or more raters' filled sheets.

    Raters are named by their sheet's file name, so two sheets with one name (`a/alice.csv`, `b/alice.csv`)
    are refused rather than one silently replacing the other.
    """

    key = _read_sheet(key_csv, KEY_COLUMNS)
    raters = {}
    where: dict[str, str | Path] = {}
    for path in rater_csvs:
        sheet = _read_sheet(path, RATER_COLUMNS)
        bad = sheet[~sheet["score"].isin(list(VERDICTS))]
        if len(bad):
            raise ValueError(f"{path}: row {bad.iloc[0]['row_id']}: field 'score' must be 0, 0.5 or 1 (got {bad.iloc[0]['score']!r})")
        name = Path(path).stem
        if name in raters:
            raise CatalogError(path, f"rater name {name!r} is also the name of {where[name]}; raters are named by file "
                                     "name, so rename one sheet")
        where[name] = path
        raters[name] = sheet.set_index("row_id")
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
