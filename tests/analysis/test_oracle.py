"""Every cell of every report table against the oracle (`oracle_logs.py`): values computed here, in
closed form from the scripted models and judges, never by calling the analysis code.

The logs are real Inspect runs (module-scoped, built once). The only thing read back from them here
is what Inspect itself recorded and the scripts cannot settle: which epoch the flaky model moved in
(the scheduler's order), each case's CMS (the `cms` scorer's value) and per-sample usage.
Every table is checked in its CSV, in report.md and in report.html; the per-sample table in
samples.csv and samples.parquet.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
from bs4 import BeautifulSoup
from inspect_ai.log import read_eval_log

from clinical_cf.analysis.logs import read_logs
from clinical_cf.analysis.side_by_side import write_side_by_side
from clinical_cf.cli import main
from clinical_cf.solvers.css import BASELINE_SPAN, COUNTERFACTUAL_SPAN

sys.path.insert(0, str(Path(__file__).parent))
import oracle_logs as oracle  # noqa: E402

pytestmark = pytest.mark.slow  # the module's sweep fixture builds and scores every suite's logs (over 3 s)

M = "mockllm/"
ENTRIES = [(b, j) for j in oracle.JUDGES for b in oracle.CSS_MODELS]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("oracle")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINICAL_CF_CACHE_DIR", str(folder / "cache"))
        css = oracle.css_logs(folder / "logs")
        medpic = oracle.medpic_logs(folder / "logs")
        out = folder / "report"
        assert main(["report", str(folder / "logs"), "--out", str(out)]) == 0
    return {"css": css, "medpic": medpic, "out": out}


# ------------------------------------------------------------------ closed form


def fmt(value) -> str:
    """How a number reads in report.md and report.html: integers as integers, else at most 3 decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "no data"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def avg_ranks(values: dict) -> dict:
    """1 = highest; ties share their average rank."""
    return {k: 1 + sum(o > v for o in values.values()) + (sum(o == v for o in values.values()) - 1) / 2 for k, v in values.items()}


def binom_two_sided(a: int, b: int) -> float:
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


@pytest.fixture(scope="module")
def truth(sweep):
    """Per entry (behaviour, judge): verdicts per tuple (epoch order), from the scripts and the epoch Inspect moved in."""
    verdicts, cms, tuples = {}, {}, set()
    for (behaviour, judge), paths in sweep["css"].items():
        log = read_eval_log(paths[-1])  # the latest run of an entry is the one the report must keep
        per: dict[tuple, list] = defaultdict(lambda: [None, None])
        moved_by_tuple = defaultdict(list)
        for s in log.samples:
            meta = s.scores["judge_direction"].metadata
            moved = meta["baseline_recommendations"] != meta["counterfactual_recommendations"]
            key = (s.metadata["case_id"], s.metadata["intervention_id"], s.metadata["family"])
            moved_by_tuple[key].append(moved)
            per[key][s.epoch - 1] = oracle.css_verdict(behaviour, judge, key[0], key[2], moved)
            cms[key[0]] = s.scores["cms"].value
            tuples.add(key)
        for key, seen in moved_by_tuple.items():  # the script's multiset of moves, whatever the scheduler did
            assert sorted(seen) == sorted(oracle.moves(behaviour, key[0])), (behaviour, key, seen)
        verdicts[(behaviour, judge)] = dict(per)
    return {"verdicts": verdicts, "cms": cms, "tuples": sorted(tuples)}


def tuple_value(truth, entry, key) -> float:
    return sum(truth["verdicts"][entry][key]) / 2  # the log's reducer: mean over the two epochs


def family_keys(truth, family):
    return [k for k in truth["tuples"] if (k[2] == "N") == (family == "N")]


def css_of(truth, entry, family="D") -> float:
    keys = family_keys(truth, family)
    return sum(tuple_value(truth, entry, k) for k in keys) / len(keys)


def case_bounds(per_case: list[float]) -> tuple[float, float]:
    """A percentile bootstrap over two clusters: every resample mean lies between the two case means, and with
    2,000 draws both extremes (probability 1/4 each) fall beyond the 2.5% and 5% quantiles."""
    return min(per_case), max(per_case)


