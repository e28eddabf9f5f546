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

from types import SimpleNamespace

from inspect_ai import Task, task

from clinical_cf.catalog.css.reader_corpus import CORPUS, load_corpus
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.solvers.reader_audit import audit_reader
from clinical_cf.suites import CSS
from clinical_cf.tasks.arguments import RoleName, UserFile, checked_paths
from clinical_cf.tasks.build import TaskInputs, TaskParts, TaskSpec, build_task


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
