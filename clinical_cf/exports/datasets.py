"""`clinical-cf export dataset`: a suite's generated data as JSONL plus a dataset card, for labs' own loaders.

Two files per suite, both plain JSONL that `datasets.load_dataset("json", ...)`, pandas and
Inspect's `json_dataset` read as they are:

- `<records>.jsonl`: the source records (cases, vignettes, questions, episodes), one per line in
  the suite's schema, so they reload through our validator and feed the suite's task again
  (`-T <data_arg>=<file>`);
- `samples.jsonl`: every sample of the suite's default task as Inspect sees it (`id`, `input`,
  `target`, `metadata`), counterfactual expansion and expected changes included.

`README.md` is the dataset card (Hugging Face front matter, fields, counts, generator version,
catalog hashes, licence, intended use, limitations); `manifest.json` has each file's SHA-256.
"""

from __future__ import annotations

import hashlib
import html
import json
import subprocess
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.dataset import Sample
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import BaseModel

from clinical_cf.core.locking import write_lock
from clinical_cf.suites import Suite, create_task

SAMPLES_FILE = "samples.jsonl"
LICENSE = "apache-2.0"

LIMITATIONS = """\
- **Synthetic, not clinically validated.** Every patient, packet, question and episode was generated
  from templates; no real patient data is included. Clinical labels, rules and expected changes were
  written from public guidelines and criteria lists (each carries its source or rationale) but have
  not been reviewed by a clinician panel.
- Generated text has a narrower range of wording than real records; a model can exploit regularities
  of the generator. Use the suite's shortcut and paraphrase audits before reading much into small gaps.
- Scores on this data measure whether a model's output moves in a pre-registered direction under a
  controlled change, not whether its advice is safe for any real patient."""

INTENDED_USE = """\
Research evaluation of language models and agents: whether their clinical outputs change for the
right reasons under controlled counterfactual edits. Not for training clinical systems, not for
clinical decision making, not as a source of medical advice."""


def sample_record(sample: Sample) -> dict[str, Any]:
    """An Inspect sample as one JSON line (message ids dropped: Inspect assigns them at random)."""
    if isinstance(sample.input, str):
        input_: Any = sample.input
    else:
        input_ = [m.model_dump(mode="json", exclude={"id"}, exclude_none=True) for m in sample.input]
    record: dict[str, Any] = {"id": sample.id, "input": input_, "target": sample.target}
    if sample.choices:
        record["choices"] = sample.choices
    record["metadata"] = sample.metadata or {}
    return record


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _package_version() -> str:
    try:
        return version("clinical-cf")
    except PackageNotFoundError:
        return "unknown"


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _type_name(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type_name(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type_name(schema.get('items', {}))}"
    return str(kind)


def field_table(model: type[BaseModel]) -> str:
    """Markdown table of a record schema's top-level fields."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    rows = ["| field | type | required | description |", "| --- | --- | --- | --- |"]
    for name, prop in schema.get("properties", {}).items():
        description = " ".join(str(prop.get("description", "")).split())
        rows.append(f"| `{name}` | {_type_name(prop)} | {'yes' if name in required else 'no'} | {description} |")
    return "\n".join(rows)


def _sample_fields(records: list[dict[str, Any]]) -> str:
    rows = ["| field | type | description |", "| --- | --- | --- |"]
    first = records[0]
    rows.append("| `id` | string | sample id (unique within the suite) |")
    kind = "string" if isinstance(first["input"], str) else "list of chat messages (`role`, `content`)"
    rows.append(f"| `input` | {kind} | what the model under test is given |")
    rows.append("| `target` | string or list | the reference (expected change, gold answer or reference action) |")
    if "choices" in first:
        rows.append("| `choices` | list of string | answer options |")
    kinds: dict[str, set[str]] = {}
    for record in records:
        for key, value in record["metadata"].items():
            kinds.setdefault(key, set()).add("null" if value is None else type(value).__name__)
    for key, names in kinds.items():
        rows.append(f"| `metadata.{key}` | {' or '.join(sorted(names))} | |")
    return "\n".join(rows)


def _size_category(n: int) -> str:
    return "n<1K" if n < 1_000 else "1K<n<10K" if n < 10_000 else "10K<n<100K"


def _cell(value: object) -> str:
    """Text for a Markdown table cell or line: one line, no `|` to split the row, no raw HTML for the hub to render."""
    text = " ".join(str(value).split())
    return html.escape(text, quote=False).replace("|", "\\|")


# The card is Markdown (the hub renders it), so it is not HTML-autoescaped: values go through `cell`,
# which escapes what Markdown tables and the hub's HTML rendering would misread.
CARD_TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=False,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
CARD_TEMPLATES.filters["cell"] = _cell


def dataset_card(suite: Suite, records: int, samples: list[dict[str, Any]], files: dict[str, str]) -> str:
    """README.md of an export, from `templates/dataset_card.md.j2`."""
    breakdown = Counter(str(s["metadata"].get(suite.breakdown)) for s in samples)
    front_matter = {
        "license": LICENSE,
        "pretty_name": f"clinical_cf {suite.name}",
        "language": ["en"],
        "tags": ["medical", "synthetic", "counterfactual", "evaluation"],
        "size_categories": [_size_category(len(samples))],
        "configs": [
            {"config_name": "samples", "data_files": SAMPLES_FILE},
            {"config_name": suite.records, "data_files": f"{suite.records}.jsonl"},
        ],
    }
    return CARD_TEMPLATES.get_template("dataset_card.md.j2").render(
        front_matter=yaml.safe_dump(front_matter, sort_keys=False).strip(),
        suite=suite,
        records=records,
        samples=len(samples),
        samples_file=SAMPLES_FILE,
        breakdown=sorted(breakdown.items()),
        record_fields=field_table(suite.schema),
        sample_fields=_sample_fields(samples),
        package_version=_package_version(),
        commit=_commit(),
        fingerprint=suite.fingerprint(),
        catalog_hashes=suite.file_hashes(),
        files=files,
        intended_use=INTENDED_USE,
        limitations=LIMITATIONS,
    )


def export_dataset(suite: Suite, out: Path) -> dict[str, Path]:
    """Write the suite's records, samples, card and manifest to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    records = suite.loader(suite.data)
    records_path = out / f"{suite.records}.jsonl"
    _write_jsonl(records_path, [r.model_dump(mode="json") for r in records])
    if suite.records_need_lock:
        # The task treats a records file as a catalog: the export registers it as exported.
        write_lock(records_path)
    samples = [sample_record(s) for s in create_task(suite.main_task).dataset]
    samples_path = out / SAMPLES_FILE
    _write_jsonl(samples_path, samples)
    files = {p.name: _sha256(p) for p in (records_path, samples_path)}
    (out / "manifest.json").write_text(
        json.dumps({"suite": suite.name, "fingerprint": suite.fingerprint(), "files": files}, indent=2) + "\n",
        encoding="utf-8",
    )
    card = out / "README.md"
    card.write_text(dataset_card(suite, len(records), samples, files), encoding="utf-8")
    return {"records": records_path, "samples": samples_path, "card": card, "manifest": out / "manifest.json"}