# ------------------------------------------------------------------ readers of the three renderings


def md_tables(path: Path) -> dict[str, list[pd.DataFrame]]:
    out: dict[str, list[pd.DataFrame]] = defaultdict(list)
    heading, lines = None, path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| ---"):
            header = [c.strip() for c in line.strip("|").split(" | ")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i][2:-2].split(" | ")])
                i += 1
            out[heading].append(pd.DataFrame(rows, columns=header))
            continue
        i += 1
    return out


def html_tables(path: Path) -> dict[str, list[pd.DataFrame]]:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    out: dict[str, list[pd.DataFrame]] = defaultdict(list)
    for table in soup.find_all("table"):
        heading = table.find_previous(["h2", "h3"]).get_text(strip=True)
        header = [th.get_text(strip=True) for th in table.find("thead").find_all("th")]
        rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
        out[heading].append(pd.DataFrame(rows, columns=header))
    return out


@pytest.fixture(scope="module")
def rendered(sweep):
    return md_tables(sweep["out"] / "report.md"), html_tables(sweep["out"] / "report.html")


def heading_of(tables: dict, start: str) -> list[pd.DataFrame]:
    found = [t for h, ts in tables.items() if h.startswith(start) for t in ts]
    assert found, f"no table under a heading starting {start!r}; headings: {list(tables)}"
    return found


def check_table(sweep, rendered, csv: str, heading: str, expected: list[dict], keys: list[str], which: int = 0):
    """Each expected row, cell by cell, in the CSV (values) and in report.md and report.html (as shown)."""
    table = pd.read_csv(sweep["out"] / csv, keep_default_na=False, na_values=[""])
    assert len(table) == len(expected), f"{csv}: {len(table)} rows, expected {len(expected)}\n{table}"
    shown = [heading_of(rendered[0], heading)[which], heading_of(rendered[1], heading)[which]]
    for view in shown:
        assert len(view) == len(expected), f"{heading}: {len(view)} rows shown, expected {len(expected)}"
    for row in expected:
        match = table
        for k in keys:
            match = match[match[k].fillna("").astype(str) == str(row[k])]
        assert len(match) == 1, f"{csv}: no single row for {[row[k] for k in keys]}\n{table[keys]}"
        actual = match.iloc[0]
        for col, value in row.items():
            got = actual[col]
            if (isinstance(value, float) and math.isnan(value)) or value == "":
                assert pd.isna(got) or got == "", f"{csv} {[row[k] for k in keys]} {col}: {got!r}, expected blank"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                assert float(got) == pytest.approx(value), f"{csv} {[row[k] for k in keys]} {col}: {got!r}, expected {value!r}"
            else:
                assert str(got) == str(value), f"{csv} {[row[k] for k in keys]} {col}: {got!r}, expected {value!r}"
        for view in shown:
            hit = view
            for k in keys:
                hit = hit[hit[k] == fmt(row[k]) if row[k] != "" else hit[k].isin(["", "no data"])]
            assert len(hit) == 1, f"{heading}: no single shown row for {[row[k] for k in keys]}"
            for col, value in row.items():
                assert hit.iloc[0][col] == fmt(value), f"{heading} {[row[k] for k in keys]} {col}: {hit.iloc[0][col]!r}, expected {fmt(value)!r}"


# ------------------------------------------------------------------ CSS tables


def test_table2_cms_and_css_with_ranks_within_each_judge(sweep, truth, rendered):
    cms = sum(truth["cms"].values()) / len(truth["cms"])
    expected = []
    for judge in oracle.JUDGES:
        css = {b: css_of(truth, (b, judge)) for b in oracle.CSS_MODELS}
        rank = avg_ranks(css)
        for b in oracle.CSS_MODELS:
            per_case = [tuple_value(truth, (b, judge), k) for k in family_keys(truth, "D")]
            low, high = case_bounds(per_case)
            expected.append({"model": M + b, "judge": M + judge, "run": "", "cms": cms, "css": css[b], "css_ci_low": low,
                             "css_ci_high": high, "tuples": 2, "cases": 2, "cms_rank": 2.5, "css_rank": rank[b]})
    check_table(sweep, rendered, "single_shot_cms_css.csv", "CMS and CSS", expected, ["model", "judge", "run"])


