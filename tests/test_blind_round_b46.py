"""Blind round b46: hostile probes in classes issue 46 implies but does not name, written from the README, docs/ and
`--help` only (never from the code under test). Each probe states, before it runs, what a user should see:

- OK: the command does what it documents;
- clean error: exit non-zero with one short message naming the argument or file, no traceback;
- never: a traceback, a hang, a value echoed in full (more than its documented 3-character prefix), a raw control
  character printed, a file written outside `--out` or into bundled data, a user's file changed.

A probe that fails today is `xfail(strict=False)` with the class it fails in (traceback / silent / unclear / hang /
unsafe), so the suite stays green and a fix shows up as XPASS.

Measured on i46 at 44a9cd4 (87 probes): 71 right (OK 27, clean error 44), 16 wrong: traceback 12, silent 2,
unsafe 2, unclear 0, hang 0.
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import HANDWRITTEN_CASES, recommendations_json

pytestmark = pytest.mark.slow  # CLI subprocesses and small evals

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CLI = [str(BIN / "clinical-cf")]
INSPECT = [str(BIN / "inspect")]
BUNDLED = ROOT / "catalog"
PACKET = ROOT / "tests/fixtures/packets/text/mdt-gastric.txt"
PACKET = PACKET if PACKET.exists() else None
CATALOG = BUNDLED / "css/interventions.yaml"


def xfail(cls: str, why: str):
    return pytest.mark.xfail(strict=False, reason=f"{cls}: {why}")


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("INSPECT_EVAL_MODEL", None)
    env.update(
        INSPECT_LOG_DIR=str(tmp_path / "logs"),
        INSPECT_CACHE_DIR=str(tmp_path / "icache"),
        CLINICAL_CF_CACHE_DIR=str(tmp_path / "ccache"),
        NO_COLOR="1",
        COLUMNS="200",
    )
    env.update(extra)
    return env


def run(args, tmp_path, *, timeout=120, cwd=None, env=None, stdin=subprocess.DEVNULL, preexec=None, cmd=CLI):
    proc = subprocess.run(
        [*cmd, *args],
        cwd=cwd or tmp_path,
        env=env or env_for(tmp_path),
        stdin=stdin,
        capture_output=True,
        timeout=timeout,
        preexec_fn=preexec,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def no_traceback(out: str, err: str) -> None:
    assert "Traceback (most recent call last)" not in out + err, (out + err)[-3000:]


def clean_error(rc: int, out: str, err: str, *names: str, max_lines: int = 3) -> None:
    """Exit non-zero, no traceback, a short message naming each of `names`."""
    no_traceback(out, err)
    assert rc != 0, (rc, out[-1000:], err[-1000:])
    msg = err.strip() or out.strip()
    lines = [ln for ln in msg.splitlines() if ln.strip() and not ln.startswith("usage:") and not ln.startswith("  ")]
    assert 1 <= len(lines) <= max_lines, msg[-2000:]
    for name in names:
        assert name in msg, (name, msg[-2000:])


def no_raw_controls(text: str) -> None:
    bad = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0 or c in "\u202e\u2066\u2067\u2068\u2069"]
    assert not bad, repr(text[-2000:])


def not_echoed(text: str, value: str) -> None:
    assert value not in text, f"value of length {len(value)} echoed in full"
    assert len(text) < 4000, f"{len(text)} characters of output for one refused value"


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def bundled_before():
    return tree(BUNDLED)


def bundled_unchanged(before) -> None:
    after = tree(BUNDLED)
    assert after == before, sorted(set(after) ^ set(before)) or [k for k in after if after[k] != before.get(k)]


def packet_text() -> str:
    if PACKET is not None:
        return PACKET.read_text()
    return (
        "Diagnosis: Invasive ductal carcinoma of the left breast, stage IIA, diagnosed 02/2025.\n"
        "Biomarkers: ER 0%, PR 0%, HER2 3+ by IHC.\nProcedures: Left lumpectomy 03/02/2025.\n"
        "Plan: adjuvant trastuzumab.\n"
    )


# ------------------------------------------------------------------------------------------------ argument values


def test_01_nul_byte_in_a_path_argument(tmp_path, capsys):
    """Expected: clean error naming the path argument (exit 2), not ValueError: embedded null byte."""
    from clinical_cf.cli import main  # deferred: probe-only

    try:
        rc = main(["validate", "cases\x00.jsonl"])
    except SystemExit as e:
        rc = e.code
    cap = capsys.readouterr()
    clean_error(rc, cap.out, cap.err)
    no_raw_controls(cap.out + cap.err)


def test_02_nul_byte_in_cases_import_out(tmp_path, capsys):
    """Expected: clean error naming --out, nothing written."""
    from clinical_cf.cli import main  # deferred: probe-only

    packet = tmp_path / "p.txt"
    packet.write_text(packet_text())
    try:
        rc = main(["cases", "import", str(packet), "--out", str(tmp_path / "ca\x00ses.jsonl")])
    except SystemExit as e:
        rc = e.code
    cap = capsys.readouterr()
    clean_error(rc, cap.out, cap.err, "--out")
    no_raw_controls(cap.out + cap.err)


def test_03_100kb_path_argument_is_not_echoed(tmp_path):
    """Expected: clean error naming the file (too long), the 100 kB value not echoed in full."""
    value = "a" * 100_000
    rc, out, err = run(["validate", value], tmp_path)
    clean_error(rc, out, err)
    not_echoed(out + err, value)


def test_04_100kb_numeric_option_is_not_echoed(tmp_path):
    """Expected: clean error naming --margin, value shown by its prefix and length."""
    value = "9" * 100_000
    rc, out, err = run(["report", str(tmp_path), "--out", str(tmp_path / "r"), "--margin", value], tmp_path)
    clean_error(rc, out, err, "--margin")
    not_echoed(out + err, value)


def test_05_100kb_families_value_is_not_echoed(tmp_path):
    """Expected: clean error naming --families, not echoed in full."""
    value = "Z" * 100_000
    rc, out, err = run(["catalog", "summary", "--families", value], tmp_path)
    clean_error(rc, out, err, "--families")
    not_echoed(out + err, value)


def test_06_huge_limit(tmp_path):
    """Expected: clean error naming --limit (range 1 to 1,000,000)."""
    rc, out, err = run(
        [
            "counterfactuals",
            "build",
            "--cases",
            str(HANDWRITTEN_CASES),
            "--editor",
            "regex",
            "--out",
            str(tmp_path / "cf"),
            "--limit",
            "1" + "0" * 40,
        ],
        tmp_path,
    )
    clean_error(rc, out, err, "--limit")
    assert not (tmp_path / "cf").exists()


def test_07_negative_limit(tmp_path):
    """Expected: clean error naming --limit, nothing written."""
    rc, out, err = run(
        [
            "counterfactuals",
            "build",
            "--cases",
            str(HANDWRITTEN_CASES),
            "--editor",
            "regex",
            "--out",
            str(tmp_path / "cf"),
            "--limit",
            "-3",
        ],
        tmp_path,
    )
    clean_error(rc, out, err, "--limit")
    assert not (tmp_path / "cf").exists()


def test_08_float_written_limit(tmp_path):
    """Expected: clean error naming --n (a whole number), or it is read as 5; never a traceback."""
    rc, out, err = run(["annotate", "export", str(tmp_path), "--out", str(tmp_path / "a"), "--n", "5.0"], tmp_path)
    clean_error(rc, out, err, "--n")


def test_09_seed_past_uint32(tmp_path):
    """Expected: clean error naming --seed (seeds 0 to 2**32-1)."""
    rc, out, err = run(
        ["catalog", "review-packet", "--per-intervention", "1", "--seed", str(2**32), "--out", str(tmp_path / "rp")], tmp_path
    )
    clean_error(rc, out, err, "--seed")


def test_10_secret_shaped_editor_value_not_echoed(tmp_path):
    """Expected: an editor value that is a pasted key is refused with its prefix only."""
    secret = "sk-proj-" + "A1b2C3d4" * 8
    rc, out, err = run(
        ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", secret, "--out", str(tmp_path / "cf")], tmp_path
    )
    clean_error(rc, out, err, "--editor")
    not_echoed(out + err, secret)


def test_11_empty_editor(tmp_path):
    """Expected: clean error naming --editor."""
    rc, out, err = run(
        ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "", "--out", str(tmp_path / "cf")], tmp_path
    )
    clean_error(rc, out, err, "--editor")


def test_12_unknown_provider_editor(tmp_path):
    """Expected: one line naming --editor and the unknown provider; no traceback."""
    rc, out, err = run(
        [
            "counterfactuals",
            "build",
            "--cases",
            str(HANDWRITTEN_CASES),
            "--editor",
            "nosuchprovider/x",
            "--out",
            str(tmp_path / "cf"),
            "--limit",
            "1",
        ],
        tmp_path,
    )
    clean_error(rc, out, err, "--editor")


def test_13_escape_sequence_in_set_value(tmp_path):
    """Expected: `cases answer --set` with an ESC sequence in the value: clean error, no raw ESC printed."""
    q = tmp_path / "cases.questions.jsonl"
    packet = tmp_path / "p1.txt"
    packet.write_text(packet_text())
    run(["cases", "import", str(packet), "--out", str(tmp_path / "cases.jsonl")], tmp_path)
    assert q.exists()
    before = q.read_bytes()
    rc, out, err = run(
        ["cases", "answer", str(q), "--out", str(tmp_path / "cases.jsonl"), "--set", "p1:resected=\x1b[2J\x1b]0;pwned\x07yes"], tmp_path
    )
    no_traceback(out, err)
    no_raw_controls(out + err)
    assert rc != 0
    assert q.read_bytes() == before or b"\x1b" not in q.read_bytes()


def test_14_set_on_unknown_case_100kb(tmp_path):
    """Expected: clean error naming the unknown case, the 100 kB id not echoed in full."""
    q = tmp_path / "cases.questions.jsonl"
    packet = tmp_path / "p1.txt"
    packet.write_text(packet_text())
    run(["cases", "import", str(packet), "--out", str(tmp_path / "cases.jsonl")], tmp_path)
    value = "c" * 100_000
    rc, out, err = run(["cases", "answer", str(q), "--out", str(tmp_path / "cases.jsonl"), "--set", f"{value}:resected=false"], tmp_path)
    clean_error(rc, out, err, "--set")
    not_echoed(out + err, value)


def test_15_set_age_overflowing_number(tmp_path):
    """Expected: `--set p1:age=1e400` refused as not a whole number (clean error naming the field)."""
    q = tmp_path / "cases.questions.jsonl"
    packet = tmp_path / "p1.txt"
    packet.write_text(packet_text())
    run(["cases", "import", str(packet), "--out", str(tmp_path / "cases.jsonl")], tmp_path)
    rc, out, err = run(["cases", "answer", str(q), "--out", str(tmp_path / "cases.jsonl"), "--set", "p1:age=1e400"], tmp_path)
    clean_error(rc, out, err, "age")


def test_16_bidi_in_catalog_template_cancer_type(tmp_path):
    """Expected: a cancer type with a bidi override is refused with the argument named, no raw bidi printed,
    nothing written."""
    out_file = tmp_path / "t.yaml"
    rc, out, err = run(["catalog", "template", "--cancer-type", "chol\u202eangio", "--marker", "FGFR2", "--out", str(out_file)], tmp_path)
    clean_error(rc, out, err, "--cancer-type")
    no_raw_controls(out + err)
    assert not out_file.exists()


def test_17_catalog_template_never_overwrites(tmp_path):
    """Expected: an existing --out is refused and left byte-identical."""
    out_file = tmp_path / "mine.yaml"
    out_file.write_text("my notes\n")
    rc, out, err = run(
        ["catalog", "template", "--cancer-type", "cholangiocarcinoma", "--marker", "FGFR2", "--out", str(out_file)], tmp_path
    )
    clean_error(rc, out, err, "mine.yaml")
    assert out_file.read_text() == "my notes\n"


# ------------------------------------------------------------------------------------------------ special files


def test_18_validate_a_fifo_does_not_hang(tmp_path):
    """Expected: 'not a regular file' naming it, within seconds (no writer ever opens the FIFO)."""
    fifo = tmp_path / "cases.jsonl"
    os.mkfifo(fifo)
    rc, out, err = run(["validate", str(fifo)], tmp_path, timeout=60)
    clean_error(rc, out, err, "cases.jsonl")


def test_19_cases_import_from_a_fifo_does_not_hang(tmp_path):
    """Expected: the FIFO packet is refused by name; no hang."""
    fifo = tmp_path / "packet.txt"
    os.mkfifo(fifo)
    rc, out, err = run(["cases", "import", str(fifo), "--out", str(tmp_path / "cases.jsonl")], tmp_path, timeout=60)
    clean_error(rc, out, err, "packet.txt")


def test_20_cases_import_dev_zero(tmp_path):
    """Expected: /dev/zero refused by name; no hang, no memory blow-up."""
    rc, out, err = run(["cases", "import", "/dev/zero", "--out", str(tmp_path / "cases.jsonl")], tmp_path, timeout=60)
    clean_error(rc, out, err, "/dev/zero")


def test_21_summary_cases_dev_zero(tmp_path):
    """Expected: `catalog summary --cases /dev/zero` refused by name."""
    rc, out, err = run(["catalog", "summary", "--cases", "/dev/zero"], tmp_path, timeout=60)
    clean_error(rc, out, err, "/dev/zero")


def test_22_symlink_loop_validate(tmp_path):
    """Expected: one line naming the file (too many levels of symbolic links)."""
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    rc, out, err = run(["validate", str(tmp_path / "a.jsonl")], tmp_path)
    clean_error(rc, out, err, "a.jsonl")


@xfail("traceback", "an --out whose questions file is a symlink loop: RuntimeError('Symlink loop from ...') from same_file/Path.resolve")
def test_23_symlink_loop_as_import_out(tmp_path):
    """Expected: --out that is a symlink loop is refused by name; nothing else written."""
    packet = tmp_path / "p.txt"
    packet.write_text(packet_text())
    (tmp_path / "o.questions.jsonl").symlink_to(tmp_path / "o.questions.jsonl")
    rc, out, err = run(["cases", "import", str(packet), "--out", str(tmp_path / "o.jsonl")], tmp_path)
    clean_error(rc, out, err, "o.")


def test_24_report_logs_symlink_loop_dir(tmp_path):
    """Expected: a logs folder holding a symlink loop: the loop is skipped or named; no traceback."""
    logs = tmp_path / "logs_in"
    logs.mkdir()
    (logs / "loop").symlink_to(logs / "loop")
    rc, out, err = run(["report", str(logs), "--out", str(tmp_path / "r")], tmp_path)
    no_traceback(out, err)
    assert rc != 0 and (err.strip() or out.strip())


def test_25_dangling_symlink_catalog(tmp_path):
    """Expected: `catalog check` on a dangling symlink names the file."""
    (tmp_path / "cat.yaml").symlink_to(tmp_path / "gone.yaml")
    rc, out, err = run(["catalog", "check", str(tmp_path / "cat.yaml")], tmp_path)
    clean_error(rc, out, err, "cat.yaml")


# ------------------------------------------------------------------------------------------------ hostile content


def test_26_yaml_billion_laughs(tmp_path):
    """Expected: refused with the file's name, in bounded time and memory."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghij"):
        prev = "abcdefghij"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines.append("interventions: *j")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    rc, out, err = run(["validate", str(bomb), "--kind", "interventions"], tmp_path, timeout=120)
    clean_error(rc, out, err, "bomb.yaml")


