"""A lab's own eval script running clinical_cf next to its other Inspect tasks, as one `eval_set`.

    python examples/lab_eval_set.py --model openai/gpt-5 --judge anthropic/claude-opus-4-7 \
        --log-dir logs/lab-suite --limit 20

The clinical task is imported from the installed package and built with its own arguments, like
any task object; `inspect eval-set clinical_cf/css_family_d lab_suite/... ` is the CLI equivalent
(registered names resolve through the package's `inspect_ai` entry point).
`eval_set` retries failed samples and skips tasks whose logs already completed, so rerunning the
script after an interruption finishes the suite instead of starting over.
"""

from __future__ import annotations

import argparse
from typing import Any

from inspect_ai import Task, eval_set, task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from clinical_cf.tasks.css_family_d.css_family_d import css_family_d


@task
def lab_unit_conversion() -> Task:
    """Stands in for any task already in the lab's suite."""
    return Task(
        dataset=[
            Sample(input="Convert 2 g to mg. Reply with the number only.", target="2000"),
            Sample(input="Convert 500 mL to L. Reply with the number only.", target="0.5"),
        ],
        solver=generate(),
        scorer=match(numeric=True),
    )


def run_suite(
    model: str | Model,
    judge: str | Model | None,
    log_dir: str,
    limit: int | None = None,
    **eval_args: Any,
) -> tuple[bool, list[EvalLog]]:
    """Run a clinical task and the lab's own task together; returns eval_set's (success, logs)."""
    return eval_set(
        tasks=[css_family_d(controls="none"), lab_unit_conversion()],
        model=model,
        # The CSS judge is a model role; without one the model judges itself and every score says so.
        model_roles={"judge": judge} if judge else None,
        log_dir=log_dir,
        limit=limit,
        **eval_args,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--judge", default=None, help="judge model (role `judge`)")
    parser.add_argument("--log-dir", default="logs/lab-suite")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    success, logs = run_suite(args.model, args.judge, args.log_dir, args.limit)
    for log in logs:
        print(f"{log.eval.task}: {log.status}  {log.location}")
    raise SystemExit(0 if success else 1)


if __name__ == "__main__":
    main()
