"""The reader audit runs offline with scripted reader roles (faithful, lying, hedging) and reports their rates."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, get_model, modelapi

from clinical_cf.core.errors import CatalogError
from clinical_cf.replies import final_answer
from clinical_cf.scorers.reader_audit import reader_accuracy
from clinical_cf.solvers.reader_audit import audit_reader, expand
from clinical_cf.tasks.css_reader_audit.css_reader_audit import CORPUS, css_reader_audit, load_corpus

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("replies_v3", ROOT / "bench" / "replies_v3.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


BENCH = _bench()
ENTRIES = [e for e in load_corpus(CORPUS)]


def _entry_for(shown: str) -> dict:
    """The corpus entry whose final answer the reader was shown (the audit's prompt holds exactly that)."""
    for sample in ENTRIES:
        meta = sample.metadata or {}
        if final_answer(expand(meta["reply"])).strip() and final_answer(expand(meta["reply"])).strip() == shown.strip():
            return meta
    return {}


class ScriptedReaderAPI(ModelAPI):
    """A reader role scripted by mode (the model name): faithful (the corpus truth, quoting the line that states
    each value), lying (a wrong reading with the best quotes the reply offers) or hedging (declines everything)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: object) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # type: ignore[override]
        shown = BENCH.reply_in_prompt("\n".join(m.text for m in input))
        entry = {**_entry_for(shown), "id": "?"}
        if self.model_name == "hedging" or not entry.get("suite"):
            data: dict = {"unreadable": True, "reason": "not sure"}
        elif self.model_name == "lying":
            lies = BENCH.lies(entry, shown)
            data = lies[0] if lies else {"unreadable": True, "reason": "no lie to tell"}
        else:
            data = BENCH.faithful_reading(entry, shown)
        out = ModelOutput.from_content(f"scripted/{self.model_name}", json.dumps(data))
        out.usage = ModelUsage(input_tokens=len(shown) // 4, output_tokens=20, total_tokens=len(shown) // 4 + 20)
        return out


@modelapi(name="scripted_reader")
def scripted_reader():
    return ScriptedReaderAPI


def _audit(mode: str, tmp_path: Path) -> dict:
    log = eval(css_reader_audit(), model="mockllm/model", model_roles={"reader": get_model(f"scripted_reader/{mode}")},
               display="none", log_dir=str(tmp_path / mode))[0]
    assert log.status == "success", log.error
    return {name: metric.value for score in log.results.scores for name, metric in score.metrics.items()}


@pytest.mark.slow
def test_audit_reports_each_scripted_readers_rates(tmp_path):
    faithful, lying, hedging = (_audit(mode, tmp_path) for mode in ("faithful", "lying", "hedging"))
    # The structural checks only refuse (issue 37): a few lies pass them (counted: 0.04 on the bundled corpus), and
    # only an independent second reader's agreement makes a reading count (the pair test below).
    assert faithful["lie_acceptance_rate"] == hedging["lie_acceptance_rate"] == 0 and lying["lie_acceptance_rate"] < 0.1
    assert faithful["refused_correct_rate"] < 0.05
    assert faithful["accuracy"] >= 0.95 and faithful["wrong_reading_rate"] <= 0.05
    assert lying["wrong_reading_rate"] >= 0.4 and lying["accuracy"] < faithful["accuracy"]
    assert hedging["decline_rate"] == 1 and hedging["wrong_reading_rate"] == 0
    assert 0 < hedging["accuracy"] < faithful["accuracy"]  # right only where the reply states no single answer
    assert {"accuracy_css", "accuracy_medpic", "accuracy_workflow", "accuracy_sensitivity"} <= set(faithful)


@pytest.mark.slow
def test_audit_reports_agreement_and_the_lie_rate_of_each_reader_pair(tmp_path):
    def pair(first: str, second: str) -> dict:
        log = eval(css_reader_audit(), model="mockllm/model", display="none", log_dir=str(tmp_path / f"{first}-{second}"),
                   model_roles={"reader": get_model(f"scripted_reader/{first}"), "second_reader": get_model(f"scripted_reader/{second}")})[0]
        assert log.status == "success", log.error
        return {name: metric.value for score in log.results.scores for name, metric in score.metrics.items()}

    faithful, liar_and_faithful, liars = pair("faithful", "faithful"), pair("lying", "faithful"), pair("lying", "lying")
    assert faithful["agreement_rate"] >= 0.4 and faithful["pair_lie_rate"] == 0
    assert liar_and_faithful["pair_lie_rate"] == 0  # an independent faithful reader never agrees with a lie
    # two readers telling the same lie: only the structural refusers stand in the way (the lying reader's own rate)
    assert 0 < liars["pair_lie_rate"] < 0.1
    assert liars["agreement_rate"] >= liar_and_faithful["agreement_rate"]


def test_corpus_loads_every_reader_read_reply_and_rejects_a_bad_entry(tmp_path):
    assert len(ENTRIES) >= 90 and {s.metadata["suite"] for s in ENTRIES} == {"css", "agent", "medpic", "workflow", "sensitivity"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {id: x, suite: medpic, format: f, reply: 'ANSWER: A', truth: [A]}\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="entry x: missing field 'options'"):
        load_corpus(bad)
    bad.write_text("- {id: x, suite: chess, format: f, reply: r, truth: none}\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="field 'suite'"):
        load_corpus(bad)


def test_audit_reader_and_reader_accuracy_score_a_faithful_reader_on_a_few_replies(tmp_path):
    """The task's own solver and scorer, on three replies the contract cannot read: a faithful reader is read right."""

    few = MemoryDataset(load_corpus(CORPUS)[:3])
    (log,) = eval(Task(dataset=few, solver=audit_reader("reader"), scorer=reader_accuracy()), model="mockllm/model",
                  model_roles={"reader": get_model("scripted_reader/faithful")}, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    assert metrics["lie_acceptance_rate"] == 0 and metrics["wrong_reading_rate"] == 0