def test_27_yaml_deep_nesting(tmp_path):
    """Expected: nesting deeper than 64 refused with the file's name (no RecursionError)."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("interventions: " + "[" * 50_000 + "]" * 50_000 + "\n")
    rc, out, err = run(["catalog", "check", str(deep)], tmp_path, timeout=120)
    clean_error(rc, out, err, "deep.yaml")


def test_28_json_million_nesting(tmp_path):
    """Expected: a JSONL record nested 1e6 deep is refused with the file's name and line."""
    f = tmp_path / "cases.jsonl"
    f.write_text('{"case_id": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}\n")
    rc, out, err = run(["cases", "validate", str(f)], tmp_path, timeout=120)
    clean_error(rc, out, err, "cases.jsonl")


def test_29_json_million_nesting_in_import_jsonl(tmp_path):
    """Expected: the same inside the JSONL of texts given to `cases import`."""
    f = tmp_path / "texts.jsonl"
    f.write_text('{"id": "x", "text": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}\n")
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path, timeout=120)
    clean_error(rc, out, err, "texts.jsonl")


def test_30_yaml_python_tag_is_not_executed(tmp_path):
    """Expected: a !!python/object tag is refused (safe loading); the marker file is never created."""
    marker = tmp_path / "PWNED"
    f = tmp_path / "evil.yaml"
    f.write_text(f"interventions: !!python/object/apply:os.system ['touch {marker}']\n")
    rc, out, err = run(["validate", str(f), "--kind", "interventions"], tmp_path)
    clean_error(rc, out, err, "evil.yaml")
    assert not marker.exists()


def test_31_utf16_cases_file(tmp_path):
    """Expected: 'not UTF-8' naming the file (UTF-16 with BOM)."""
    f = tmp_path / "cases.jsonl"
    f.write_bytes(HANDWRITTEN_CASES.read_text().encode("utf-16"))
    rc, out, err = run(["cases", "validate", str(f)], tmp_path)
    clean_error(rc, out, err, "cases.jsonl")


def test_32_empty_cases_file(tmp_path):
    """Expected: an empty cases file is one clean line naming it (no cases), not 'OK, 0 entries' silently."""
    f = tmp_path / "cases.jsonl"
    f.write_text("")
    rc, out, err = run(["cases", "validate", str(f)], tmp_path)
    clean_error(rc, out, err, "cases.jsonl")


def test_33_sparse_40mb_file_refused_fast(tmp_path):
    """Expected: a 40 MB file refused by its size, naming it."""
    f = tmp_path / "big.jsonl"
    with f.open("wb") as fh:
        fh.truncate(40 * 1024 * 1024)
    rc, out, err = run(["validate", str(f)], tmp_path, timeout=60)
    clean_error(rc, out, err, "big.jsonl")


def test_34_lone_surrogate_in_import_jsonl(tmp_path):
    """Expected: a lone surrogate escape in a packet text (valid JSON, not encodable as UTF-8) is refused or
    replaced with a note; never a UnicodeEncodeError while writing the questions file."""
    f = tmp_path / "texts.jsonl"
    text = packet_text().replace("\n", "\\n").replace('"', "'")
    f.write_text('{"id": "s1", "text": "' + text + ' \\ud800 HER2 3+"}\n')
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path)
    no_traceback(out, err)
    assert rc in (0, 1, 2)
    q = tmp_path / "c.questions.jsonl"
    if q.exists():
        q.read_text(encoding="utf-8")


