"""A frozen set's review is one locked read-modify-write: no review that says it recorded its decisions loses them.

The interleaving probe runs a second `counterfactuals review` while the first is between reading the set and
writing it back (the first's read is the hook), the race two reviewers on one shared folder produce. A review
that cannot take the set waits, then fails naming the review that holds it; one that exits 0 has its decisions
in the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import clinical_cf.catalog.css.counterfactuals as counterfactuals
import clinical_cf.core.locking as locking
from clinical_cf.catalog.css.counterfactuals import FrozenCounterfactual
from clinical_cf.cli import main
from clinical_cf.core.locking import exclusive
from helpers import HANDWRITTEN_CASES


def _decision(row: dict, verdict: str, reviewer: str) -> str:
    """One line of decisions.jsonl as review.html saves it: bound to the entry's content hash."""

    content = FrozenCounterfactual.model_validate(row).content_sha256
    return json.dumps({"tuple_id": row["tuple_id"], "decision": verdict, "content_sha256": content, "reviewer": reviewer}) + "\n"


@pytest.fixture
def frozen_set(tmp_path):
    assert main(["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--families", "AD",
                 "--out", str(tmp_path / "set")]) == 0
    path = tmp_path / "set" / "counterfactuals.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) >= 2
    first, second = tmp_path / "alice.jsonl", tmp_path / "bob.jsonl"
    first.write_text(_decision(rows[0], "approved", "alice"))
    second.write_text(_decision(rows[1], "rejected", "bob"))
    return path, rows, first, second


def _recorded(path) -> dict[str, str | None]:
    return {r["tuple_id"]: r.get("reviewer") for r in map(json.loads, path.read_text().splitlines())}


def test_a_review_during_another_review_never_loses_decisions_it_reported(frozen_set, monkeypatch, capsys):
    path, rows, alice, bob = frozen_set
    monkeypatch.setattr(locking, "WAIT_SECONDS", 0.3, raising=False)
    real_load = counterfactuals.load_jsonl
    nested: dict[str, object] = {}

    def load_then_race(file, *args, **kwargs):
        loaded = real_load(file, *args, **kwargs)
        if str(file) == str(path) and "code" not in nested:
            nested["code"] = "running"
            nested["code"] = main(["counterfactuals", "review", str(path), "--decisions", str(bob)])
            nested["err"] = capsys.readouterr().err
        return loaded

    monkeypatch.setattr(counterfactuals, "load_jsonl", load_then_race)
    first = main(["counterfactuals", "review", str(path), "--decisions", str(alice)])
    err = capsys.readouterr().err
    assert first == 0, err
    recorded = _recorded(path)
    assert recorded[rows[0]["tuple_id"]] == "alice"
    if nested["code"] == 0:
        assert recorded[rows[1]["tuple_id"]] == "bob", "bob's review exited 0 but its decision was overwritten"
    else:
        assert nested["code"] == 2 and "Traceback" not in nested["err"], nested
        assert "review" in nested["err"] and str(os.getpid()) in nested["err"] and path.name in nested["err"], nested["err"]
        # Run again once the first is done: both decisions stand.
        monkeypatch.setattr(counterfactuals, "load_jsonl", real_load)
        assert main(["counterfactuals", "review", str(path), "--decisions", str(bob)]) == 0
        recorded = _recorded(path)
        assert recorded[rows[0]["tuple_id"]] == "alice" and recorded[rows[1]["tuple_id"]] == "bob"
    assert main(["counterfactuals", "lock", str(path)]) == 0  # the set still matches its lock and validates


def test_a_review_while_another_process_holds_the_set_fails_naming_it(frozen_set, monkeypatch, capsys):
    path, rows, alice, _ = frozen_set
    before = path.read_bytes()
    monkeypatch.setattr(locking, "WAIT_SECONDS", 0.5, raising=False)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from clinical_cf.core.locking import exclusive
            with exclusive({str(path)!r}, "counterfactuals review"):
                print("held", flush=True)
                sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main(["counterfactuals", "review", str(path), "--decisions", str(alice)])
        err = capsys.readouterr().err
    finally:
        holder.communicate("", timeout=30)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 2, err  # "waiting ...", then why not
    assert str(holder.pid) in err and "counterfactuals review" in err and path.name in err, err
    assert path.read_bytes() == before  # nothing recorded by the refused review
    assert main(["counterfactuals", "review", str(path), "--decisions", str(alice)]) == 0  # released: it runs


def test_relocking_a_set_under_review_waits_for_the_review(frozen_set, monkeypatch, capsys):
    path, *_ = frozen_set
    monkeypatch.setattr(locking, "WAIT_SECONDS", 0.3, raising=False)

    with exclusive(path, "counterfactuals review"):
        assert main(["counterfactuals", "lock", str(path)]) == 2
    assert "counterfactuals review" in capsys.readouterr().err
