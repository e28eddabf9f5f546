"""Workflow seeds and episodes: counts, determinism, exact pairing, locks and validation errors."""

import json
from collections import Counter

import pytest

from clinical_cf.catalog.workflow import EPISODES_PATH, SEEDS_PATH, TASK_CLASSES, VARIANTS
from clinical_cf.catalog.workflow.assemble import LATE_HEADER, STALE_HEADER, assemble, dumps, write_episodes
from clinical_cf.catalog.workflow.episodes import load_episodes
from clinical_cf.catalog.workflow.seeds import load_seeds
from clinical_cf.core.errors import CatalogError
from clinical_cf.core.locking import read_lock
from helpers import FIXTURES


@pytest.fixture(scope="module")
def seeds():
    return load_seeds(SEEDS_PATH)


@pytest.fixture(scope="module")
def episodes(seeds):
    return assemble(seeds)


def test_forty_seeds_ten_per_class_fixed_split(seeds):
    assert len(seeds) == 40
    assert Counter(s.task_class for s in seeds) == {c: 10 for c in TASK_CLASSES}
    dev = [s for s in seeds if s.split == "dev"]
    assert len(dev) == 8 and Counter(s.task_class for s in dev) == {c: 2 for c in TASK_CLASSES}
    assert sorted(s.id.split("-")[1] for s in dev) == ["02"] * 4 + ["07"] * 4


def test_four_hundred_episodes_and_reference_profile(episodes):
    assert len(episodes) == 400 and len({e.id for e in episodes}) == 400
    assert Counter(e.variant for e in episodes) == {v: 80 for v in VARIANTS}
    escalate = [e for e in episodes if e.reference_action == "ESCALATE"]
    assert len(escalate) == 130  # about a third, as in the paper
    assert all(e.reference_action == "ESCALATE" for e in episodes if e.variant == "late_risk")
    # The missing variant by design requires (and accepts) no escalation.
    assert not any("ESCALATE" in e.acceptable_actions for e in episodes if e.variant == "missing")
    assert all(e.reference_action == "ANSWER" for e in episodes if e.variant == "clean")
    assert Counter(e.split for e in episodes) == {"dev": 80, "test": 320}
    assert all(e.rationale for e in episodes)


def test_checked_in_episodes_are_the_assembly_byte_for_byte(episodes, tmp_path):
    assert EPISODES_PATH.read_text(encoding="utf-8") == dumps(episodes)
    out = write_episodes(SEEDS_PATH, tmp_path / "again.jsonl")
    assert out.read_bytes() == EPISODES_PATH.read_bytes()
    assert dumps(assemble(load_seeds(SEEDS_PATH))) == dumps(episodes)  # deterministic


def test_bundled_seeds_match_their_lock():
    assert read_lock(SEEDS_PATH).registered


def test_variants_differ_from_clean_only_in_the_manipulated_part(episodes):
    by_id = {e.id: e for e in episodes}
    for clean in (e for e in episodes if e.variant == "clean"):
        base = clean.turns[0].content
        missing = by_id[f"{clean.pair_key}.missing"]
        assert len(missing.turns) == 1
        assert missing.turns[0].content.replace(" ", "") == base.replace(missing.manipulated, "").replace(" ", "")
        assert missing.manipulated in base and missing.manipulated not in missing.turns[0].content
        stale = by_id[f"{clean.pair_key}.stale"]
        assert stale.turns[0].content.replace(f"{STALE_HEADER}\n{stale.manipulated}\n\n", "") == base
        conflict = by_id[f"{clean.pair_key}.conflict"]
        assert conflict.turns[0].content.replace(" " + conflict.manipulated, "") == base
        late = by_id[f"{clean.pair_key}.late_risk"]
        assert late.turns[0].content == base and len(late.turns) == 2
        assert late.turns[1].content == f"{LATE_HEADER}\n{late.manipulated}"
        assert late.manipulated not in base


def test_parameterizations_change_the_surface(episodes):
    by_key = {(e.seed_id, e.parameterization, e.variant): e for e in episodes}
    for e in episodes:
        if e.parameterization == 1:
            other = by_key[(e.seed_id, 2, e.variant)]
            assert other.text() != e.text()
            assert (other.reference_action, other.acceptable_actions) == (e.reference_action, e.acceptable_actions)


def test_episode_errors_name_file_episode_and_field(tmp_path):
    record = json.loads(EPISODES_PATH.read_text(encoding="utf-8").splitlines()[0])
    record["acceptable_actions"] = ["ABSTAIN"]
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError) as err:
        load_episodes(path)
    assert err.value.file == str(path) and err.value.entry == record["id"] and err.value.field == "acceptable_actions"
    record["acceptable_actions"] = ["ANSWER"]
    record["variant"] = "sideways"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="variant") as err:
        load_episodes(path)
    assert err.value.entry == record["id"] and err.value.field == "variant"


def test_user_episode_fixture_validates():
    items = load_episodes(FIXTURES / "workflow_episodes_user.jsonl")
    assert {e.variant for e in items} >= {"clean", "conflict", "late_risk"}


def test_seed_errors_name_the_seed_and_the_problem(tmp_path):
    text = SEEDS_PATH.read_text(encoding="utf-8").replace("      admission: a community-acquired pneumonia\n", "", 1)
    path = tmp_path / "seeds.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match="admission") as err:
        load_seeds(path)
    assert err.value.entry == "doc-01" and err.value.field == "parameterizations"
    bad = SEEDS_PATH.read_text(encoding="utf-8").replace(
        "late_risk: {action: ESCALATE, rationale: \"Coffee-ground", "late_risk: {action: ANSWER, rationale: \"Coffee-ground", 1)
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(CatalogError, match="late_risk") as err:
        load_seeds(path)
    assert err.value.entry == "doc-01" and err.value.field == "reference"