def test_35_import_id_with_path_traversal(tmp_path):
    """Expected: an id like '../../escape' is data: nothing is written outside --out's folder."""
    outdir = tmp_path / "out"
    outdir.mkdir()
    f = tmp_path / "texts.jsonl"
    f.write_text(json.dumps({"id": "../../escape", "text": packet_text()}) + "\n")
    rc, out, err = run(["cases", "import", str(f), "--out", str(outdir / "c.jsonl")], tmp_path)
    no_traceback(out, err)
    written = {p.name for p in tmp_path.rglob("*") if p.is_file()} - {"texts.jsonl"}
    assert all((outdir / n).exists() or n.startswith(".") for n in written), written
    assert not (tmp_path.parent / "escape").exists()


def test_36_import_id_not_a_string(tmp_path):
    """Expected: {"id": [1, 2]} refused naming the file, line and field."""
    f = tmp_path / "texts.jsonl"
    f.write_text(json.dumps({"id": [1, 2], "text": packet_text()}) + "\n")
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path)
    clean_error(rc, out, err, "texts.jsonl")


def test_37_huge_integer_age(tmp_path):
    """Expected: an age of 5,000 digits is refused naming the field, not echoed in full."""
    row = json.loads(HANDWRITTEN_CASES.read_text().splitlines()[0])
    f = tmp_path / "cases.jsonl"
    f.write_text(json.dumps(row).replace(f'"age": {row["age"]}', '"age": ' + "7" * 5000) + "\n")
    rc, out, err = run(["cases", "validate", str(f)], tmp_path)
    clean_error(rc, out, err, "age")
    not_echoed(out + err, "7" * 5000)


