"""Reader audit: how well does a reader model read replies, and would its wrong readings reach a score?

    inspect eval clinical_cf/reader_audit --model <any> --model-role reader=<reader to audit>

The model under test is not called (`--model` only names a model; without `--model-role reader` the
model itself is audited as reader). Each sample is one reply of the bundled corpus
(`tasks/reader_audit/replies.yaml`: CSS recommendations, agent submissions, MedPIC answers,
workflow actions and sensitivity distributions in many formats, lying and hedging traps included,
each with its known reading). Metrics: `accuracy`, `lie_acceptance_rate` (wrong readings the
verification accepted: 0 for a reader fit for use), `wrong_reading_rate`, `decline_rate`,
`refused_correct_rate`, accuracy per suite (`clinical_cf.scorers.reader_audit`).
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_yaml
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.solvers.reader_audit import audit_reader
from clinical_cf.tasks.arguments import checked_paths, flag, input_file

CORPUS = Path(__file__).resolve().parent / "replies.yaml"
SUITES = ("css", "agent", "medpic", "workflow", "sensitivity")
"""The suites whose replies a reader reads (judge verdicts are read by contract only and are not audited here)."""
REQUIRED = {"medpic": "options", "sensitivity": "candidates"}


def load_corpus(path: str | Path = CORPUS) -> list[Sample]:
    """The corpus's reader-read replies as samples; errors name the file, the entry and the field."""
    path = Path(path)
    raw = load_yaml(path)
    if not isinstance(raw, list):
        raise CatalogError(path, "expected a list of replies (id, suite, format, reply, truth)")
    samples, seen = [], set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise CatalogError(path, f"entry {i} is not a mapping")
        name = str(entry.get("id") or f"[{i}]")
        for key in ("id", "suite", "format", "reply", "truth"):
            if key not in entry:
                raise CatalogError(path, f"entry {name}: missing field '{key}'")
        if name in seen:
            raise CatalogError(path, f"duplicate id {name}")
        seen.add(name)
        if entry["suite"] not in (*SUITES, "judge"):
            raise CatalogError(path, f"entry {name}: field 'suite' is {entry['suite']!r}, not one of {', '.join((*SUITES, 'judge'))}")
        if entry["suite"] == "judge":
            continue
        extra = REQUIRED.get(entry["suite"])
        if extra and not entry.get(extra):
            raise CatalogError(path, f"entry {name}: missing field '{extra}'")
        samples.append(Sample(
            id=name, input=str(entry["reply"])[:2000], target=str(entry["truth"]),
            metadata={k: entry.get(k) for k in ("suite", "format", "cls", "reply", "truth", "final", "options", "candidates")},
        ))
    if not samples:
        raise CatalogError(path, "no reply a reader reads (suites css, agent, medpic, workflow, sensitivity)")
    return samples


@task
@checked_paths  # `-T corpus=` / `=null` refused, a path with commas rejoined
def reader_audit(corpus: str | None = None, reader: str = "reader", json_schema: bool = True) -> Task:
    """Accuracy and lie-acceptance rate of the reader role on a corpus of replies with known readings.

    Args:
        corpus: A reply corpus YAML in the bundled file's form (default: the bundled corpus).
        reader: The model role audited (default `reader`; unbound: the `--model` itself).
        json_schema: Send the reader's schema as `response_schema` (off for servers that reject it).
    """
    path = input_file("corpus", corpus) or CORPUS
    samples = load_corpus(path)
    return Task(
        dataset=MemoryDataset(samples, name="reader_audit"),
        solver=audit_reader(reader, flag("json_schema", json_schema)),
        scorer=reader_accuracy(),
        metadata={"corpus": str(path), "replies": len(samples)},
    )
