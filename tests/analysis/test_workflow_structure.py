"""The structural missing-information detector (issue 47): what the request needs against what the record provides."""

from __future__ import annotations

import re
from functools import lru_cache

from hypothesis import given
from hypothesis import strategies as st

from clinical_cf.analysis.workflow_controller import detect, structure_audit
from clinical_cf.analysis.workflow_structure import (
    blocks,
    detect_missing,
    needs_of,
    paraphrase_episodes,
    unmet_needs,
)
from clinical_cf.catalog.workflow import EPISODES_PATH
from clinical_cf.catalog.workflow.episodes import load_episodes


@lru_cache(maxsize=1)
def episodes():
    return load_episodes(EPISODES_PATH)


def test_every_missing_episode_of_the_benchmark_is_found_and_few_others_are_flagged():
    flagged = {e.id: detect_missing(e.text()) for e in episodes()}
    missing = [e.id for e in episodes() if e.variant == "missing"]
    others = [e.id for e in episodes() if e.variant != "missing"]
    assert all(flagged[i] for i in missing)
    assert sum(flagged[i] for i in others) / len(others) < 0.05
    # The lexical detector it is compared with finds none of them (the finding docs/workflow.md reports).
    assert not any(detect(e.text())["missing"] for e in episodes() if e.variant == "missing")


def test_the_audit_reports_both_detectors_on_every_set():
    table = structure_audit()
    assert set(table["detector"]) == {"lexical", "structural"}
    assert set(table["episodes"]) == {"bundled (400)", "bundled test split", "paraphrases (seen while tuning)", "held-out paraphrases"}
    held = table[table["episodes"] == "held-out paraphrases"].set_index("detector")
    assert held.loc["structural", "recall"] > held.loc["lexical", "recall"]


def test_paraphrase_episodes_differ_from_their_clean_only_in_the_deleted_fact():
    frame = paraphrase_episodes(key="held_out")
    for seed, pair in frame.groupby("seed_id"):
        clean = pair[pair["variant"] == "clean"]["text"].iloc[0]
        missing = pair[pair["variant"] == "missing"]["text"].iloc[0]
        assert blocks(clean)["request"] == blocks(missing)["request"], seed
        assert len(missing) < len(clean), seed


@lru_cache(maxsize=1)
def provided_clean():
    """Clean episodes whose every typed need is provided (not flagged), with at least one typed need."""
    return [e for e in episodes() if e.variant == "clean" and not unmet_needs(e.text()) and needs_of(blocks(e.text())["request"])]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if s.strip()]


@given(index=st.integers(min_value=0), which=st.integers(min_value=0))
def test_deleting_what_provides_a_need_flags_the_episode(index, which):
    # The generated corpus: a clean episode with a typed need, minus every record sentence that provides that need.
    episode = provided_clean()[index % len(provided_clean())]
    text = episode.text()
    parts = blocks(text)
    needs = needs_of(parts["request"])
    need = needs[which % len(needs)]
    record = "\n".join(parts.get(k, "") for k in ("chart", "event"))
    providers = [s for s in _sentences(record.replace("\n", " ")) if need.provides.search(s)]
    pruned = text
    for sentence in providers:
        pruned = pruned.replace(sentence, "")
    assert need.name in unmet_needs(pruned), (episode.id, need.name, providers)


@given(index=st.integers(min_value=0), filler=st.sampled_from([
    "The ward clerk updated the bed board.", "Visiting hours were extended at the weekend.",
    "The patient's daughter phoned to ask about parking.", "A leaflet about the hospital café was left at the bedside.",
]))
def test_adding_irrelevant_text_never_creates_a_gap(index, filler):
    episode = provided_clean()[index % len(provided_clean())]
    text = episode.text().replace("\n\nRequest:", f" {filler}\n\nRequest:")
    assert not detect_missing(text), episode.id