def test_38_bom_and_mixed_line_endings_read_like_lf(tmp_path):
    """Expected: a packet with a BOM and CRLF / lone CR line endings pre-fills the same fields as its LF form."""
    text = packet_text()
    lf = tmp_path / "lf"
    mixed = tmp_path / "mixed"
    lf.mkdir()
    mixed.mkdir()
    (lf / "p.txt").write_text(text)
    lines = text.split("\n")
    eol = itertools.cycle(["\r\n", "\r", "\n"])
    (mixed / "p.txt").write_bytes(("\ufeff" + "".join(ln + next(eol) for ln in lines)).encode())

    def fields(folder):
        run(["cases", "import", str(folder / "p.txt"), "--out", str(folder / "c.jsonl")], tmp_path)
        rows = [json.loads(ln) for ln in (folder / "c.questions.jsonl").read_text().splitlines() if ln.strip()]
        return json.dumps(
            [{k: v for k, v in r.items() if k in ("field", "value", "fields", "prefill", "questions")} for r in rows],
            sort_keys=True,
            default=str,
        )

    assert fields(lf) == fields(mixed)


def test_39_bom_and_crlf_rater_csv(tmp_path):
    """Expected: `annotate import` of a CSV with a BOM and CRLF whose key does not exist: clean error naming the key."""
    r1 = tmp_path / "r1.csv"
    r1.write_bytes("\ufeffrow_id,score,coherent\r\n1,1,yes\r2,0,no\n".encode())
    rc, out, err = run(["annotate", "import", str(r1), "--key", str(tmp_path / "key.csv"), "--out", str(tmp_path / "a")], tmp_path)
    clean_error(rc, out, err, "key.csv")


