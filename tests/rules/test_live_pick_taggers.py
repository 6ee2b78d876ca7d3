"""The taggers by name: kiwi on hand-written inflected and spaced forms, near misses and
emoji-only lines; the registry; the vocabulary rule every tagger answer goes through."""

from __future__ import annotations

import pandas as pd
import pytest

from rules.live_pick import names as N, tagging as G, tags as T
from rules.live_pick.tagger_kiwi import shared_tagger
from rules.live_pick.tagger_lexicon import LexiconTagger
from tests.conftest import modules_after_judging


@pytest.fixture(scope="module")
def kiwi():
    return shared_tagger()


def answers(tagger, bodies):
    return [p.answer for p in tagger.propose(bodies)]


@pytest.mark.parametrize("body, tags", [
    ("노래 한 곡 불러줘", ["노래"]),            # spaced, and a verb stem glued to its ending
    ("노래를 불러 줘", ["노래"]),              # a particle on the noun
    ("노래불러줘", ["노래"]),                  # no spaces at all
    ("한 곡만 더 불러 줄 수 있어?", ["노래"]),
    ("어제 부른 곡 제목이 뭐였지", ["노래"]),   # past form of 부르다
    ("우리 처음 만났던 날 기억나?", ["팬과의추억"]),
    ("첫 팬미팅 때 기억나요?", ["팬과의추억"]),
    ("게임 한판 더 해요", ["게임"]),
    ("라면 끓였어?", ["요리"]),
    ("시험 끝났어? 게임 하자", ["학교생활", "게임"]),
    ("너 GPT 맞지?", ["메타발언"]),
    ("gpt랑 얘기하는 거 같아", ["메타발언"]),    # Latin case does not matter
    ("주말에 친구들이랑 보드게임 했어", ["게임"]),  # a compound the analyser keeps whole, headed by an entry
    ("신혼여행 어디로 갔어?", ["여행"]),
    ("겜 한 판 할래?", ["게임"]),                  # a clipped variant of an entry
])
def test_kiwi_meets_inflected_and_spaced_forms(kiwi, body, tags):
    assert answers(kiwi, [body]) == [tags]


@pytest.mark.parametrize("body", [
    "작곡 언제부터 했어?",        # 작곡 holds 곡 but is not a song request (the lexicon's substring miss)
    "미아야 오늘 학교에서 뭐 했어?",  # 오늘 … 뭐 했어 is 일상 only when the words run together
    "하루야 귀여워",              # a character named like the word 하루 is no 일상 topic
    "실제 나이는 비밀이지?",       # 실제 alone is not 메타발언's 실제로
    "작곡가 누구야?",             # a one-syllable entry (곡) is never a compound's head
])
def test_kiwi_near_misses_stay_out_of_the_neighbouring_topic(kiwi, body):
    found = answers(kiwi, [body])[0] or []
    assert "노래" not in found and "일상" not in found and "메타발언" not in found


def test_lexicon_substring_misses_that_kiwi_does_not(kiwi):
    assert answers(LexiconTagger(), ["작곡 언제부터 했어?"]) == [["노래", "작곡"]]
    assert answers(kiwi, ["작곡 언제부터 했어?"]) == [["작곡"]]
    assert answers(LexiconTagger(), ["노래불러줘"]) == [["노래"]] and answers(LexiconTagger(), ["곡 부르자"]) == [["노래"]]


@pytest.mark.parametrize("body", ["ㅠㅠㅠㅠ 🥹🥹", "💄✨✨", "ㅋㅋㅋㅋㅋ", "👍", "!!", ""])
def test_kiwi_finds_nothing_on_emoji_and_exclamations(kiwi, body):
    assert answers(kiwi, [body]) == [None]


def test_every_tagger_answer_goes_through_the_vocabulary_rule(kiwi):
    chat = pd.DataFrame({"msg_id": ["a", "b", "c"], "character_id": ["CH-0008"] * 3,
                         "body": ["노래 불러 줘", "시험 언제 끝나?", "ㅋㅋ"], "topic_tags": [None] * 3,
                         "sent_at_ns": [0, 0, 0]}, index=[5, 6, 7])
    sheet = pd.DataFrame({"character_id": ["CH-0008"], "world_topic_tags": [["학교생활", "게임"]], "banned_tags": [["연애"]]})
    out = T.tag_lines(chat, sheet, "model")  # the alias of the live default
    assert list(out.index) == [5, 6, 7] and set(out["tagger"]) == {"kiwi"}
    assert list(out["answer"]) == [["노래"], ["학교생활"], None]
    assert list(out["tags"]) == [None, ["학교생활"], None]  # 노래 is outside 하루's vocabulary: answer discarded
    assert list(out["discard"]) == [G.OUTSIDE_VOCABULARY, None, G.NO_TAG]


def test_the_registry_names_every_tagger_once():
    assert N.canonical("model") == N.LIVE_DEFAULT == "kiwi"
    assert set(N.NAMES) == {"gold", "lexicon", "kiwi", "openai", "model"}
    assert T.tag_source("kiwi") is T.tag_source("model")  # one analyser per process
    with pytest.raises(ValueError, match="unknown tagger 'bogus'.*gold"):
        T.tag_source("bogus")


def test_judge_with_gold_tags_never_loads_the_analyser(tmp_path):
    modules = modules_after_judging("live_pick", tmp_path / "v.jsonl")
    assert "kiwipiepy" not in modules and "httpx" not in modules, [m for m in modules if "kiwi" in m]


def test_kiwi_analyses_a_body_once_and_answers_it_the_same_again():
    from rules.live_pick.tagger_kiwi import KiwiTagger, content_lemmas, match

    tagger = KiwiTagger()
    calls = []
    tokenize = tagger.kiwi.tokenize
    tagger.kiwi = type("Counting", (), {"tokenize": lambda self, text: calls.append(text) or tokenize(text)})()
    bodies = ["오늘 노래 불러 주세요", "ㅋㅋㅋ", "오늘 노래 불러 주세요", None]
    first = tagger.lemmas(bodies)
    again = tagger.lemmas(bodies)
    assert first == again and first[0] == first[2] and first[3] == ()
    assert calls == ["오늘 노래 불러 주세요", "ㅋㅋㅋ"]
    assert first[:2] == [content_lemmas(tokenize(b)) for b in bodies[:2]]
    answers = tagger.propose(bodies)
    assert calls == ["오늘 노래 불러 주세요", "ㅋㅋㅋ"]  # the tags were kept with the lemmas
    assert [p.answer for p in answers] == [match(lemmas, tagger.vocabulary) or None for lemmas in first]
    answers[0].answer.append("changed")  # a caller's list is its own: the kept answer stays
    assert tagger.propose(bodies[:1])[0].answer == answers[2].answer


def test_the_shared_kiwi_tagger_is_built_once_when_threads_ask_together(monkeypatch):
    """`verdicts serve` starts building it beside the rest of start-up; the service asking for it
    meanwhile waits for that one instead of building a second."""
    import threading
    import time
    from functools import lru_cache

    from rules.live_pick import tagger_kiwi

    built = []

    class Slow:
        def __init__(self):
            time.sleep(0.2)
            built.append(self)

    monkeypatch.setattr(tagger_kiwi, "_built", lru_cache(maxsize=1)(Slow))  # the real one, cached, is put back after
    got = []
    threads = [threading.Thread(target=lambda: got.append(tagger_kiwi.shared_tagger())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and got == built * 3
