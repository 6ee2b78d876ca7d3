"""The handoff gates: every raw row is normalised or quarantined with its reason, and counts reconcile."""

from __future__ import annotations

import pytest

from rules.handoff.config import load_config
from rules.handoff.normalise import load_dir, normalise, restore, stored_columns
from rules.handoff.view import room_in_raw
from tests import conftest
from tests.rules.helpers import raw_frame, read_jsonl
from tests.rules.test_handoff_engine import ARTICLES, PHRASES, at, msg, room

SAMPLE = conftest.SEEDS / "handoff"
FIXTURES = conftest.FIXTURES / "handoff"
CFG = load_config()


def gate(messages=(), rooms=(), phrases=PHRASES, articles=ARTICLES):
    return normalise({"chat_messages": raw_frame("chat_messages", messages), "rooms": raw_frame("rooms", rooms),
                      "handoff_phrases": raw_frame("handoff_phrases", phrases), "help_articles": raw_frame("help_articles", articles)}, CFG)


def test_sample_quarantine_matches_the_fixture_and_reconciles():
    norm = load_dir(SAMPLE, CFG)
    got = sorted((r["dataset"], int(r["line"]), r["id"], r["reason_code"]) for r in norm.quarantine.to_dict("records"))
    expected = sorted((r["dataset"], r["line"], r["id"], r["reason_code"])
                      for r in read_jsonl(FIXTURES / "expected_quarantine.jsonl"))
    assert got == expected
    assert all(r["reconciles"] for r in norm.reconciliation().values())
    assert {k: (v["raw"], v["quarantined"]) for k, v in norm.reconciliation().items()} == {
        "chat_messages": (857, 3), "rooms": (204, 3), "handoff_phrases": (10, 3), "help_articles": (13, 3)}
    lines = (SAMPLE / "chat_messages.jsonl").read_text(encoding="utf-8").splitlines()
    for r in norm.quarantine[norm.quarantine["dataset"] == "chat_messages"].to_dict("records"):
        assert r["raw"] == lines[r["line"] - 1] and r["reason"].strip()


@pytest.mark.parametrize(("row", "code"), [
    ({"message_id": "M-1", "room_id": "", "sender": "ai", "text": "x", "sent_at": at("10:00:00")}, "empty_room_id"),
    ({"message_id": "M-1", "room_id": None, "sender": "ai", "text": "x", "sent_at": at("10:00:00")}, "empty_room_id"),
    ({"message_id": "M-1", "sender": "ai", "text": "x"}, "empty_room_id"),
    ({"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": "x"}, "missing_sent_at"),
    ({"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": "x", "sent_at": None}, "missing_sent_at"),
    ({"message_id": "M-1", "room_id": "R-1", "sender": "bot", "text": "x", "sent_at": at("10:00:00")}, "schema"),
    ({"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": 3, "sent_at": at("10:00:00")}, "schema"),
    ({"message_id": " ", "room_id": "R-1", "sender": "ai", "text": "x", "sent_at": at("10:00:00")}, "missing_id"),
    ({"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": "x", "sent_at": "10시"}, "bad_timestamp"),
    ("[1, 2]", "invalid_json"),
])
def test_each_bad_message_lands_in_quarantine_with_its_reason(row, code):
    norm = gate([row], [room("R-1")])
    assert norm.messages.empty
    assert list(norm.quarantine["reason_code"]) == [code]
    assert norm.reconciliation()["chat_messages"] == {"raw": 1, "normalised": 0, "quarantined": 1, "reconciles": True}


def test_a_bad_time_names_the_room_it_holds_among_good_messages():
    norm = gate([msg("M-1", "R-1", "ai", "x", at("10:00:00")), {**msg("M-2", " R-2 ", "ai", "x", at("10:00:00")), "sent_at": "10시"},
                 msg("M-3", "R-1", "ai", "x", at("10:01:00")), {**msg("M-4", "R-3", "ai", "x", at("10:00:00")), "sent_at": "2026-13-01"}],
                [room("R-1"), room("R-2"), room("R-3")])
    assert list(norm.messages["message_id"]) == ["M-1", "M-3"]
    assert norm.quarantine.set_index("id")["reason"].to_dict() == {
        "M-2": "sent_at '10시' is not ISO-8601: room 'R-2' is held",
        "M-4": "sent_at '2026-13-01' is not ISO-8601: room 'R-3' is held"}


def test_codes_and_ids_are_trimmed_and_text_is_kept_as_written():
    norm = gate([msg(" M-1 ", " R-1 ", " ai ", "  안녕하세요  ", at("10:00:00"), " A-1 ")], [room(" R-1 ", " C-1 ", " ai ")])
    m, r = norm.messages.iloc[0], norm.rooms.iloc[0]
    assert (m["message_id"], m["room_id"], m["sender"], m["text"], m["cited_article_id"]) == ("M-1", "R-1", "ai", "  안녕하세요  ", " A-1 ")
    assert (r["room_id"], r["customer_id"], r["closed_by"]) == ("R-1", "C-1", "ai")


def test_rooms_phrases_and_articles_gates():
    norm = gate(rooms=[room("R-1"), room("R-1", "C-9"), {"room_id": "R-2", "customer_id": " "}, {"room_id": "R-3", "customer_id": "C-3", "closed_by": "bot"}],
                phrases=[*PHRASES, {"trigger_phrase": "상담사", "first_reply_min": 5}, {"trigger_phrase": "급해요", "first_reply_min": 0},
                         {"trigger_phrase": "  ", "first_reply_min": 3}, {"trigger_phrase": "빨리", "first_reply_min": 2.0}],
                articles=[*ARTICLES, {"article_id": "A-1", "title": "중복"}, {"article_id": "A-3", "title": 7}, {"article_id": "A-4"}])
    q = norm.quarantine
    assert sorted(zip(q["dataset"], q["id"].fillna("-"), q["reason_code"])) == sorted([
        ("rooms", "R-1", "duplicate_id"), ("rooms", "R-2", "missing_customer"), ("rooms", "R-3", "schema"),
        ("handoff_phrases", "상담사", "duplicate_id"), ("handoff_phrases", "급해요", "schema"), ("handoff_phrases", "-", "missing_id"),
        ("help_articles", "A-1", "duplicate_id"), ("help_articles", "A-3", "schema"),
    ])
    assert norm.tables["handoff_phrases"].set_index("trigger_phrase")["first_reply_min"].to_dict() == {
        "직원 연결": 10, "상담사": 15, "환불": 20, "빨리": 2}


@pytest.mark.parametrize(("text", "room_id"), [
    ('{"message_id": "M-1", "room_id": " R-7 ", "sender": "ai"}', "R-7"),
    ('{"message_id": "M-1", "room_id": "R-7", "sender": "ai", "text": "잘린', "R-7"),
    ('"room_id": "R-\\uc8fc7", "sender"', "R-주7"),
    ('{"message_id": "M-1", "sen', None),
    ('{"room_id": 7}', None),
])
def test_the_room_of_a_rejected_line_is_read_when_it_can_be(text, room_id):
    assert room_in_raw(text) == room_id


def test_stored_tables_restore_to_the_same_instants():
    norm = load_dir(SAMPLE, CFG)
    stored = {d: norm.tables[d][stored_columns(d)] for d in norm.tables}
    back = restore(stored, CFG)
    assert back["chat_messages"]["sent_at_ns"].tolist() == norm.messages["sent_at_ns"].tolist()
    assert back["handoff_phrases"]["first_reply_min"].tolist() == norm.tables["handoff_phrases"]["first_reply_min"].tolist()