def test_40_bom_crlf_rater_csv_with_real_key_columns(tmp_path):
    """Expected: a rater sheet whose columns do not match the key (BOM on the first column name): clean error
    naming the rater file."""
    key = tmp_path / "key.csv"
    key.write_bytes("\ufeffitem,log,sample_id,judge_score\r\n1,a.eval,s1,1\r\n".encode())
    r1 = tmp_path / "r1.csv"
    r1.write_bytes("\ufeffitem,score\r\n1,1\r".encode())
    rc, out, err = run(["annotate", "import", str(r1), "--key", str(key), "--out", str(tmp_path / "a")], tmp_path)
    clean_error(rc, out, err)


# ------------------------------------------------------------------------------------------------ file names


def test_41_unicode_filename_packet(tmp_path):
    """Expected: a packet named in Cyrillic and CJK imports like any other (exit 1: questions open)."""
    f = tmp_path / "пациент-乳腺癌.txt"
    f.write_text(packet_text())
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path)
    no_traceback(out, err)
    assert rc in (0, 1) and (tmp_path / "c.questions.jsonl").exists()


@xfail(
    "unsafe", "a packet file name with a newline and ESC is printed raw: a forged 'FAKE: line' line and a raw ESC [31m reach the terminal"
)
def test_42_newline_in_filename_printed_safely(tmp_path):
    """Expected: a packet named 'a\\nb\\x1b[31m.txt' imports; its name is printed escaped (no raw newline or ESC)."""
    f = tmp_path / "a\nFAKE: line\x1b[31m.txt"
    f.write_text(packet_text())
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path)
    no_traceback(out, err)
    assert rc in (0, 1)
    assert "\nFAKE: line" not in out + err
    no_raw_controls((out + err).replace("\n", ""))


