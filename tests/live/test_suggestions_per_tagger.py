"""The week-3 loop on each tagger: the same broadcast, judged live with gold tags, the lexicon, kiwi
(the live default) and an OpenAI-format model, yields the same per-topic figures and the same two
suggestions (cooldown 180 → 150, 팬과의추억 3 → 2): the figures come from the tags each verdict was
judged with, whichever tagger gave them. A broadcast too thin to suggest anything says which topic
and why."""

from __future__ import annotations

import json

import pytest

from assets.resources.warehouse import _engine
from live import sheets
from rules.live_pick.config import load_config
from rules.live_pick.suggest import suggest
from tests.live.broadcasts import FIRST, judge_and_close, write_raw
from tests.rules.fake_chat_endpoint import FakeEndpoint, user_text

TOPIC_OF = {json.loads(t)["body"]: json.loads(t)["topic_tags"] for t in FIRST}


def model_answer(request):
    """The fake model reads the body as a person would: the topic its line was written for."""
    body = user_text(request).split("chat line: ", 1)[1]
    return 200, json.dumps({"tags": TOPIC_OF.get(body) or []}, ensure_ascii=False)


@pytest.fixture
def endpoint(monkeypatch):
    with FakeEndpoint(model_answer) as server:
        for k, v in {"VERDICTS_OPENAI_URL": server.url, "VERDICTS_OPENAI_MODEL": "test-model", "VERDICTS_OPENAI_TIMEOUT": "5",
                     "VERDICTS_OPENAI_RETRIES": "1"}.items():
            monkeypatch.setenv(k, v)
        yield server


@pytest.mark.parametrize("tagger", ["gold", "lexicon", "kiwi", "model", "openai"])
def test_every_tagger_gives_the_figures_and_suggestions_of_the_gold_run(tagger, tmp_path, request):
    if tagger == "openai":
        request.getfixturevalue("endpoint")
    engine = _engine(f"sqlite:///{tmp_path / 'wh.sqlite'}")
    bid = judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST, tags=tagger)["broadcast_id"]
    broadcast = sheets.find_broadcast(engine, bid, "Asia/Seoul")
    rows = sheets.broadcast_rows(engine, "CH-0007", int(broadcast["first_window_ns"]), int(broadcast["last_window_ns"]))
    expected = "kiwi" if tagger == "model" else tagger
    assert {r["provenance"]["tagger"] for r in rows} == {expected}
    if tagger != "gold":  # the topic each verdict cites is the tagger's reading of the body, not the gold column
        assert not any(e["field"] == "topic_tags" for r in rows for e in r["evidence"])
    fig = sheets.broadcast_figures(engine, bid)
    per_topic = {p["topic"]: (p["lines"], p["answered"], p["cooldown_held"], p["closeness_held"], p["deferred"]) for p in fig["per_topic"]}
    assert per_topic == {"게임": (12, 6, 0, 0, 6), "노래": (12, 2, 10, 0, 0), "팬과의추억": (6, 0, 0, 6, 0)}
    found = {(s["field"], s["topic"]): (s["current_value"], s["proposed_value"], s["status"]) for s in sheets.list_suggestions(engine, bid)}
    assert found == {("reply_cooldown_sec", None): (180, 150, "open"), ("min_closeness_by_topic", "팬과의추억"): (3, 2, "open")}
    assert "게임, 노래 주제는 친밀 단계로 뺀 줄이 없어 기준을 낮출 근거가 없습니다." in fig["notes"]


def test_a_thin_broadcast_names_its_topics_and_why(tmp_path):
    engine = _engine(f"sqlite:///{tmp_path / 'wh.sqlite'}")
    bid = judge_and_close(engine, write_raw(tmp_path / "raw"), FIRST[:12] + FIRST[24:27], tags="kiwi")["broadcast_id"]
    broadcast = sheets.find_broadcast(engine, bid, "Asia/Seoul")
    rows = sheets.broadcast_rows(engine, "CH-0007", int(broadcast["first_window_ns"]), int(broadcast["last_window_ns"]))
    history = sheets.history(engine, "CH-0007")
    result = suggest(rows, {**history[0], "sheet_version": 1}, "B", load_config())
    assert result.thin and result.suggestions == []
    assert result.notes == ["이 방송에서 세계관 안의 줄이 15건(노래 12건, 팬과의추억 3건)뿐이라 기준 20건에 못 미칩니다. "
                            "자료가 얇아 이번에는 설정표 변경을 제안하지 않습니다."]
