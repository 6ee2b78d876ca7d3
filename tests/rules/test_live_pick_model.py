"""The `openai` tagger and summary writer against a small OpenAI-format server on loopback.

No real model endpoint is exercised here (nor anywhere in CI): `FakeEndpoint` answers each
request as the case needs — good answers, a tag outside the vocabulary, malformed JSON, a wrong
verdict, a summary citing a missing column, a changed number, an impolite sentence, a timeout,
a 500 — and every case must end in the discard or fallback the seed names, with the run complete
and `verdicts validate` passing on what it wrote.
"""

from __future__ import annotations

import json
import logging

import pytest

from evals import domains
from rules.live_pick import verdicts as V
from rules.live_pick.model.client import EndpointSettings
from rules.live_pick.model.tagger import OpenAITagger
from tests.conftest import SEEDS
from tests.rules.fake_chat_endpoint import FakeEndpoint, user_text

SAMPLE = SEEDS / "live_pick"
KEY = "sk-test-never-logged"


def gold_tags_by_body() -> dict[str, list | None]:
    out = {}
    for text in (SAMPLE / "live_chat.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj.get("body"), str):
            out[obj["body"]] = obj.get("topic_tags")
    return out


@pytest.fixture
def env(monkeypatch):
    def use(url: str, **extra):
        monkeypatch.setenv("VERDICTS_OPENAI_URL", url)
        monkeypatch.setenv("VERDICTS_OPENAI_MODEL", "test-model")
        monkeypatch.setenv("VERDICTS_OPENAI_KEY", KEY)
        monkeypatch.setenv("VERDICTS_OPENAI_TIMEOUT", "0.3")
        monkeypatch.setenv("VERDICTS_OPENAI_RETRIES", "1")
        for k, v in extra.items():
            monkeypatch.setenv(k, v)
    return use


# -- tagger --------------------------------------------------------------------------------------

TAGGER_CASES = {
    "하루야 오늘 간식 뭐 먹었어?": (200, json.dumps({"tags": ["요리"]})),       # outside 하루's vocabulary
    "하루 시험 언제 끝나?": (200, "학교생활이요"),                                 # not JSON
    "오늘 목소리 왜 이렇게 좋아?": (200, json.dumps({"tags": "노래"})),         # JSON, not a list
    "이번 시즌 랭크 몇 찍었어?": ("sleep", 1.0),                                   # past the timeout, both attempts
    "다음 곡 뭐야?": (500, ""),                                                    # server error, both attempts
}
DISCARDED = {  # msg_id → (discard, tagger answer)
    "MSG-20260908-2401": ("outside_vocabulary", ["요리"]),
    "MSG-20260908-2402": ("malformed_answer", None),
    "MSG-20260908-1401": ("malformed_answer", None),
    "MSG-20260908-2404": ("timeout", None),
    "MSG-20260908-1405": ("endpoint_error", None),
}


def tagger_answer(gold):
    def answer(request):
        body = user_text(request).split("chat line: ", 1)[1]
        if body in TAGGER_CASES:
            return TAGGER_CASES[body]
        return 200, json.dumps({"tags": gold.get(body) or []}, ensure_ascii=False)
    return answer


def test_openai_tagger_discards_every_bad_answer_and_the_run_validates(env, caplog):
    caplog.set_level(logging.DEBUG)
    domain = domains.get("live_pick")
    with FakeEndpoint(tagger_answer(gold_tags_by_body())) as server:
        env(server.url)
        judged = domain.judge_dir(SAMPLE, tags="openai")
    rows = {r["msg_id"]: r for r in judged.rows}
    assert len(rows) == 80  # the run completes
    for msg_id, (discard, answer) in DISCARDED.items():
        p = rows[msg_id]["provenance"]
        assert (p["tagger"], p["discard"], p["answer"], p["tags"]) == ("openai", discard, answer, None), msg_id
        assert rows[msg_id]["verdict"] == V.OUT_OF_WORLD and rows[msg_id]["rank_in_window"] is None
    assert "어휘 밖" in rows["MSG-20260908-2401"]["summary"] and "제시간에" in rows["MSG-20260908-2404"]["summary"]
    gold = {m: t for m, t in zip(judged.normalised.chat["msg_id"], judged.normalised.chat["topic_tags"])}
    for m, r in rows.items():
        if m not in DISCARDED:  # good answers are used as they came (2408 and 2409 leave 하루's vocabulary)
            assert r["provenance"]["answer"] == (gold[m] or None), m
            assert r["provenance"]["discard"] in (None, "no_tag", "outside_vocabulary"), m
    assert rows["MSG-20260908-2408"]["provenance"]["discard"] == "outside_vocabulary"
    assert rows["MSG-20260908-1402"]["provenance"]["tags"] == ["메타발언"]
    # the request asked for JSON within the line's vocabulary, with the key as a bearer token
    first = server.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["body"]["model"] == "test-model"
    assert first["body"]["response_format"] == {"type": "json_object"} and "allowed tags" in user_text(first["body"])
    assert first["headers"]["Authorization"] == f"Bearer {KEY}"
    # bounded retries: two attempts each for the timeout and the 500, one for every other line
    bodies = [user_text(r["body"]).split("chat line: ", 1)[1] for r in server.requests]
    assert bodies.count("이번 시즌 랭크 몇 찍었어?") == 2 and bodies.count("다음 곡 뭐야?") == 2
    assert bodies.count("하루 시험 언제 끝나?") == 1
    assert KEY not in caplog.text and KEY not in repr(EndpointSettings.from_env())
    checks, _ = domain.check_dir(SAMPLE, judged.rows)
    assert [c.id for c in checks if not c.passed] == []


def test_openai_tagger_spends_at_most_the_budget_per_window(env):
    with FakeEndpoint(lambda request: (200, json.dumps({"tags": ["노래"]}))) as server:
        env(server.url, VERDICTS_OPENAI_BUDGET="2")
        tagger = OpenAITagger.from_env()
        vocab = frozenset({"노래"})
        proposals = tagger.propose(["a", "b", "c", "d"], [vocab] * 4, [("CH-1", 0)] * 3 + [("CH-1", 30)])
    assert [p.failure for p in proposals] == [None, None, "over_budget", None]
    assert len(server.requests) == 3


def test_the_openai_adapters_need_their_endpoint_settings(monkeypatch, tmp_path):
    from tests.cli.helpers import run

    for var in ("VERDICTS_OPENAI_URL", "VERDICTS_OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    code, _, stderr = run("judge", "live_pick", "--input", SAMPLE, "--out", tmp_path / "v.jsonl", "--tags", "openai")
    assert code == 2 and "VERDICTS_OPENAI_URL" in stderr


# -- summary writer ------------------------------------------------------------------------------

POLITE_LEAD = "운영자님께 알려 드립니다. "


def summary_answer(request):
    given = json.loads(user_text(request))
    msg, verdict, template = given["msg_id"][-4:], given["verdict"], given["template"]
    cite = [given["evidence"][0]]
    good = {"verdict": verdict, "summary": POLITE_LEAD + template, "evidence": cite}
    cases = {
        "1405": {**good, "verdict": V.OUT_OF_WORLD},                                                     # check 1
        "1406": {**good, "evidence": [{"dataset": "live_chat", "field": "tip_amount", "value": 0}]},   # check 6
        "1410": {**good, "summary": "live_chat.tip_amount 가 비어 있는 줄입니다."},                     # check 6, in the text
        "1407": {**good, "evidence": [{**cite[0], "value": 9999}]},                                     # check 7
        "1501": {**good, "summary": template.replace("10,000원", "20,000원")},                          # number
        "1408": {**good, "summary": "순위에 밀린 줄이라 다음 구간에서 다시 봅니다."},                    # numbers dropped
        "1402": {**good, "summary": "메타발언이라 뺐어."},                                               # check 8
    }
    if msg == "1403":
        return 200, "{not json"
    if msg == "1404":
        return "sleep", 1.0
    if msg == "1409":
        return 500, ""
    return 200, json.dumps(cases.get(msg, good), ensure_ascii=False)


FALLBACKS = {
    "MSG-20260908-1405": "wrong_verdict", "MSG-20260908-1406": "missing_column", "MSG-20260908-1407": "changed_value",
    "MSG-20260908-1410": "missing_column",
    "MSG-20260908-1501": "changed_number", "MSG-20260908-1408": "missing_number", "MSG-20260908-1402": "impolite",
    "MSG-20260908-1403": "malformed_answer", "MSG-20260908-1404": "timeout", "MSG-20260908-1409": "endpoint_error",
}


def test_openai_summaries_are_kept_only_when_they_pass_the_checks(env):
    from rules.common.json_columns import Encoded, json_texts
    from rules.live_pick.summaries import provenance_counts, summary_counts

    domain = domains.get("live_pick")
    template = {r["msg_id"]: r for r in domain.judge_dir(SAMPLE).rows}
    with FakeEndpoint(summary_answer) as server:
        env(server.url)
        judged = domain.judge_dir(SAMPLE, summaries="openai")
    rows = {r["msg_id"]: r for r in judged.rows}
    assert set(rows) == set(template)  # the run completes, one row per line
    for msg_id, r in rows.items():
        t = template[msg_id]
        # the rules' verdict and evidence are never the model's
        assert (r["verdict"], r["evidence"], r["rank_in_window"], r["hedge"]) == (t["verdict"], t["evidence"], t["rank_in_window"], t["hedge"])
        p = r["provenance"]
        if msg_id in FALLBACKS:
            assert (p["summary"], p["summary_fallback"], r["summary"]) == ("template", FALLBACKS[msg_id], t["summary"]), msg_id
        else:
            assert (p["summary"], p["summary_fallback"], r["summary"]) == ("openai", None, POLITE_LEAD + t["summary"]), msg_id
    counts = summary_counts(judged.rows)
    assert counts["kept"] == 80 - len(FALLBACKS) and counts["fallback"] == len(FALLBACKS)
    assert counts["reasons"]["timeout"] == 1 and counts["reasons"]["wrong_verdict"] == 1
    # provenance given as JSON texts (as a written part carries it) is counted alike
    encoded = Encoded(json_texts([r["provenance"] for r in judged.rows])[0])
    assert provenance_counts(encoded) == counts
    checks, _ = domain.check_dir(SAMPLE, judged.rows)
    assert [c.id for c in checks if not c.passed] == []
    assert len([r for r in server.requests if json.loads(user_text(r["body"]))["msg_id"].endswith("1409")]) == 2
