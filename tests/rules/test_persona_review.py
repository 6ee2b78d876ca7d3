"""The review queue (seed 000, manual check 1): turns where the user re-named the character's
settings, sampled reproducibly for a person to judge.
"""

from __future__ import annotations

import pandas as pd
import pytest

from evals import domains
from rules.persona import engine
from rules.persona.config import PersonaConfig, load_config
from rules.persona.normalise import load_dir
from rules.persona.review import QUEUE_COLUMNS, candidate_count, cue_of, review_queue
from tests import conftest

SAMPLE = conftest.SEEDS / "persona"

# README "Review-queue material": 40 valid turns carry a cue phrase.
COMPARISON_SCENARIOS = ["021", "024", "034", "046", "060", "090", "095", "097", "101", "146", "165", "175", "185", "194"]
CANDIDATES = ({f"TN-12{s}" for s in COMPARISON_SCENARIOS} | {f"TN-13{s}" for s in COMPARISON_SCENARIOS}
              | {"TN-9035", *(f"TN-90{n}" for n in range(49, 57)), "TN-9064", "TN-9067", "TN-9068"})
NOT_CUES = ["TN-9058", "TN-9071", "TN-9001", "TN-9003", "TN-9045"]


def config_with(**review) -> PersonaConfig:
    data = load_config().model_dump()
    data["review"] = {**data["review"], **review}
    return PersonaConfig(**data)


@pytest.fixture(scope="module")
def turns() -> pd.DataFrame:
    config = load_config()
    norm = load_dir(SAMPLE, config)
    verdicts = engine.judge(norm.tables["turns"], norm.tables["profiles"], config)
    return norm.tables["turns"].merge(verdicts[["turn_no", "persona_code", "summary"]], on="turn_no")


@pytest.fixture(scope="module")
def queue(turns) -> pd.DataFrame:
    return review_queue(turns, load_config())


def test_the_sample_has_the_documented_candidates(turns):
    config = load_config()
    cued = {t for t, text in zip(turns["turn_no"], turns["user_text"]) if cue_of(text, config.review.cue_phrases)}
    assert len(CANDIDATES) == 40
    assert cued == CANDIDATES
    assert candidate_count(turns, config) == 40


def test_phrase_counts_match_the_readme(turns):
    phrases = load_config().review.cue_phrases
    counts = pd.Series([cue_of(t, phrases) for t in turns["user_text"]]).value_counts().to_dict()
    assert counts == {"이제부터 너는": 9, "설정 바꿔서": 9, "살이라고 치자": 8, "라고 부를게": 8, "직업은 이제": 6}


def test_the_queue_has_twenty_candidate_turns_with_blank_reviewer_columns(queue):
    assert list(queue.columns) == QUEUE_COLUMNS
    assert len(queue) == 20
    assert queue["turn_no"].is_unique
    assert set(queue["turn_no"]) <= CANDIDATES
    assert queue["reviewer_decision"].isna().all() and queue["reviewer_note"].isna().all()
    assert list(queue["turn_no"]) == sorted(queue["turn_no"])


def test_each_queued_turn_carries_its_cue_phrase_text_and_verdict(queue, turns):
    phrases = load_config().review.cue_phrases
    by_turn = turns.set_index("turn_no")
    for r in queue.to_dict("records"):
        assert r["cue_phrase"] in phrases and r["cue_phrase"] in r["user_text"]
        src = by_turn.loc[r["turn_no"]]
        for col in ("character_code_raw", "prompt_ver", "user_text", "reply_text", "persona_code", "summary"):
            assert r[col] == src[col], (r["turn_no"], col)


@pytest.mark.parametrize("turn_no", NOT_CUES)
def test_near_misses_and_plain_age_or_job_questions_are_not_candidates(turns, turn_no):
    text = turns.set_index("turn_no").loc[turn_no, "user_text"]
    assert cue_of(text, load_config().review.cue_phrases) is None
    q = review_queue(turns, config_with(sample_size=1000))
    assert turn_no not in set(q["turn_no"])


def test_decoys_hold_words_of_a_cue_phrase(turns):
    """The near misses are real traps: they share words with a cue phrase but not the phrase."""
    text = turns.set_index("turn_no")["user_text"]
    assert "직업" in text["TN-9058"] and "이제" in text["TN-9058"]
    assert "설정" in text["TN-9071"] and "이제" in text["TN-9071"]


