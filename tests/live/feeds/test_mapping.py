"""Each platform's mapping on its recorded frames (frames/<platform>.json, as the platform sends them):
one chat message → one `live_chat` line that passes the schema, with platform-qualified ids, the
platform's time in Asia/Seoul, the body as written, donations in won with the original beside them,
and topic_tags left to the tagger."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

import jsonschema
import pytest

from live.feeds import chzzk, twitch, youtube
from live.feeds.line import Donation, Message, live_chat_line, unpriced
from live.feeds.rates import load_rates
from tests.conftest import ROOT
from tests.live.feeds.fakes import recording

SCHEMA = json.loads((ROOT / "schemas" / "live_pick" / "live_chat.schema.json").read_text(encoding="utf-8"))
RATES = load_rates()
TZ = "Asia/Seoul"


def line(m: Message) -> dict:
    out = live_chat_line(m, "CH-0007", RATES, TZ)
    jsonschema.validate(out, SCHEMA)
    return out


# -- Chzzk ------------------------------------------------------------------------------------------
def chzzk_messages() -> tuple[list[Message], int]:
    rec = recording("chzzk")
    got, skipped = [], 0
    frames = [f for c in rec["connections"] for f in c["frames"]]
    frames += [{"cmd": chzzk.RECENT_CHAT, "bdy": {"messageList": c["recent"]}} for c in rec["connections"] if c.get("recent")]
    for f in frames:
        lines, others = chzzk.messages_of(f, "N1abcD")
        got += lines
        skipped += others
    return got, skipped


def test_chzzk_frames_map_to_lines_with_the_redelivered_and_recent_copies_sharing_ids():
    messages, skipped = chzzk_messages()
    assert skipped == 1  # the system notice is not a chat line
    ids = [m.msg_id for m in messages]
    assert len(ids) == 9 and len(set(ids)) == 6  # A twice live; B and C again in the recent chat
    first = line(messages[0])
    assert first == {
        "msg_id": "chzzk:N1abcD:f1a2b3c4d5e6f708192a3b4c5d6e7f80:1763622000000",
        "character_id": "CH-0007", "viewer_id": "chzzk:f1a2b3c4d5e6f708192a3b4c5d6e7f80",
        "sent_at": "2025-11-20T16:00:00.000+09:00", "body": "미아야 오늘 학교에서 뭐 했어?", "topic_tags": None,
        "donation_amount": 0, "is_question": True, "note": None}
    donation = line(messages[1])
    assert donation["donation_amount"] == 5000 and donation["note"] == "5000 치즈 = 5,000원 (KRW 1원)"
    assert donation["body"] == "노래 한 곡만 더 불러 줄 수 있어" and donation["is_question"] is True
    recent_b = next(m for m in messages[5:] if m.msg_id == messages[1].msg_id)  # the recent-chat copy (long keys)
    assert line(recent_b) == donation


def test_chzzk_ignores_frames_that_carry_no_chat():
    assert chzzk.messages_of({"cmd": chzzk.PING}, "N1") is None
    assert chzzk.messages_of({"cmd": chzzk.CONNECTED, "bdy": {"sid": "x"}}, "N1") is None
    sticker = {"uid": "u", "msg": "", "msgTypeCode": 3, "msgTime": 1, "extras": "{}"}
    assert chzzk.messages_of({"cmd": chzzk.CHAT, "bdy": [sticker]}, "N1") == ([], 1)


def test_chzzk_picks_the_chat_server_as_the_web_player_does():
    assert chzzk.chat_server("N1abcD") == f"wss://kr-ss{sum(map(ord, 'N1abcD')) % 9 + 1}.chat.naver.com/chat"


# -- YouTube -----------------------------------------------------------------------------------------
def youtube_messages() -> tuple[list[Message], int]:
    from pytchat.processors.default.processor import DefaultProcessor

    youtube.pytchat()
    rec = recording("youtube")
    got, skipped = [], 0
    for page in rec["pages"]:
        actions = [{"addChatItemAction": {"item": item}} for item in page["actions"]]
        for chat in DefaultProcessor().process([{"timeout": 1, "chatdata": actions}]).items:
            m = youtube.message_of(chat)
            if m is None:
                skipped += 1
            else:
                got.append(m)
    return got, skipped


def test_youtube_items_map_to_lines_with_super_chats_priced_by_the_rate_table():
    messages, skipped = youtube_messages()
    assert skipped == 1  # the membership notice
    assert len(messages) == 7 and len({m.msg_id for m in messages}) == 6  # one item redelivered
    first = line(messages[0])
    assert first["msg_id"] == "youtube:ChwKGkNKbUZ2YUJHdGhrREZSRFFaZ2RjRmZrdw"
    assert first["viewer_id"] == "youtube:UCviewerA000000000000000" and first["sent_at"] == "2025-11-20T16:00:00.000+09:00"
    assert first["is_question"] is True and first["donation_amount"] == 0 and first["note"] is None
    dollars = line(messages[1])
    assert dollars["donation_amount"] == 7000 and dollars["note"] == "Super Chat 5.0 USD = 7,000원 (USD 1400원)"
    by_body = {m.body: line(m) for m in messages}
    sticker = next(v for v in by_body.values() if v["note"] and v["note"].startswith("Super Sticker"))
    assert sticker["body"] == "" and sticker["donation_amount"] == 2000 and sticker["note"] == "Super Sticker 2000.0 KRW"
    reais = by_body["오늘도 고마워"]
    assert reais["donation_amount"] == 0 and unpriced(reais)
    assert "10.0" in reais["note"] and "no rate for" in reais["note"]


# -- Twitch ------------------------------------------------------------------------------------------
def twitch_messages() -> list[Message]:
    from twitchio.models.eventsub_ import create_event_instance

    from tests.live.feeds.fakes import FakeTwitch

    fake = FakeTwitch.__new__(FakeTwitch)  # only its notification framing, not a server
    fake.shift_ms, fake.login = 0, "fakestreamer"
    rec = recording("twitch")
    notes = [n for c in rec["connections"] for n in c["notifications"]]
    return [twitch.message_of(create_event_instance("channel.chat.message", fake._notification(n, "s"), http=None)) for n in notes]


def test_twitch_notifications_map_to_lines_with_bits_priced_and_a_redelivery_sharing_its_id():
    messages = twitch_messages()
    assert len(messages) == 6 and len({m.msg_id for m in messages}) == 5
    first = line(messages[0])
    assert first["msg_id"] == "twitch:c0a1f7b2-1111-4c6e-9a51-000000000001" and first["viewer_id"] == "twitch:3001"
    assert first["sent_at"] == "2025-11-20T16:00:00.000+09:00" and first["is_question"] is True
    cheer = line(messages[1])
    assert cheer["body"] == "Cheer500 노래 불러 줄 수 있어"  # as written, the cheer's word included
    assert cheer["donation_amount"] == 7000 and cheer["note"] == "500 bits = 7,000원 (USD 1400원)"


# -- shared ------------------------------------------------------------------------------------------
def test_a_naive_platform_time_is_taken_as_utc_and_written_in_seoul_time():
    m = Message("twitch", "x", "1", datetime(2026, 9, 8, 12, 14, 3, 250000), "안녕", None)
    assert line(m)["sent_at"] == "2026-09-08T21:14:03.250+09:00"
    aware = Message("twitch", "x", "1", datetime(2026, 9, 8, 12, 14, 3, tzinfo=timezone.utc), "안녕", None)
    assert line(aware)["sent_at"] == "2026-09-08T21:14:03.000+09:00"


@pytest.mark.parametrize("amount,currency,won", [(Decimal("0.5"), "USD", 700), (Decimal("1"), "JPY", 10), (Decimal("3"), "krw", 3)])
def test_donations_round_to_whole_won(amount, currency, won):
    m = Message("youtube", "x", "v", datetime(2026, 1, 1, tzinfo=timezone.utc), "", Donation(amount, currency=currency))
    assert line(m)["donation_amount"] == won