def test_table3_families_with_winners_within_each_judge(sweep, truth, rendered):
    expected = []
    for family in ("D", "N"):
        for judge in oracle.JUDGES:
            css = {b: css_of(truth, (b, judge), family) for b in oracle.CSS_MODELS}
            top = max(css.values())
            for b in oracle.CSS_MODELS:
                low, high = case_bounds([tuple_value(truth, (b, judge), k) for k in family_keys(truth, family)])
                expected.append({"family": family, "model": M + b, "judge": M + judge, "run": "", "css": css[b], "ci_low": low,
                                 "ci_high": high, "tuples": 2, "cases": 2,
                                 "winner": css[b] == top and list(css.values()).count(top) == 1,
                                 "instability": 1.0 if b == "flaky" else 0.0})
    check_table(sweep, rendered, "single_shot_families.csv", "CSS by family", expected, ["family", "model", "judge", "run"])


def test_table4_verdict_shares_over_the_judges_epoch_verdicts(sweep, truth, rendered):
    expected = []
    for b, judge in ENTRIES:
        verdicts = [v for k in family_keys(truth, "D") for v in truth["verdicts"][(b, judge)][k]]
        row = {"model": M + b, "judge": M + judge, "run": ""}
        for name, value in (("wrong", 0.0), ("partial", 0.5), ("correct", 1.0)):
            row[name] = sum(v == value for v in verdicts) / len(verdicts)
            per_case = [sum(v == value for v in truth["verdicts"][(b, judge)][k]) / 2 for k in family_keys(truth, "D")]
            low, high = case_bounds(per_case)
            row[f"{name}_ci"] = f"{low:.2f}-{high:.2f}"
        row |= {"tuples": 2, "verdicts": 4}
        expected.append(row)
    check_table(sweep, rendered, "single_shot_verdicts.csv", "Verdict shares", expected, ["model", "judge", "run"])


def test_cross_judge_pairs_each_models_two_judges(sweep, truth, rendered):
    expected = []
    for b in oracle.CSS_MODELS:
        first, second = sorted(oracle.JUDGES)  # lenient, strict: by name
        a = [v for k in family_keys(truth, "D") for v in truth["verdicts"][(b, first)][k]]
        c = [v for k in family_keys(truth, "D") for v in truth["verdicts"][(b, second)][k]]
        s1, s2 = css_of(truth, (b, first)), css_of(truth, (b, second))
        expected.append({"model": M + b, "run": "", "judge_1": M + first, "judge_2": M + second, "same_replies": False,
                         "agreement": sum(x == y for x, y in zip(a, c, strict=True)) / len(a), "css_judge_1": s1,
                         "css_judge_2": s2, "shift": s2 - s1, "tuples": 2, "verdicts": 4})
    check_table(sweep, rendered, "single_shot_cross_judge.csv", "Cross-judge", expected, ["model", "run"])


def test_negative_controls_movement_is_one_minus_the_judge_score(sweep, truth, rendered):
    expected = []
    for b, judge in ENTRIES:
        per_case = [1 - tuple_value(truth, (b, judge), k) for k in family_keys(truth, "N")]
        movement = sum(per_case) / 2
        low, high = case_bounds(per_case)
        passed = high < 0.05
        expected.append({"model": M + b, "judge": M + judge, "run": "", "movement (1 - judge score)": movement, "ci90_low": low,
                         "ci90_high": high, "equivalent": passed, "tuples": 2,
                         "verdict": "stable" if passed else "FAILS: moves on meaning-preserving edits"})
    check_table(sweep, rendered, "single_shot_controls.csv", "Negative controls", expected, ["model", "judge", "run"])


def test_instability_floor_between_epochs(sweep, truth, rendered):
    expected = [{"model": M + b, "judge": M + j, "run": "", "family": f, "instability": 1.0 if b == "flaky" else 0.0, "samples": 2}
                for b, j in ENTRIES for f in ("D", "N")]
    check_table(sweep, rendered, "single_shot_instability.csv", "Instability floor", expected, ["model", "judge", "run", "family"])