def test_with_room_for_all_every_candidate_is_queued(turns):
    q = review_queue(turns, config_with(sample_size=1000))
    assert set(q["turn_no"]) == CANDIDATES


def test_the_queue_is_reproducible(turns, queue):
    again = review_queue(turns.copy(), load_config())
    assert list(again["turn_no"]) == list(queue["turn_no"])
    shuffled = review_queue(turns.sample(frac=1, random_state=7).reset_index(drop=True), load_config())
    assert list(shuffled["turn_no"]) == list(queue["turn_no"])


def test_the_queue_through_the_domain_is_the_same(queue):
    q, candidates, size = domains.get("persona").review(SAMPLE)
    assert (candidates, size) == (40, 20)
    assert list(q["turn_no"]) == list(queue["turn_no"])


def test_the_seed_decides_the_sample(turns, queue):
    other = review_queue(turns, config_with(seed=1))
    assert len(other) == 20 and set(other["turn_no"]) <= CANDIDATES
    assert set(other["turn_no"]) != set(queue["turn_no"])


def test_adding_unrelated_turns_does_not_change_the_sample(turns, queue):
    extra = turns.head(60).copy()
    extra["turn_no"] = [f"TN-77{i:03d}" for i in range(len(extra))]
    extra["user_text"] = "오늘 날씨 어때요?"
    q = review_queue(pd.concat([extra, turns, extra.assign(turn_no=extra["turn_no"] + "b")], ignore_index=True), load_config())
    assert list(q["turn_no"]) == list(queue["turn_no"])


def test_removing_an_unpicked_candidate_does_not_change_the_sample(turns, queue):
    unpicked = sorted(CANDIDATES - set(queue["turn_no"]))[0]
    q = review_queue(turns[turns["turn_no"] != unpicked], load_config())
    assert list(q["turn_no"]) == list(queue["turn_no"])


@pytest.mark.parametrize("size", [1, 5, 39, 40, 41])
def test_sample_size_is_respected(turns, size):
    q = review_queue(turns, config_with(sample_size=size))
    assert len(q) == min(size, 40)
    assert q["turn_no"].is_unique


def test_a_larger_sample_contains_the_smaller_one(turns):
    small = set(review_queue(turns, config_with(sample_size=5))["turn_no"])
    large = set(review_queue(turns, config_with(sample_size=20))["turn_no"])
    assert small < large


def test_configured_cue_phrases_decide_the_candidates(turns):
    q = review_queue(turns, config_with(cue_phrases=["직업은 이제"], sample_size=100))
    assert len(q) == 6 and set(q["cue_phrase"]) == {"직업은 이제"}


def test_no_candidates_gives_an_empty_queue_with_the_columns(turns):
    q = review_queue(turns, config_with(cue_phrases=["이 문구는 어디에도 없습니다"]))
    assert q.empty and list(q.columns) == QUEUE_COLUMNS


def test_a_missing_user_text_is_not_a_candidate():
    phrases = load_config().review.cue_phrases
    assert cue_of(None, phrases) is None and cue_of(float("nan"), phrases) is None
    assert cue_of("이제부터 너는 탐정이야", phrases) == "이제부터 너는"


@pytest.mark.parametrize("text", [
    "너는 이제부터 탐정이야",            # the words of "이제부터 너는", the other way round
    "설정은 그대로 두고 바꿔서 말해 줘",  # "설정" and "바꿔서", not the phrase
    "직업을 이제 막 바꿨는데",           # the TN-9058 decoy
    "이제 설정 얘기 말고",               # the TN-9071 decoy
    "스무 살이라고? 치자면 그렇지",      # "살이라고" and "치자" apart
])
def test_a_cue_phrase_must_appear_as_written(text):
    assert cue_of(text, load_config().review.cue_phrases) is None


@pytest.mark.parametrize(("text", "phrase"), [
    ("오늘부터 서윤이라고 부를게!", "라고 부를게"),
    ("설정 바꿔서 형사 해 줘", "설정 바꿔서"),
    ("너 스무 살이라고 치자", "살이라고 치자"),
    ("직업은 이제 가수야", "직업은 이제"),
])
def test_a_cue_phrase_anywhere_in_the_text_is_found(text, phrase):
    assert cue_of(text, load_config().review.cue_phrases) == phrase
