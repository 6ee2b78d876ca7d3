"""The feed loop's parts on their own: the backoff's jitter, redeliveries counted apart, a dropped
platform connection run again, the sink counting acknowledged lines, credentials, the rate table,
and the service's board of feed counts."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import datetime, timezone

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from live.feeds.counts import FeedCounts
from live.feeds.line import Message
from live.feeds.listen import read_credentials
from live.feeds.loop import Backoff, IngestSink, Seen, Taker, run_feed, status_url
from live.feeds.rates import load_rates
from web.config import WebConfig
from web.live import feeds as board
from rules.common.config import ConfigError


def msg(n: int, body: str = "안녕") -> Message:
    return Message("twitch", f"m{n}", "v", datetime(2026, 9, 8, 12, 0, n, tzinfo=timezone.utc), body)


def test_backoff_grows_to_its_cap_with_jitter_and_starts_over_after_a_reset():
    b = Backoff(base=0.5, cap=8, floor=0.1, rng=random.Random(7))
    pauses = [b.next() for _ in range(12)]
    ceilings = [min(8, 0.5 * 2 ** i) for i in range(12)]
    assert all(0.1 <= p <= max(c, 0.1) for p, c in zip(pauses, ceilings))
    assert len({round(p, 6) for p in pauses}) == len(pauses)  # jittered: no two feeds retry in step
    b.reset()
    assert b.next() <= 0.5


def test_seen_forgets_the_oldest_ids_first():
    s = Seen(size=2)
    assert s.add("a") and s.add("b") and not s.add("a")
    assert s.add("c") and s.add("a")  # "a" was forgotten when "c" came


class ListSink:
    def __init__(self):
        self.lines: list[str] = []

    def put(self, text: str) -> None:
        self.lines.append(text)


def test_taker_sends_each_message_once_and_counts_redeliveries_apart():
    counts = FeedCounts("twitch", "ch", "CH-0007")
    sink = ListSink()
    take = Taker(counts, sink, "CH-0007", load_rates(), "Asia/Seoul")
    for n in (1, 2, 1, 3, 2):
        take(msg(n))
    assert [json.loads(t)["msg_id"] for t in sink.lines] == ["twitch:m1", "twitch:m2", "twitch:m3"]
    assert (counts.received, counts.duplicates) == (5, 2)


class FlakySource:
    """Drops twice (an error, then a clean close), then holds until stopped; each run delivers one message."""

    platform, channel = "twitch", "ch"

    def __init__(self):
        self.runs = 0

    async def run(self, take, reconnected, skipped):
        self.runs += 1
        take(msg(self.runs))
        if self.runs == 1:
            raise ConnectionResetError("gone")
        if self.runs == 2:
            return
        await asyncio.Event().wait()


def test_a_dropped_platform_connection_is_made_again_and_counted():
    counts = FeedCounts("twitch", "ch", "CH-0007")
    sink = ListSink()
    source = FlakySource()
    said: list[str] = []

    async def main():
        stop = asyncio.Event()
        task = asyncio.create_task(run_feed(source, Taker(counts, sink, "CH-0007", load_rates(), "Asia/Seoul"), counts, stop,
                                            Backoff(base=0.01, cap=0.05, floor=0.0), progress=said.append))
        while source.runs < 3:
            await asyncio.sleep(0.01)
        assert counts.connected
        stop.set()
        await asyncio.wait_for(task, 5)

    asyncio.run(main())
    assert source.runs == 3 and counts.reconnects == 2 and len(sink.lines) == 3
    assert not counts.connected
    assert any("ConnectionResetError: gone" in s for s in said) and any("connection closed" in s for s in said)


class Client:
    """What the sink reads of an IngestClient: its summary of lines."""

    def __init__(self, summary: dict):
        self.summary = lambda: summary


def test_the_sink_takes_its_line_counts_from_the_ingest_client():
    counts = FeedCounts("chzzk", "ch", "CH-0007")
    sink = IngestSink.__new__(IngestSink)
    sink.counts = counts
    sink.client = Client({"sent": 6, "acknowledged": 4, "quarantined": 1, "resent": 2, "errors": 0, "reconnects": 1, "frames": 3})
    sink.refresh()
    assert (counts.sent, counts.acknowledged, counts.quarantined) == (6, 4, 1)


def test_status_url_is_beside_the_ingest_socket():
    assert status_url("ws://127.0.0.1:8765/ws/ingest") == "http://127.0.0.1:8765/live/feeds"
    assert status_url("wss://live.example.org/ws/ingest") == "https://live.example.org/live/feeds"


def test_credentials_come_from_the_file_and_the_environment_wins(tmp_path):
    f = tmp_path / "feed.env"
    f.write_text("# twitch\nTWITCH_CLIENT_ID=abc\nexport TWITCH_CLIENT_SECRET='s3'\n\nOTHER=1\n", encoding="utf-8")
    got = read_credentials(f, {"TWITCH_CLIENT_ID": "from-env", "PATH": "/bin"})
    assert got == {"TWITCH_CLIENT_ID": "from-env", "TWITCH_CLIENT_SECRET": "s3", "OTHER": "1"}
    f.write_text("TWITCH_USER_TOKEN secret-value-without-equals\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_credentials(f, {})
    assert "line 1" in str(err.value) and "secret-value" not in str(err.value)
    with pytest.raises(ValueError, match="cannot be read"):
        read_credentials(tmp_path / "missing.env", {})


def test_twitch_says_which_credentials_are_missing_without_their_values():
    from live.feeds.twitch import TwitchError, TwitchSource

    with pytest.raises(TwitchError) as err:
        TwitchSource("someone", {"TWITCH_CLIENT_ID": "abc", "TWITCH_USER_TOKEN": "tok-123"})
    assert "TWITCH_CLIENT_SECRET" in str(err.value) and "TWITCH_REFRESH_TOKEN" in str(err.value)
    assert "tok-123" not in str(err.value)


def test_the_rate_table_is_checked_on_load(tmp_path):
    rates = load_rates()
    assert rates.to_won("USD", 1) == 1400 and rates.to_won("XYZ", 1) is None and rates.unit_won("chzzk_cheese") == ("KRW", 1)
    bad = tmp_path / "rates.yaml"
    bad.write_text("currencies: {KRW: 2, usd: 1400}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=str(bad)):
        load_rates(str(bad))
    bad.write_text("currencies: {KRW: 1}\nunits: {twitch_bit: {currency: USD, amount: 0.01}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="USD"):
        load_rates(str(bad))
    bad.write_text("currencies: {KRW: 1}\nrounding: up\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="rounding"):
        load_rates(str(bad))


def feed_app(token: str | None):
    from starlette.testclient import TestClient

    app = Starlette(routes=[Route("/live/feeds", board.receive(WebConfig(token=token, admin_warm=False)), methods=["POST"])])
    return app, TestClient(app)


REPORT = {"feed": "chzzk:abc", "platform": "chzzk", "channel": "abc", "character_id": "CH-0007", "received": 9, "sent": 6,
          "acknowledged": 6, "quarantined": 0, "duplicates": 3, "reconnects": 1, "skipped": 1, "unpriced": 0, "connected": True}


def test_the_service_keeps_each_feeds_latest_counts_behind_its_token():
    app, http = feed_app("tok")
    assert http.post("/live/feeds", json=REPORT).status_code == 403
    assert http.post("/live/feeds", json=REPORT, headers={"Authorization": "Bearer tok"}).status_code == 200
    assert http.post("/live/feeds", json={**REPORT, "sent": -1}, headers={"Authorization": "Bearer tok"}).status_code == 400
    assert http.post("/live/feeds", json=[REPORT], headers={"Authorization": "Bearer tok"}).status_code == 400
    later = {**REPORT, "received": 10, "duplicates": 4}
    assert http.post("/live/feeds", json=later, headers={"Authorization": "Bearer tok"}).status_code == 200
    [shown] = board.snapshot(app)
    assert shown["received"] == 10 and shown["live"] and shown["age_s"] < board.STALE_S
    [gone] = board.snapshot(app, now=10**9)
    assert not gone["live"]