def test_paired_comparisons_within_each_judge(sweep, truth, rendered):
    expected = []
    keys = family_keys(truth, "D")
    for judge in oracle.JUDGES:
        for a, b in combinations(sorted(oracle.CSS_MODELS), 2):
            va = [tuple_value(truth, (a, judge), k) for k in keys]
            vb = [tuple_value(truth, (b, judge), k) for k in keys]
            diffs = [x - y for x, y in zip(va, vb, strict=True)]
            only_a = sum(x == 1 and y < 1 for x, y in zip(va, vb, strict=True))
            only_b = sum(y == 1 and x < 1 for x, y in zip(va, vb, strict=True))
            low, high = case_bounds(diffs)
            expected.append({"judge": M + judge, "model_a": M + a, "run_a": "", "model_b": M + b, "run_b": "", "family": "D",
                             "difference": sum(diffs) / 2, "ci_low": low, "ci_high": high,
                             "mcnemar_p": binom_two_sided(only_a, only_b), "holm_p": binom_two_sided(only_a, only_b), "tuples": 2})
    check_table(sweep, rendered, "single_shot_paired.csv", "Paired model comparisons", expected, ["judge", "model_a", "model_b"])


def test_coverage_counts_the_replaced_rerun_and_the_header_counts_every_log(sweep, truth, rendered):
    expected = [{"model": M + b, "judge": M + j, "run": "", "logs": 1, "tuples": 4, "cases": 2, "epochs": 2,
                 "rerun_rows_dropped": 8 if (b, j) == ("half", "strict") else 0, "samples_without_metadata": 0, "same_cases": True}
                for b, j in ENTRIES]
    check_table(sweep, rendered, "single_shot_coverage.csv", "Coverage", expected, ["model", "judge", "run"])
    text = (sweep["out"] / "report.md").read_text(encoding="utf-8")
    assert "Logs: 9 read, 8 used (1 replaced by a newer complete run of the same entry)" in text


def test_parse_quality_is_keyed_by_model_judge_and_run_without_replaced_runs(sweep, truth, rendered):
    expected = [{"model": M + b, "judge": M + j, "run": "", "replies": 16, "json": 1.0, "invalid": 0.0} for b, j in ENTRIES]
    check_table(sweep, rendered, "css_parse_table.csv", "Parse quality", expected, ["model", "judge", "run"])


def test_usage_per_suite_model_role_and_the_model_behind_each_role(sweep, truth, rendered):
    expected = []
    for (b, j), paths in sorted(sweep["css"].items()):
        samples = [s for p in paths for s in read_eval_log(p).samples]
        model_tokens = sum(s.model_usage[M + b].total_tokens for s in samples)
        judge_in, judge_out, cost = oracle.JUDGE_USAGE[j]
        expected.append({"suite": "css", "model": M + b, "role": "model", "role_model": M + b, "judge": M + j, "run": "",
                         "samples": len(samples), "tokens": model_tokens, "cost": float("nan")})
        expected.append({"suite": "css", "model": M + b, "role": "judge", "role_model": M + j, "judge": M + j, "run": "",
                         "samples": len(samples), "tokens": len(samples) * (judge_in + judge_out),
                         "cost": float("nan") if cost is None else len(samples) * cost})
    for b in oracle.MEDPIC_MODELS:
        n = oracle.GF_N + 2 * oracle.PAIRS
        expected.append({"suite": "medpic", "model": M + b, "role": "model", "role_model": M + b, "judge": "", "run": "",
                         "samples": n, "tokens": n * sum(oracle.MODEL_USAGE), "cost": float("nan")})
    check_table(sweep, rendered, "usage.csv", "Tokens and cost", expected, ["suite", "model", "role", "judge", "run"])


# ------------------------------------------------------------------ MedPIC


