"""A bounded soak of the live service as it is used: `verdicts serve` in its own process, four
characters from two senders (malformed lines among them), a steady console and one that keeps
dropping and resuming, and a kill -9 of the service mid-window, restarted at once. Nothing
acknowledged is lost, nothing is stored twice, every window reaches every console, each shown once,
and the store's figures close: sent = acknowledged = judged + quarantined + late."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time

import pytest
import sqlalchemy as sa

from live import store
from live.ingest_client import IngestClient
from live.windows_client import WindowsClient
from tests.live.console import Service, retimed, sample_lines

pytestmark = pytest.mark.slow
WINDOW_S = 3
SENDERS = {"A": ("CH-0007", "CH-0008"), "B": ("CH-0011", "CH-0015")}
RATE = 20  # lines per second per sender
SECONDS = 24
KILL_AT = 11.3


def lines_for(characters: tuple[str, ...]) -> list[dict]:
    """The sample's readable lines of these characters (bodies, tags, viewers), to draw from."""
    rows = [json.loads(t) for t in sample_lines() if t.startswith("{")]
    rows = [r for r in rows if isinstance(r, dict) and r.get("character_id") in characters
            and isinstance(r.get("msg_id"), str) and isinstance(r.get("donation_amount"), int)]
    return rows


class Console(threading.Thread):
    """A console as the page is (`WindowsClient`): it resumes with the last number it holds after any
    drop and notes any gap; with `drop_every`, it drops its socket that often on its own."""

    def __init__(self, url: str, drop_every: float | None = None):
        super().__init__(daemon=True)
        self.client = WindowsClient(url, drop_every=drop_every)
        self.drop_every = drop_every
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()

    def run(self) -> None:
        self.loop.run_until_complete(self.client.run(self.stop))

    def stopping(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)

    @property
    def windows(self) -> dict:
        return {(c, w): n for (c, w), n in self.client.seen.windows.items()}


def test_nothing_acknowledged_is_lost_and_every_window_reaches_every_console(tmp_path):
    service = Service(tmp_path, window_seconds=WINDOW_S, late_horizon=None).start()
    consoles = [Console(service.ws), Console(service.ws, drop_every=4.0)]
    for c in consoles:
        c.start()
    clients: dict[str, IngestClient] = {}
    sent_ids: dict[str, list[str]] = {}

    def sender(name: str, characters: tuple[str, ...]) -> None:
        rng = random.Random(name)
        pool = lines_for(characters)
        client = IngestClient(service.ws + "/ws/ingest", progress=lambda s: None, retry_for=90)
        clients[name] = client
        ids = sent_ids.setdefault(name, [])
        started = time.time()
        i = 0
        while time.time() - started < SECONDS:
            batch = []
            for _ in range(RATE // 4):
                i += 1
                row = dict(rng.choice(pool))
                row["msg_id"] = f"SOAK-{name}-{i:05d}"
                text = retimed([json.dumps(row, ensure_ascii=False)], time.time_ns())[0]
                if i % 37 == 0:
                    text = text.replace('"is_question": ', '"is_question": "not a boolean", "x": ')  # a schema failure
                if i % 53 == 0:
                    text = text[: len(text) // 2]  # cut short: not JSON
                batch.append(text)
                ids.append(row["msg_id"])
            client.send(batch)
            time.sleep(0.25)
        assert client.wait_acked(90), f"sender {name}: not every frame acknowledged"

    threads = [threading.Thread(target=sender, args=(n, cs), daemon=True) for n, cs in SENDERS.items()]
    try:
        for t in threads:
            t.start()
        time.sleep(KILL_AT)
        service.kill()  # mid-window: frames in flight, windows open, one being finished perhaps
        service.start()
        for t in threads:
            t.join(timeout=180)
            assert not t.is_alive()
        deadline = time.time() + 60
        while True:
            status = json.loads(__import__("urllib.request").request.urlopen(service.http + "/live/status", timeout=10).read())
            if status["pending"] == 0 or time.time() > deadline:
                break
            time.sleep(0.5)
        engine = sa.create_engine(f"sqlite:///{tmp_path / 'warehouse.sqlite'}")
        with engine.connect() as conn:
            stored = set(conn.execute(sa.select(store.windows.c.character_id, store.windows.c.window_start)).all())
        engine.dispose()
        deadline = time.time() + 60
        while time.time() < deadline and any(set(c.windows) < {tuple(k) for k in stored} for c in consoles):
            time.sleep(0.5)
    finally:
        for c in consoles:
            c.stopping()
        for c in consoles:
            c.join(timeout=10)
        for client in clients.values():
            client.close()
        service.stop()

    sent = sum(len(ids) for ids in sent_ids.values())
    for name, client in clients.items():
        c = client.summary()
        assert c["sent"] == c["acknowledged"] == len(sent_ids[name]), (name, c)
    assert sum(c.summary()["reconnects"] for c in clients.values()) >= 2, "both senders lived through the kill"
    assert status["pending"] == 0 and status["duplicates"] == 0, status
    assert status["received"] == sent == status["judged"] + status["quarantined"] + status["late"], status
    assert status["quarantined"] >= sent // 60, "malformed lines were among them"
    assert len(stored) >= 4 * 3, "several windows of each of the four characters"
    for i, console in enumerate(consoles):
        seen = console.client.seen
        assert set(console.windows) == {tuple(k) for k in stored}, f"console {i}: every window stored reached it"
        assert not seen.gaps, f"console {i}: gaps in what it was sent live: {seen.gaps}"
        if not seen.too_old:  # resumed by number every time: each frame sent to it once
            assert all(len(n) == 1 for n in console.windows.values()), f"console {i}: a window sent twice"
            for epoch, numbers in seen.numbers.items():
                assert len(numbers) == len(set(numbers)), f"console {i}: a frame of epoch {epoch} sent twice"
    assert consoles[1].client.seen.connections >= 3, "the resuming console dropped and came back"
    assert len(consoles[0].client.seen.numbers) == 2, "the service was restarted: a second epoch"
