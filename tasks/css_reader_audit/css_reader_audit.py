"""CSS reader audit: how well does a reader model read replies, and would its wrong readings reach a score?

    inspect eval clinical_cf/css_reader_audit --model <any> --model-role reader=<reader to audit>

The model under test is not called (`--model` only names a model; without `--model-role reader` the
model itself is audited as reader). Each sample is one reply of the bundled corpus
(`catalog/css/reader_audit_replies.yaml`, pre-registered and locked: CSS recommendations, agent submissions, MedPIC answers,
workflow actions and sensitivity distributions in many formats, lying and hedging traps included,
each with its known reading). Metrics: `accuracy`, `lie_acceptance_rate` (wrong readings the
verification accepted: 0 for a reader fit for use), `wrong_reading_rate`, `decline_rate`,
`refused_correct_rate`, accuracy per suite (`clinical_cf.scorers.reader_audit`).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from clinical_cf.catalog.css import CSS_DIR
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.loading import load_yaml
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.solvers.reader_audit import audit_reader
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task

CORPUS = CSS_DIR / "reader_audit_replies.yaml"
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
def css_reader_audit(
    corpus: UserFile = None, reader: RoleName = "reader", json_schema: bool = True, allow_unregistered: bool = False,
    second_reader: RoleName = "second_reader",
) -> Task:
    """The reader role itself: its accuracy and lie-acceptance rate on a corpus of replies with known readings
    (see [Auditing the reader](docs/replies-and-judges.md)).

    Args:
        corpus: A reply corpus YAML in the bundled file's form (default: the bundled, locked corpus).
        reader: The model role audited (default `reader`; unbound: the `--model` itself).
        json_schema: Send the reader's schema as `response_schema` (off for servers that reject it).
        allow_unregistered: Run even if the corpus does not match its lock.
        second_reader: The second reader's model role, audited as a pair with `reader` (`agreement_rate`,
            `pair_lie_rate`); `judge` audits the judge as the second reader. Unbound: the first reader only.
    """
    return build_task(SPEC, **locals())


def _parts(args: SimpleNamespace) -> TaskParts:
    path = args.corpus or CORPUS
    samples = load_corpus(path)
    return TaskParts(
        samples=samples,
        solver=audit_reader(args.reader, args.json_schema, args.second_reader),
        scorers=[reader_accuracy()],
        dataset="css_reader_audit",
        metadata={"corpus": str(path), "replies": len(samples)},
    )


SPEC = TaskSpec(
    suite=CSS, arguments=css_reader_audit, inputs=lambda args: TaskInputs(catalogs=[args.corpus or CORPUS]), parts=_parts,
)