def test_medpic_counts_guideline_following_questions(sweep, rendered):
    n = oracle.GF_N + 2 * oracle.PAIRS
    pct = {"right": (100, 100, 100, 0, 100, 100, 100), "gf_only": (50, 100, 0, 100, 0, 0, 0), "wrong": (0, 0, 0, 0, 0, 0, 0)}
    names = ("overall", "GF", "CF", "GF−CF gap (pp)", "activation", "deactivation", "pair")
    table = pd.read_csv(sweep["out"] / "medpic.csv").set_index("model")
    md = heading_of(rendered[0], "MedPIC suite")[0].set_index("model")
    html = heading_of(rendered[1], "MedPIC suite")[0].set_index("model")
    assert len(table) == 3 and len(md) == 3 and len(html) == 3
    for b, values in pct.items():
        for view in (table, md, html):
            row = view.loc[M + b]
            assert int(row["questions"]) == n and int(row["pairs"]) == oracle.PAIRS and int(row["unparseable"]) == 0
            for name, value in zip(names, values, strict=True):
                assert str(row[name]).split(" ")[0] == f"{value:.1f}", (b, name, row[name])
    assert "lack MedPIC metadata" not in (sweep["out"] / "report.md").read_text(encoding="utf-8")


def test_medpic_parse_quality_per_model(sweep, rendered):
    n = oracle.GF_N + 2 * oracle.PAIRS
    expected = [{"model": M + b, "judge": "", "run": "", "replies": n, "json": 1.0} for b in oracle.MEDPIC_MODELS]
    check_table(sweep, rendered, "medpic_parse_table.csv", "Parse quality", expected, ["model", "run"], which=1)


# ------------------------------------------------------------------ per-sample table


def test_samples_table_has_every_sample_with_its_judge_and_verdict(sweep, truth):
    csv = pd.read_csv(sweep["out"] / "samples.csv", keep_default_na=False)
    parquet = pd.read_parquet(sweep["out"] / "samples.parquet")
    n_css = sum(8 * len(p) for p in sweep["css"].values())
    n_medpic = 3 * (oracle.GF_N + 2 * oracle.PAIRS)
    for table in (csv, parquet):
        assert len(table) == n_css + n_medpic
        latest = {p[-1]: key for key, p in sweep["css"].items()}
        for path, (b, j) in latest.items():
            rows = table[table["log"] == path]
            assert len(rows) == 8 and set(rows["judge"]) == {M + j} and set(rows["model"]) == {M + b}
            for r in rows.itertuples():
                key = (r.metadata_case_id, r.metadata_intervention_id, r.metadata_family)
                assert float(r.score_judge_direction) == truth["verdicts"][(b, j)][key][int(r.epoch) - 1]
        # The earlier run a rerun replaced is flagged, every other row is the one the tables rest on.
        earlier = [p for paths in sweep["css"].values() for p in paths[:-1]]
        assert set(table[table["log"].isin(earlier)]["replaced"].astype(str)) == {"True"}
        assert set(table[~table["log"].isin(earlier)]["replaced"].astype(str)) == {"False"}
        assert set(table["used"].astype(str)) == {"True"} and set(table["status"]) == {"success"}


# ------------------------------------------------------------------ side by side


def test_side_by_side_shows_every_recommendation_of_each_arm_with_the_dropped_one_marked(sweep, truth):
    soup = BeautifulSoup((sweep["out"] / "side_by_side.html").read_text(encoding="utf-8"), "html.parser")
    data = json.loads(soup.find("script", id="tuples").string)
    assert len(data["models"]) == len(ENTRIES) and len(data["tuples"]) == len(truth["tuples"])
    base = [[t, t not in oracle.MOVED] for t in oracle.BASE]
    moved = [[t, t not in oracle.BASE] for t in oracle.MOVED]
    same = [[t, False] for t in oracle.BASE]
    for row in data["tuples"]:
        case = row["key"].split(":")[0]
        for column, answer in zip(data["models"], row["answers"], strict=True):
            behaviour = column.split(" · ")[0].removeprefix(M)
            if behaviour in ("always", "half") and oracle.moves(behaviour, case)[0]:
                assert (answer["before"], answer["after"]) == (base, moved), (column, row["key"])
            elif behaviour in ("never", "half"):
                assert (answer["before"], answer["after"]) == (same, same), (column, row["key"])
            else:  # flaky: one epoch moved, the page shows one of them
                assert answer["before"] in (base, same) and len(answer["after"]) == 2


