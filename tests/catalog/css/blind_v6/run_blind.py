"""Blind round v6 (issue 43): take corpus.yaml's packets through the documented route and count the failures.

Route (README.md, docs/counterfactual-sets.md): `catalog template` for the user's own type (its <TODO>s filled as a
clinician would, then `catalog check` / `catalog lock`), `cases import --catalog`, `cases answer` (a simulated user
who confirms what is right and corrects what is wrong, as the packet says), `counterfactuals build --editor regex
--catalog`. Counted per packet, against the truths written before the importer was first run:

  silent_wrong      a field pre-filled with a wrong value and not marked weak (or the consensus, which is not asked)
  weak_wrong        a wrong pre-fill marked weak (asked, but suggesting the wrong answer)
  never_asked       a deciding field or a marker the packet reports with no question at all
  markers_dropped   a marker the user answered (or --set) that is missing from cases.jsonl
  answer_refused    a truthful answer `cases answer` refused
  broken_drafts     a draft that breaks the packet: structure no longer parses, an unrelated statement deleted,
                    more than half the packet deleted, an inserted event dated before a later event or after the board
  must_not_applied  a draft for an intervention the truth says must not apply
  must_apply_missed a must-apply intervention with no draft (informational)

Usage: python tests/catalog/css/blind_v6/run_blind.py [--workdir DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
CLI = [sys.executable, "-m", "clinical_cf.cli"]
EXT = {"text": ".txt", "json": ".json", "hl7": ".hl7", "csv": ".csv", "markdown": ".md"}
STAGING_SYSTEM = {
    "v6-nl-letter-cervix": ["figo"],
    "v6-pt-letter-testis": ["ajcc", "testicular_s"],
    "v6-pl-protocol-thymoma": ["masaoka_koga"],
    "v6-sv-markdown-meso": ["ajcc"],
    "v6-de-letter-cholangio": ["ajcc"],
    "v6-it-portal-cholangio": ["ajcc"],
    "v6-hl7-astrocytoma": ["who_cns"],
    "v6-es-csv-ovary": ["figo"],
    "v6-en-two-mdts-tongue": ["ajcc"],
    "v6-fhir-vulva": ["figo"],
    "v6-en-soap-dlbcl": ["none"],
    "v6-nl-synoptic-breast": ["ajcc"],
}
OPERATION = {  # the definitive operation of the resected packets, as the user answers it
    "v6-pt-letter-testis": "radical inguinal orchiectomy 2026-02-02",
    "v6-es-csv-ovary": "interval cytoreductive surgery 2026-02-12",
    "v6-fhir-vulva": "radical local excision of the vulva 2026-01-29",
}
TODO_FILL = {
    "holds": "Advanced intrahepatic cholangiocarcinoma after first-line gemcitabine-cisplatin-durvalumab.",
    "source": "NCCN Biliary Tract Cancers v.2026; ESMO biliary tract cancer guideline 2023; FIGHT-202 (Lancet Oncol 2020).",
    "expected_change": "The board's plan changes accordingly: second-line FOLFOX or a trial instead of an FGFR inhibitor.",
    "rationale": "FGFR2 fusions decide FGFR inhibitors after first line; stage and resection decide intent.",
}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=900)


def norm_stage(v) -> str:
    s = str(v).upper().replace("STAGE", "").replace("FIGO", "").replace("UICC", "").replace("AJCC", "").strip()
    return re.sub(r"\s+", " ", s)


def marker_key(name: str) -> str:
    return re.sub(r"[^a-z0-9/]", "", name.lower())


def fill_template(path: Path) -> None:
    """Fill each <TODO> as a clinician would (the D operation with the type's own operation)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"<TODO: the definitive operation for [^>]*>", "right hepatectomy", text)
    for key, val in TODO_FILL.items():
        text = re.sub(rf"({key}: )'<TODO[^>]*>'", lambda m, v=val: m.group(1) + "'" + v.replace("'", "''") + "'", text)
    text = re.sub(r"<TODO[^>]*>", "see the catalog rationale", text)
    path.write_text(text, encoding="utf-8")


DATE_PATTERNS = [
    (re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b"), lambda m: (int(m[1]), int(m[2]), int(m[3]))),
    (re.compile(r"\b(\d{1,2})[./-](\d{1,2})[./-](20\d\d)\b"), lambda m: (int(m[3]), int(m[2]), int(m[1]))),
    (re.compile(r"\b(20\d\d)(\d\d)(\d\d)\b"), lambda m: (int(m[1]), int(m[2]), int(m[3]))),
]
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTH_RE = re.compile(
    r"\b(\d{1,2}) (" + "|".join(MONTHS) + r")\w* (20\d\d)\b|\b(" + "|".join(MONTHS) + r")\w* (\d{1,2}),? (20\d\d)\b", re.I
)


def dates_in(text: str) -> set[dt.date]:
    out = set()
    for rx, f in DATE_PATTERNS:
        for m in rx.finditer(text):
            try:
                out.add(dt.date(*f(m)))
            except ValueError:
                pass
    for m in MONTH_RE.finditer(text):
        try:
            if m[1]:
                out.add(dt.date(int(m[3]), MONTHS[m[2].lower()[:3]], int(m[1])))
            else:
                out.add(dt.date(int(m[6]), MONTHS[m[4].lower()[:3]], int(m[5])))
        except (ValueError, KeyError):
            pass
    return out


def joined(sections: dict, order: list) -> str:
    return "\n".join(sections.get(k, "") for k in order if sections.get(k))


def structure_problems(structure: str, base: dict, cf: dict, order: list) -> list[str]:
    probs = []
    for sec in order:
        b, c = base.get(sec, ""), cf.get(sec, "")
        if b == c or not b:
            continue
        if structure == "json":
            try:
                json.loads(b)
            except ValueError:
                pass
            else:
                try:
                    json.loads(c)
                except ValueError as exc:
                    probs.append(f"[{sec}] JSON no longer parses: {exc}")
        if structure == "hl7":
            seg = re.compile(r"^[A-Z][A-Z0-9]{2}\|")
            nb = sum(1 for ln in b.splitlines() if seg.match(ln.strip()))
            for ln in c.splitlines():
                if ln.strip() and nb and not seg.match(ln.strip()):
                    probs.append(f"[{sec}] HL7 line without a segment id: {ln[:80]!r}")
        if structure == "csv":
            for ln in c.splitlines():
                if ln.strip() and re.search(r"(?m)^[^;:\n]+;", b) and ";" not in ln:
                    probs.append(f"[{sec}] CSV row without its separator: {ln[:80]!r}")
                if ln.count('"') % 2:
                    probs.append(f"[{sec}] CSV row with an unbalanced quote: {ln[:80]!r}")
        if structure == "markdown":
            widths = {ln.strip().count("|") for ln in b.splitlines() if ln.strip().startswith("|")}
            for ln in c.splitlines():
                s = ln.strip()
                if s.startswith("|") and widths and s.count("|") not in widths:
                    probs.append(f"[{sec}] markdown row with another cell count: {s[:80]!r}")
                if widths and "|" in s and not s.startswith("|"):
                    probs.append(f"[{sec}] markdown row broken: {s[:80]!r}")
    return probs


TARGETS = {  # the markers an intervention may rewrite or remove; any other marker's statement is unrelated
    "A1": {"HER2"},
    "A2": {"HER2"},
    "A3": {"ER", "PR"},
    "A4": {"PD-L1"},
    "C1": {"HER2", "ER", "PR", "PD-L1", "CLDN18"},
    "C2": {"EGFR", "ALK", "ROS1", "PD-L1", "KRAS", "BRAF", "MET", "RET"},
    "C3": {"KRAS", "NRAS", "BRAF", "MSI", "MMR"},
    "C4": {"BRAF"},
    "U_": {"FGFR2"},
}


def draft_damage(p: dict, iid: str, base: dict, new: dict, order: list) -> list[str]:
    """Damage a reviewer would have to repair, found without knowing the intervention's wording:
    a line joined into another, a statement cut into a fragment, another marker's result deleted."""
    probs = []
    targets = next((v for k, v in TARGETS.items() if iid.startswith(k)), set())
    for sec in order:
        b, c = base.get(sec, ""), new.get(sec, "")
        if b == c:
            continue
        blines = [ln.strip() for ln in b.splitlines() if ln.strip()]
        clines = [ln.strip() for ln in c.splitlines() if ln.strip()]
        cset = set(clines)
        for ln in blines:
            if ln in cset or len(ln) < 12:
                continue
            host = next((x for x in clines if ln in x and x != ln), None)
            if host is not None:
                probs.append(f"[{sec}] line joined into another: {ln[:60]!r}")
        bset = set(blines)
        for ln in clines:
            if ln in bset:
                continue
            if ln.count("(") != ln.count(")") and all(x.count("(") == x.count(")") for x in blines):
                probs.append(f"[{sec}] statement cut into a fragment: {ln[:80]!r}")
            elif re.search(r"(?:^|\s|\))[).]\d|^[a-z][^.]{0,40}\)\s*$|^\([\d./-]+\)$", ln):
                probs.append(f"[{sec}] statement cut into a fragment: {ln[:80]!r}")
    ct = joined(new, order).lower()
    for name, m in p["expected"]["biomarkers"].items():
        names = list(m["names"])
        if any(n.upper() in targets for n in names + [name]):
            continue
        for ln in joined(base, order).splitlines():
            low = ln.strip().lower()
            if low and any(re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", low) for n in names) and low not in ct:
                probs.append(f"deleted or rewrote another marker's statement ({name}): {ln.strip()[:60]!r}")
    return probs


def user_must_not(pkt: dict, iid: str, family: str) -> bool:
    """A user intervention the packet's truth rules out (by family), beyond the listed ids."""
    e = pkt["expected"]
    if not iid.startswith("U_"):
        return False
    if family == "E":
        return bool(e["metastatic"])
    if "remove_resection" in iid:
        return not e["resected"]
    if "add_resection" in iid:
        return bool(e["resected"]) or bool(e["metastatic"])
    if family == "A":
        fg = e["biomarkers"].get("FGFR2")
        return not fg or "positive" not in fg["values"]
    return False


def run(workdir: Path) -> dict:
    corpus = yaml.safe_load((HERE / "corpus.yaml").read_text())
    packets = corpus["packets"]
    pdir = workdir / "packets"
    pdir.mkdir(parents=True, exist_ok=True)
    files = []
    for p in packets:
        f = pdir / (p["id"] + EXT[p["structure"]])
        f.write_text(p["text"])
        files.append(str(f))
    log: dict = {"commands": []}

    # the user's own catalog, from the template
    uc = corpus["user_catalog"]
    ucat = workdir / "user_catalog.yaml"
    args = ["catalog", "template", "--cancer-type", uc["cancer_type"], "--marker", uc["marker"], "--out", str(ucat)]
    for a in uc["agents"]:
        args += ["--agent", a]
    for s in uc["sites"]:
        args += ["--site", s]
    r = cli(*args, cwd=workdir)
    log["commands"].append(["template", r.returncode, r.stdout[-2000:], r.stderr[-2000:]])
    fill_template(ucat)
    r = cli("catalog", "lock", str(ucat), cwd=workdir)
    log["commands"].append(["lock", r.returncode, r.stdout[-2000:], r.stderr[-2000:]])
    r = cli("catalog", "check", str(ucat), cwd=workdir)
    log["commands"].append(["check", r.returncode, r.stdout[-2000:], r.stderr[-2000:]])
    cat_args = ["--catalog", str(ucat)] if r.returncode == 0 else []
    log["user_catalog_ok"] = r.returncode == 0

    out = workdir / "cases.jsonl"
    r = cli("cases", "import", *files, "--out", str(out), *cat_args, cwd=workdir)
    log["commands"].append(["import", r.returncode, r.stdout[-6000:], r.stderr[-3000:]])
    qpath = workdir / "cases.questions.jsonl"
    questions = {}
    if qpath.exists():
        for ln in qpath.read_text().splitlines():
            if ln.strip():
                q = json.loads(ln)
                questions[q["case_id"]] = q

    if qpath.exists():
        (workdir / "questions.import.jsonl").write_text(qpath.read_text())  # the importer's own output, kept
    results = {}
    argv: list[str] = []
    for p in packets:
        pid, e = p["id"], p["expected"]
        res = {
            k: []
            for k in (
                "silent_wrong",
                "weak_wrong",
                "never_asked",
                "markers_dropped",
                "answer_refused",
                "broken_drafts",
                "must_not_applied",
                "must_apply_missed",
                "outcome_not_read",
                "answered_on_retry",
                "drafts",
            )
        }
        results[pid] = res
        q = questions.get(pid)
        if q is None:
            res["never_asked"].append("the whole packet (no questions written)")
            continue
        qs, draft = q["questions"], q.get("draft") or {}
        truth = {
            "cancer_type": e["cancer_type"],
            "sex": [e["sex"]],
            "age": [e["age"]],
            "stage": [norm_stage(s) for s in e["stage"]],
            "metastatic": [e["metastatic"]],
            "resected": [e["resected"]],
            "prior_lines": e["prior_lines"],
            "board_date": [e["board_date"]],
            "staging_system": STAGING_SYSTEM[pid],
        }
        sets, confirms = [], []
        for field, ok in truth.items():
            item = qs.get(field)
            if item is None:
                # not asked: filled in the draft without a question (right: fine; wrong: silent), or never asked
                v = draft.get(field)
                vv = norm_stage(v) if field == "stage" and v is not None else v
                if v is None:
                    if field != "staging_system":
                        res["never_asked"].append(field)
                        sets.append((field, ok[0]))  # a careful user adds it
                elif vv not in ok:
                    res["silent_wrong"].append(f"{field}={v!r} (truth {ok[0]!r}) filled without a question")
                continue
            v = item.get("value")
            vv = norm_stage(v) if field == "stage" and v is not None else v
            if v is not None and vv not in ok:
                (res["weak_wrong"] if item.get("weak") else res["silent_wrong"]).append(
                    f"{field}={v!r} (truth {ok[0]!r}) <- {str(item.get('evidence'))[:140]}"
                )
            if v is not None and vv in ok:
                confirms.append(f"{pid}:{field}")
            else:
                sets.append((field, ok[0]))
        # markers: every question on a marker is read against the truth of that marker (any of its names)
        asked = {marker_key(k.split(".", 1)[1]): k for k in qs if k.startswith("biomarkers.")}
        seen = set()
        for name, m in e["biomarkers"].items():
            hits = [asked[marker_key(n)] for n in m["names"] if marker_key(n) in asked]
            if not hits:
                res["never_asked"].append(f"biomarkers.{name}")
                sets.append((f"biomarkers.{name}", m["answer"]))  # a careful user adds it
                continue
            for hit in dict.fromkeys(hits):
                seen.add(hit)
                v = qs[hit].get("value")
                if v is not None and v not in m["values"]:
                    (res["weak_wrong"] if qs[hit].get("weak") else res["silent_wrong"]).append(
                        f"{hit}={v!r} (truth {m['answer']!r}) <- {str(qs[hit].get('evidence'))[:140]}"
                    )
                if v is not None and v in m["values"]:
                    confirms.append(f"{pid}:{hit}")
                else:
                    sets.append((hit, m["answer"]))
        for hit in set(asked.values()) - seen:
            # a marker the packet does not report: only 'not_tested' (or asked) is right
            v = qs[hit].get("value")
            if v not in (None, "not_tested"):
                (res["weak_wrong"] if qs[hit].get("weak") else res["silent_wrong"]).append(
                    f"{hit}={v!r} (the packet does not report it) <- {str(qs[hit].get('evidence'))[:140]}"
                )
            sets.append((hit, "not_tested"))

        # the consensus: asked (value unknown) or pre-filled; a wrong pre-fill without a question is silent
        def cons_ok(text: str, e: dict = e) -> bool:
            t = text.lower()
            return e["consensus"].lower() in t and not any(w.lower() in t for w in e["consensus_not"])

        if "consensus" in qs:
            cv = qs["consensus"].get("value")
            if cv in (None, "unknown"):
                res["outcome_not_read"].append(f"consensus asked although the packet states {e['consensus']!r}")
                sets.append(("consensus", e["consensus"]))
            elif not cons_ok(str(cv)):
                (res["weak_wrong"] if qs["consensus"].get("weak") else res["silent_wrong"]).append(
                    f"consensus={cv!r} (truth: contains {e['consensus']!r})"
                )
                sets.append(("consensus", e["consensus"]))
            else:
                confirms.append(f"{pid}:consensus")
        else:
            cons = " ; ".join(c.get("treatment") or "" for c in draft.get("consensus") or [])
            if not cons_ok(cons):
                res["silent_wrong"].append(f"consensus={cons[:120]!r} filled without a question (truth: contains {e['consensus']!r})")
        # the remaining questions (stage_date, operation ...): confirm a pre-fill, else answer 'unknown'/'none'
        for field, item in qs.items():
            if field in truth or field.startswith("biomarkers.") or field == "consensus":
                continue
            if field == "operation":
                op = OPERATION.get(pid, "none")
                if item.get("value") is None or (item.get("value") == "none") != (op == "none"):
                    sets.append((field, op))
                else:
                    confirms.append(f"{pid}:{field}")
            elif item.get("value") is not None:
                confirms.append(f"{pid}:{field}")
            else:
                sets.append((field, "unknown"))
        if "staging_system" not in qs and truth["staging_system"][0] != "ajcc":
            sets.append(("staging_system", truth["staging_system"][0]))
        for c in confirms:
            argv += ["--confirm", c]
        for field, val in sets:
            val = "true" if val is True else "false" if val is False else str(val)
            argv += ["--set", f"{pid}:{field}={val}"]
    # one answer call for every case, as the docs show; a case it leaves open is named in its output
    r = cli("cases", "answer", str(qpath), "--out", str(out), *cat_args, *argv, cwd=workdir)
    log["commands"].append(["answer", r.returncode, r.stdout[-6000:], r.stderr[-6000:]])
    answer_out = r.stdout + r.stderr

    def still_open(text: str, pid: str) -> str | None:
        m = re.search(rf"(?m)^\s*{re.escape(pid)}: \d+ open:.*?(?=^\s*v6-|^answer them|\Z)", text, re.S)
        return m.group(0).strip() if m else None

    for p in packets:
        pid = p["id"]
        first = still_open(answer_out, pid)
        if not first:
            continue
        # a user's second try: the other accepted stage values, in each staging system the packet allows
        fixed = None
        for stage in p["expected"]["stage"]:
            for system in STAGING_SYSTEM[pid]:
                r = cli(
                    "cases",
                    "answer",
                    str(qpath),
                    "--out",
                    str(out),
                    *cat_args,
                    "--set",
                    f"{pid}:stage={stage}",
                    "--set",
                    f"{pid}:staging_system={system}",
                    cwd=workdir,
                )
                if not still_open(r.stdout + r.stderr, pid):
                    fixed = f"stage={stage} staging_system={system}"
                    break
            if fixed:
                break
        results[pid]["answer_refused" if not fixed else "answered_on_retry"].append(
            first[:400] + (f" -> accepted with {fixed}" if fixed else "")
        )

    cases = {}
    if out.exists():
        for ln in out.read_text().splitlines():
            if ln.strip():
                c = json.loads(ln)
                cases[c["case_id"]] = c
    for p in packets:
        res = results[p["id"]]
        c = cases.get(p["id"])
        if c is None:
            res["markers_dropped"].append("the whole case (not in cases.jsonl)")
            continue
        have = {marker_key(k) for k in (c.get("biomarkers") or {})}
        for name, m in p["expected"]["biomarkers"].items():
            if m["answer"] == "not_tested":
                continue  # a marker answered as not tested may be left out of the case
            if not any(marker_key(n) in have for n in m["names"]):
                res["markers_dropped"].append(name)

    cf = workdir / "cf"
    r = cli("counterfactuals", "build", "--cases", str(out), "--editor", "regex", "--out", str(cf), *cat_args, cwd=workdir)
    log["commands"].append(["build", r.returncode, r.stdout[-3000:], r.stderr[-3000:]])
    entries, rejected = [], []
    if (cf / "counterfactuals.jsonl").exists():
        entries = [json.loads(x) for x in (cf / "counterfactuals.jsonl").read_text().splitlines() if x.strip()]
    if (cf / "rejected.jsonl").exists():
        rejected = [json.loads(x) for x in (cf / "rejected.jsonl").read_text().splitlines() if x.strip()]
    by_pid = {p["id"]: p for p in packets}
    produced: dict[str, set] = {}
    for ent in entries:
        pid = ent["case_id"]
        p = by_pid.get(pid)
        if p is None:
            continue
        res, iid = results[pid], ent["intervention_id"]
        produced.setdefault(pid, set()).add(iid)
        if iid.startswith("N"):
            continue
        order = ent.get("order") or list(ent["baseline_sections"])
        base, new = ent["baseline_sections"], ent["counterfactual_sections"]
        bt, ct = joined(base, order), joined(new, order)
        res["drafts"].append(iid)
        probs = structure_problems(p["structure"], base, new, order)
        for k in p["keep"]:
            if k.lower() in bt.lower() and k.lower() not in ct.lower():
                probs.append(f"deleted unrelated statement {k!r}")
        if len(ct) < 0.5 * len(bt):
            probs.append(f"deleted {100 - 100 * len(ct) // max(1, len(bt))}% of the packet")
        board = dt.date.fromisoformat(p["expected"]["board_date"])
        lo = dt.date.fromisoformat(p["min_event_date"])
        for d in sorted(dates_in(ct) - dates_in(bt)):
            if ent["family"] in "BDE" and d < lo:
                probs.append(f"inserted event dated {d} before the packet's {lo}")
            if d > board:
                probs.append(f"inserted event dated {d} after the board {board}")
        if probs:
            res["broken_drafts"].append(f"{iid}: " + "; ".join(probs))
        probs_extra = draft_damage(p, iid, base, new, order)
        if probs_extra:
            res["broken_drafts"].append(f"{iid}: " + "; ".join(probs_extra))
        if iid.lower() in {x.lower() for x in p["must_not_apply"]} or user_must_not(p, iid, ent["family"]):
            res["must_not_applied"].append(iid)
    for p in packets:
        for iid in p["must_apply"]:
            if iid.lower() not in {x.lower() for x in produced.get(p["id"], set())}:
                why = [
                    x.get("reasons") or x.get("reason")
                    for x in rejected
                    if str(x.get("tuple_id", "")).lower() == f"{p['id']}:{iid}".lower()
                ]
                results[p["id"]]["must_apply_missed"].append(f"{iid} {str(why)[:200] if why else '(not eligible)'}")
    totals = {k: sum(len(r[k]) for r in results.values()) for k in next(iter(results.values()))}
    totals["packets"] = len(packets)
    totals["packets_clean"] = sum(
        1
        for r in results.values()
        if not any(r[k] for k in ("silent_wrong", "never_asked", "markers_dropped", "broken_drafts", "must_not_applied"))
    )
    return {"totals": totals, "per_packet": results, "log": log, "entries": entries, "rejected": rejected}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    a = ap.parse_args()
    wd = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="blind_v6_"))
    wd.mkdir(parents=True, exist_ok=True)
    out = run(wd)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    for pid, r in out["per_packet"].items():
        print(f"== {pid}")
        for k, v in r.items():
            if v and k != "drafts":
                for x in v:
                    print(f"  {k}: {x}")
        print(f"  drafts: {r['drafts']}")
    print("TOTALS", json.dumps(out["totals"]))


if __name__ == "__main__":
    main()