def test_43_control_chars_in_packet_text_not_printed_raw(tmp_path):
    """Expected: ESC/OSC sequences inside a packet are not printed raw in the import's quotes."""
    f = tmp_path / "p.txt"
    f.write_text(packet_text().replace("Diagnosis", "\x1b]0;owned\x07\x1b[2JDiagnosis", 1) + "\nHER2 \x1b[8m3+\x1b[0m\n")
    rc, out, err = run(["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path)
    no_traceback(out, err)
    no_raw_controls(out + err)


# ------------------------------------------------------------------------------------------------ environment


def test_44_read_only_home(tmp_path):
    """Expected: with a read-only HOME (and no cache variables) `validate` and `schema` still work."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    env = env_for(tmp_path, HOME=str(home))
    for k in ("CLINICAL_CF_CACHE_DIR", "XDG_CACHE_HOME", "INSPECT_CACHE_DIR", "INSPECT_LOG_DIR"):
        env.pop(k, None)
    try:
        rc, out, err = run(["validate", str(HANDWRITTEN_CASES)], tmp_path, env=env)
        no_traceback(out, err)
        assert rc == 0, err
        rc, out, err = run(["schema", "css-case"], tmp_path, env=env)
        assert rc == 0 and json.loads(out)
    finally:
        home.chmod(0o700)


def test_45_read_only_home_report(tmp_path):
    """Expected: `report` over an empty folder with a read-only HOME (the cache folder unwritable): a clean error
    about the logs (or the cache), never a traceback."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    (tmp_path / "empty").mkdir()
    env = env_for(tmp_path, HOME=str(home))
    for k in ("CLINICAL_CF_CACHE_DIR", "XDG_CACHE_HOME"):
        env.pop(k, None)
    try:
        rc, out, err = run(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r")], tmp_path, env=env)
        clean_error(rc, out, err)
    finally:
        home.chmod(0o700)


def test_46_other_cwd_catalog_check(tmp_path, bundled_before):
    """Expected: from another cwd, `catalog check` checks the bundled catalog (exit 0) and writes nothing."""
    rc, out, err = run(["catalog", "check"], tmp_path)
    no_traceback(out, err)
    assert rc == 0, err[-2000:]
    assert not any(tmp_path.iterdir()) or {p.name for p in tmp_path.iterdir()} <= {"logs", "icache", "ccache"}
    bundled_unchanged(bundled_before)


@pytest.mark.writes_checkout  # if the refusal fails, it writes into catalog/css (removed afterwards)
def test_47_cwd_inside_bundled_data_relative_out(tmp_path, bundled_before):
    """Expected: cwd catalog/css and `--out ./mine` resolves into bundled data: refused, nothing written."""
    rc, out, err = run(
        ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--out", "./b46-probe", "--limit", "1"],
        tmp_path,
        cwd=BUNDLED / "css",
    )
    try:
        clean_error(rc, out, err, "--out")
        bundled_unchanged(bundled_before)
    finally:
        shutil.rmtree(BUNDLED / "css/b46-probe", ignore_errors=True)


def test_48_ascii_only_stdout(tmp_path):
    """Expected: with PYTHONIOENCODING=ascii, importing a packet with non-ASCII quotes prints escaped text or a clean
    error, never UnicodeEncodeError."""
    f = tmp_path / "p.txt"
    f.write_text(packet_text() + "\nNote: patient from Malmö, résumé of care — HER2 3+ (naïve)\n")
    rc, out, err = run(
        ["cases", "import", str(f), "--out", str(tmp_path / "c.jsonl")], tmp_path, env=env_for(tmp_path, PYTHONIOENCODING="ascii")
    )
    no_traceback(out, err)
    assert rc in (0, 1, 2)


def test_49_broken_pipe(tmp_path):
    """Expected: `schema css-case | head -c 10`: no BrokenPipeError traceback."""
    proc = subprocess.run(
        f"'{CLI[0]}' schema css-case | head -c 10 >/dev/null",
        shell=True,
        cwd=tmp_path,
        env=env_for(tmp_path),
        capture_output=True,
        timeout=120,
    )
    no_traceback("", proc.stderr.decode())


def test_50_stdout_is_dev_full(tmp_path):
    """Expected: `schema css-case > /dev/full`: one line 'No space left on device', exit non-zero, no traceback."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        proc = subprocess.run(
            [*CLI, "schema", "css-case"], cwd=tmp_path, env=env_for(tmp_path), stdout=full, stderr=subprocess.PIPE, timeout=120
        )
    err = proc.stderr.decode()
    clean_error(proc.returncode, "", err)


def _fsize(limit):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return pre


def test_51_rlimit_fsize_export_dataset(tmp_path):
    """Expected: under a 4 kB file-size limit `export dataset` stops with one line naming the file it was writing
    (File too large), and leaves no cut file under a final name."""
    out_dir = tmp_path / "ds"
    rc, out, err = run(["export", "dataset", "--suite", "medpic", "--out", str(out_dir)], tmp_path, preexec=_fsize(4096))
    clean_error(rc, out, err)
    assert "too large" in (out + err).lower() or "File too large" in out + err
    assert "input" not in (out + err).lower().split("error")[-1][:20]


def test_52_rlimit_fsize_counterfactuals_build(tmp_path):
    """Expected: under a 2 kB limit, `counterfactuals build --editor regex` names the file it writes; no
    counterfactuals.jsonl without its lock is left behind as if complete."""
    out_dir = tmp_path / "cf"
    rc, out, err = run(
        ["counterfactuals", "build", "--cases", str(HANDWRITTEN_CASES), "--editor", "regex", "--out", str(out_dir)],
        tmp_path,
        preexec=_fsize(2048),
    )
    clean_error(rc, out, err)
    if (out_dir / "counterfactuals.jsonl").exists():
        assert (out_dir / "counterfactuals.lock").exists()


# ------------------------------------------------------------------------------------------------ signals, locks


def _interrupt(args, tmp_path, delay):
    proc = subprocess.Popen(
        [*CLI, *args], cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired as e:
        proc.kill()
        proc.communicate()
        raise AssertionError("hang: still running 60 s after Ctrl-C") from e
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def test_53_ctrl_c_during_cases_import(tmp_path):
    """Expected: Ctrl-C while importing 200 packets: exit 130 (or non-zero) with one line, no traceback, and no
    half-written questions file (either none or a whole one that parses)."""
    folder = tmp_path / "p"
    folder.mkdir()
    for i in range(200):
        (folder / f"p{i:03d}.txt").write_text(packet_text())
    rc, out, err = _interrupt(
        ["cases", "import", *map(str, sorted(folder.iterdir())), "--out", str(tmp_path / "c.jsonl")], tmp_path, delay=12
    )
    no_traceback(out, err)
    q = tmp_path / "c.questions.jsonl"
    if q.exists():
        for ln in q.read_text().splitlines():
            json.loads(ln)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and "c." in p.name]


@xfail("traceback", "Ctrl-C in the first seconds (while the CLI imports) prints a KeyboardInterrupt traceback")
def test_54_ctrl_c_during_counterfactuals_build(tmp_path):
    """Expected: Ctrl-C during `counterfactuals build --editor regex`: no traceback; --out holds no unlocked set."""
    out_dir = tmp_path / "cf"
    rc, out, err = _interrupt(
        ["counterfactuals", "build", "--cases", str(ROOT / "catalog/css/cases.jsonl"), "--editor", "regex", "--out", str(out_dir)],
        tmp_path,
        delay=12,
    )
    no_traceback(out, err)
    assert rc != 0
    if (out_dir / "counterfactuals.jsonl").exists():
        assert (out_dir / "counterfactuals.lock").exists()


@xfail("traceback", "Ctrl-C in the first seconds (while the CLI imports) prints a KeyboardInterrupt traceback")
def test_55_ctrl_c_during_catalog_lock(tmp_path):
    """Expected: Ctrl-C during `catalog lock` of a copy: no traceback; the lock is absent or matches (check passes)."""
    cat = tmp_path / "interventions.yaml"
    shutil.copy(CATALOG, cat)
    rc, out, err = _interrupt(["catalog", "lock", str(cat)], tmp_path, delay=6)
    no_traceback(out, err)
    lock = cat.with_suffix(".yaml.lock")
    locks = [p for p in tmp_path.iterdir() if p.name.endswith(".lock")]
    if locks:
        rc2, out2, err2 = run(["catalog", "check", str(cat)], tmp_path)
        assert rc2 == 0, (lock, out2, err2)


def test_56_two_catalog_locks_at_once(tmp_path):
    """Expected: two `catalog lock` of the same copy at once both succeed (or one refuses cleanly); afterwards
    `catalog check` passes and no temporary file is left."""
    cat = tmp_path / "interventions.yaml"
    shutil.copy(CATALOG, cat)
    procs = [
        subprocess.Popen(
            [*CLI, "catalog", "lock", str(cat)], cwd=tmp_path, env=env_for(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=180), *(s.read().decode() for s in (p.stdout, p.stderr))) for p in procs]
    for _rc, out, err in results:
        no_traceback(out, err)
    assert any(rc == 0 for rc, _, _ in results)
    rc, out, err = run(["catalog", "check", str(cat)], tmp_path)
    assert rc == 0, err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_57_eof_at_the_interactive_prompt(tmp_path):
    """Expected: `cases answer` on a terminal, Ctrl-D at the first prompt: a clean exit naming what is open, no
    traceback, the questions file intact."""
    import pty  # deferred: probe-only

    packet = tmp_path / "p1.txt"
    packet.write_text(packet_text())
    run(["cases", "import", str(packet), "--out", str(tmp_path / "cases.jsonl")], tmp_path)
    q = tmp_path / "cases.questions.jsonl"
    before = q.read_bytes()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.execve(CLI[0], [*CLI, "cases", "answer", str(q), "--out", str(tmp_path / "cases.jsonl")], env_for(tmp_path))
    buf = b""
    deadline = time.time() + 90
    sent = 0
    while time.time() < deadline:
        import select  # deferred: probe-only

        r, _, _ = select.select([fd], [], [], 1.0)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
        if sent < 3 and (b"?" in buf or b":" in buf[-4:] or b"]" in buf[-4:]):
            os.write(fd, b"\x04")
            sent += 1
    _, status = os.waitpid(pid, 0)
    text = buf.decode(errors="replace")
    assert "Traceback" not in text, text[-2000:]
    for ln in q.read_text().splitlines():
        json.loads(ln)
    assert len(q.read_bytes()) >= len(before) // 2


# ------------------------------------------------------------------------------------------------ inspect eval


def _eval(args, tmp_path, env=None, timeout=240):
    return run(["eval", *args, "--display", "none"], tmp_path, cmd=INSPECT, env=env, timeout=timeout, cwd=ROOT)


@xfail(
    "traceback",
    "INSPECT_EVAL_MODEL set to garbage: Inspect's exception-group traceback ending in ValueError: Model name ... should be in the format <api_name>/<model_name>",
)
def test_58_inspect_eval_model_env_garbage(tmp_path):
    """Expected: INSPECT_EVAL_MODEL='\\x1b[31m not a model' stops before any sample with one line naming it."""
    rc, out, err = _eval(["tasks/medpic", "--limit", "1"], tmp_path, env=env_for(tmp_path, INSPECT_EVAL_MODEL="no such model\x1b[31m"))
    no_traceback(out, err)
    assert rc != 0
    no_raw_controls(out + err)


@pytest.mark.parametrize(
    "arg, name",
    [
        pytest.param(
            "limit_cases=5",
            "limit_cases",
            marks=xfail(
                "silent",
                "an unknown task argument is dropped with Inspect's warning only (none under --display none); the "
                "run goes on and exits 0, where docs/inputs.md says it ends the run naming it",
            ),
        ),  # a name the task lacks
        ("summary_max_tokens=-1", "summary_max_tokens"),  # a negative count
        pytest.param(
            "recommend_max_tokens=99999999999999999999999",
            "recommend_max_tokens",
            marks=xfail("unsafe", "the refused 23-digit value is echoed in full (twice), not by its first three and its length"),
        ),
        ("scale=[1, 2]", "scale"),  # wrong type (a YAML list)
        ("self_judging={allow: true}", "self_judging"),  # wrong type (a mapping)
        ("mutation_mode=Structured", "mutation_mode"),  # a choice in the wrong case
        ("cases=/dev/zero", "cases"),  # a device as a path
    ],
)
def test_59_task_arguments(tmp_path, arg, name):
    """Expected: the eval stops before any sample with one message naming the argument; exit 1; no traceback."""
    rc, out, err = _eval(
        ["tasks/css_family_d", "--model", "mockllm/model", "--limit", "1", "-T", "self_judging=allow", "-T", arg], tmp_path
    )
    no_traceback(out, err)
    assert rc != 0, (out[-1500:], err[-1500:])
    assert name in out + err
    value = arg.split("=", 1)[1]
    if len(value) > 12:
        not_echoed(out + err, value)


@xfail(
    "silent",
    "--model-role jduge=... under --display none: exit 0, nothing printed; the log says only that no judge is bound, never names the misspelled role",
)
def test_60_model_role_typo(tmp_path):
    """Expected: `--model-role jduge=...` (typo) is named, never silently ignored while the task falls back."""
    rc, out, err = _eval(
        ["tasks/css_family_d", "--model", "mockllm/model", "--limit", "1", "--model-role", "jduge=mockllm/model"], tmp_path
    )
    no_traceback(out, err)
    assert rc != 0 and "jduge" in out + err, (out[-1500:], err[-1500:])


@xfail(
    "traceback",
    "--model-role judge=nosuchprovider/x: exception-group traceback ending in ValueError: Model API nosuchprovider ... not recognized",
)
def test_61_model_role_unknown_provider(tmp_path):
    """Expected: `--model-role judge=nosuch/x` names the provider (or the role) in one message; no traceback."""
    rc, out, err = _eval(
        ["tasks/css_family_d", "--model", "mockllm/model", "--limit", "1", "--model-role", "judge=nosuchprovider/x"], tmp_path
    )
    no_traceback(out, err)
    assert rc != 0 and "nosuchprovider" in out + err


# ------------------------------------------------------------------------------------------------ provider faults


def _faults():
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage  # deferred: probe-only
    from inspect_ai.tool import ToolCall  # deferred: probe-only

    def no_choices(text):
        return ModelOutput(model="mockllm/model", choices=[], usage=ModelUsage(input_tokens=1, output_tokens=0, total_tokens=1))

    def tools_only(text):
        msg = ChatMessageAssistant(content="", tool_calls=[ToolCall(id="t1", function="lookup_chart", arguments={"section": "overview"})])
        return ModelOutput(
            model="mockllm/model",
            choices=[ChatCompletionChoice(message=msg, stop_reason="tool_calls")],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),
        )

    def max_tokens(text):
        out = ModelOutput.from_content("mockllm/model", text, stop_reason="max_tokens")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    def no_usage(text):
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = None
        return out

    return {"no_choices": no_choices, "tools_only": tools_only, "max_tokens": max_tokens, "no_usage": no_usage}


SUITE_REPLIES = {
    "css": recommendations_json("Trastuzumab", avoid=("Observation",)),
    "medpic": '{"rationale": "x", "answer": ["A"]}',
    "workflow": '{"action": "ESCALATE", "confidence": 0.8, "reason": "x"}',
    "sensitivity": '{"A": 0.5, "B": 0.3, "C": 0.2}',
}
JUDGE_REPLY = '{"score": 1, "rationale": "moved as expected"}'


def _task(suite):
    if suite == "css":
        from clinical_cf.tasks.css_family_d.css_family_d import css_family_d  # deferred: probe-only

        return css_family_d(cases=str(HANDWRITTEN_CASES), unreviewed="allow")
    if suite == "medpic":
        from clinical_cf.tasks.medpic.medpic import medpic  # deferred: probe-only

        return medpic(populations="renal", reader="none")
    if suite == "workflow":
        from clinical_cf.tasks.workflow.workflow import workflow  # deferred: probe-only

        return workflow(split="dev")
    from clinical_cf.tasks.sensitivity.sensitivity import sensitivity  # deferred: probe-only

    return sensitivity(types="surface", logprobs=False)


def _fault_eval(suite, fault, role):
    from inspect_ai import eval  # deferred: probe-only
    from inspect_ai.model import ModelOutput, ModelUsage, get_model  # deferred: probe-only

    faults = _faults()

    def fine(text):
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model_fn = faults[fault] if role == "model" else fine
    judge_fn = faults[fault] if role == "judge" else fine
    model = get_model("mockllm/model", custom_outputs=lambda *a: model_fn(SUITE_REPLIES[suite]))
    judge = get_model("mockllm/judge", custom_outputs=lambda *a: judge_fn(JUDGE_REPLY))
    log = eval(_task(suite), model=model, model_roles={"judge": judge}, display="none", limit=1)[0]
    return log


FAULT_CASES = [
    (s, f, "model") for s in ("css", "medpic", "workflow", "sensitivity") for f in ("no_choices", "tools_only", "max_tokens", "no_usage")
]
FAULT_CASES += [("css", f, "judge") for f in ("no_choices", "tools_only", "max_tokens", "no_usage")]
FAULT_XFAIL = {
    ("medpic", "no_choices", "model"): xfail(
        "traceback", "no choices for the model under test: the sample ends in IndexError('list index out of range'), log status error"
    ),
    ("workflow", "no_choices", "model"): xfail(
        "traceback", "no choices for the model under test: the sample ends in IndexError('list index out of range'), log status error"
    ),
    **{
        (s, "no_usage", r): xfail(
            "traceback",
            "a reply with usage None ends the sample in ConnectionError (Inspect "
            "fetches tiktoken's o200k_base offline to estimate tokens): the sample errors instead "
            "of being scored with its usage counted as missing",
        )
        for s, f, r in FAULT_CASES
        if f == "no_usage"
    },
}


@pytest.mark.parametrize(
    "suite, fault, role", [pytest.param(*c, id="-".join(c), marks=[FAULT_XFAIL[c]] if c in FAULT_XFAIL else []) for c in FAULT_CASES]
)
def test_62_provider_fault(suite, fault, role):
    """Expected: the sample ends scored or unscored with its reason (no sample error, log success); a cut reply is
    unreadable 'truncated' (the judge's is asked again); missing usage is counted in the store."""
    log = _fault_eval(suite, fault, role)
    assert log.status == "success", log.error
    assert log.samples, "no samples"
    for s in log.samples:
        assert s.error is None, str(s.error)[:800]
        assert s.scores, "no score"
        score = next(iter(s.scores.values()))
        meta = score.metadata or {}
        if role == "model" and fault in ("no_choices", "tools_only", "max_tokens"):
            text = json.dumps(meta.get("unreadable"), default=str) + json.dumps(meta.get("parse"), default=str)
            assert any(code in text for code in ("empty", "truncated", "invalid", "unreadable")), text
            if fault == "max_tokens":
                assert "truncated" in json.dumps(meta.get("unreadable"), default=str), meta.get("unreadable")
        if fault == "no_usage":
            assert any("usage_missing" in k for k in (s.store or {})), sorted(s.store or {})