# ------------------------------------------------------------------ the gate


def test_gate_names_judge_and_run_and_says_which_judge_it_could_not_gate(sweep, truth, tmp_path, capsys):
    baseline = sweep["css"][("always", "strict")][-1]
    logs = [p for paths in sweep["css"].values() for p in paths]
    code = main(["report", *logs, "--out", str(tmp_path / "gate"), "--gate", "--baseline", baseline])
    out = capsys.readouterr().out
    keys = family_keys(truth, "D")
    reference = [tuple_value(truth, ("always", "strict"), k) for k in keys]
    failed_any = False
    for b in oracle.CSS_MODELS:
        diffs = [tuple_value(truth, (b, "strict"), k) - r for k, r in zip(keys, reference, strict=True)]
        mean, (low, high) = sum(diffs) / 2, case_bounds(diffs)
        failed = mean < -0.05 and high < 0
        failed_any |= failed
        line = (f"gate {'failed' if failed else 'passed'}: {M}{b} (judge {M}strict) vs baseline {M}always (judge {M}strict), "
                f"family D: difference {mean:+.3f} [{low:+.3f}, {high:+.3f}] over 2 tuples")
        assert line in out, (line, out)
        assert f"GATE NOT APPLIED: {M}{b} (judge {M}lenient): not gated: the baseline has no verdicts of judge {M}lenient" in out
    assert code == (1 if failed_any else 0)
    gate = pd.read_csv(tmp_path / "gate" / "gate.csv")
    assert len(gate) == 8 and gate["gated"].sum() == 4


# ------------------------------------------------------------------ what Inspect's viewer shows


def test_metrics_are_logged_under_their_short_names_and_arm_spans_are_titled_once(sweep):
    for path in [sweep["css"][("always", "strict")][-1], sweep["medpic"]["gf_only"]]:
        log = read_eval_log(path)
        names = [m.name for s in log.results.scores if s.scorer != "registration_check" for m in s.metrics.values()]
        assert names and not [n for n in names if "/" in n], names  # the viewer's columns cut 'clinical_cf/...' to 'clinical_c…'
        keys = {k for s in log.results.scores for k in s.metrics}
        assert {"css", "css_stderr", "control_stability"} <= keys or {"gf_accuracy", "cf_accuracy", "gf_cf_gap"} <= keys
    medpic = read_eval_log(sweep["medpic"]["gf_only"]).results.scores[0].metrics
    assert medpic["gf_accuracy"].value == 1.0 and medpic["cf_accuracy"].value == 0.0 and medpic["gf_cf_gap"].value == 1.0
    sample = read_eval_log(sweep["css"][("always", "strict")][-1]).samples[0]
    spans = [(e.type, e.name) for e in sample.events if e.event == "span_begin" and e.name in (BASELINE_SPAN, COUNTERFACTUAL_SPAN)]
    assert spans == [("arm", BASELINE_SPAN), ("arm", COUNTERFACTUAL_SPAN)]
    assert all(t != n for t, n in spans)  # Inspect titles a span 'type: name'


def test_a_side_by_side_page_over_its_size_limit_is_split_into_parts_with_an_index(sweep, truth, tmp_path):
    rows = read_logs([p[-1] for p in sweep["css"].values()], mode="summaries").suite("css")
    limit = 40_000  # the whole page is about 54 kB
    index = write_side_by_side(rows, tmp_path / "side_by_side.html", limit=limit)
    parts = sorted(tmp_path.glob("side_by_side_part*.html"))
    assert len(parts) >= 2 and all(p.stat().st_size <= limit for p in parts)
    links = BeautifulSoup(index.read_text(encoding="utf-8"), "html.parser").find_all("a")
    assert [a["href"] for a in links] == [p.name for p in parts]
    keys = []
    for part in parts:
        data = json.loads(BeautifulSoup(part.read_text(encoding="utf-8"), "html.parser").find("script", id="tuples").string)
        assert len(data["models"]) == len(ENTRIES)
        keys += [t["key"] for t in data["tuples"]]
    assert sorted(keys) == sorted(f"{c}:{i}" for c, i, _ in truth["tuples"])  # every tuple once, none lost
