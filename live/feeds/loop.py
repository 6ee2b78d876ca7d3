"""The feed loop shared by every platform: platform messages in, `live_chat` lines out to `/ws/ingest`.

A platform module gives a `Source`: `await source.run(take, reconnected)` holds one connection
(resuming where the platform allows: a cursor the source keeps between runs) and returns or raises
when it drops. The loop runs it again after a pause that grows and is jittered (`Backoff`), so a
platform outage is not met by every feed at once. `take` turns each message into a line:
a redelivered message (a platform message id already taken) is counted as a duplicate and never
sent; every other becomes one line and goes to the `IngestSink`, which sends it through the
replayer's `IngestClient`: frames are kept until the service acknowledges them stored and sent
again after a reconnect, so no line is lost between the platform and the acknowledgement.
"""

from __future__ import annotations

import asyncio
import json
import queue
import random
import sys
import threading
import time
import urllib.request
from collections import OrderedDict
from typing import Callable, Protocol
from urllib.parse import urlsplit, urlunsplit

from live.feeds.counts import FeedCounts
from live.feeds.line import Message, line_text, live_chat_line, unpriced
from live.feeds.rates import DonationRates


SEEN_IDS = 200_000
"""Message ids remembered to tell a redelivery (the oldest forgotten first): a few tens of MB at most."""
SEND_EVERY_S = 0.05
"""Lines that arrive within this of each other go in one batch (the ingest client frames it)."""
REPORT_EVERY_S = 1.0


class Source(Protocol):
    platform: str
    channel: str

    async def run(self, take: Callable[[Message], None], reconnected: Callable[[], None],
                  skipped: Callable[[], None]) -> None: ...


class Backoff:
    """Full-jitter exponential backoff: the n-th pause is uniform in [0, min(cap, base·2ⁿ)], at least `floor`."""

    def __init__(self, base: float = 0.5, cap: float = 30.0, floor: float = 0.1, rng: random.Random | None = None):
        self.base, self.cap, self.floor = base, cap, floor
        self.rng = rng or random.Random()
        self.tries = 0

    def next(self) -> float:
        ceiling = min(self.cap, self.base * (2 ** self.tries))
        self.tries += 1
        return max(self.floor, self.rng.uniform(0, ceiling))

    def reset(self) -> None:
        self.tries = 0


class Seen:
    """The last `size` message ids: membership and insertion in constant time."""

    def __init__(self, size: int = SEEN_IDS):
        self.size = size
        self.ids: OrderedDict[str, None] = OrderedDict()

    def add(self, msg_id: str) -> bool:
        """True when new."""
        if msg_id in self.ids:
            return False
        self.ids[msg_id] = None
        if len(self.ids) > self.size:
            self.ids.popitem(last=False)
        return True


class IngestSink:
    """Sends lines through an `IngestClient` from a thread of its own, a batch of lines at a time, and
    takes the counts of lines sent, acknowledged stored and quarantined from the client."""

    def __init__(self, url: str, token: str | None, counts: FeedCounts, retry_for: float = 3600.0,
                 progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr)):
        from live.ingest_client import IngestClient

        self.counts = counts
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.client = IngestClient(url, token, progress=progress, retry_for=retry_for)
        self.thread = threading.Thread(target=self._send, name="feed-ingest", daemon=True)
        self.thread.start()

    def put(self, text: str) -> None:
        self.lines.put(text)

    def _send(self) -> None:
        while True:
            first = self.lines.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + SEND_EVERY_S
            while True:
                try:
                    nxt = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if nxt is None:
                    self.lines.put(None)
                    break
                batch.append(nxt)
            self.client.send(batch)  # kept until acknowledged stored; sent again after a reconnect or an error

    def refresh(self) -> None:
        """Bring `sent`, `acknowledged` and `quarantined` up to what the client has counted."""
        c = self.client.summary()
        self.counts.set(sent=c["sent"], acknowledged=c["acknowledged"], quarantined=c["quarantined"])

    def close(self, timeout: float = 30.0) -> bool:
        """Send what is queued, wait for every frame to be acknowledged; True when all were."""
        self.lines.put(None)
        self.thread.join(timeout)
        done = self.client.wait_acked(timeout)
        self.refresh()
        self.client.close()
        return done


def status_url(ingest_url: str) -> str:
    """`ws://host:port/ws/ingest` → `http://host:port/live/feeds`, where the service keeps feed counts."""
    parts = urlsplit(ingest_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return urlunsplit((scheme, parts.netloc, "/live/feeds", "", ""))


class Reporter:
    """Every `every` seconds: the counts to the service (`POST /live/feeds`) and a line on the console."""

    def __init__(self, counts: FeedCounts, sink: IngestSink, url: str | None, token: str | None,
                 every: float = REPORT_EVERY_S, progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr)):
        self.counts, self.sink, self.url, self.token, self.every, self.progress = counts, sink, url, token, every, progress
        self.stopped = threading.Event()
        self._warned = False
        self._last_line = ""
        self.thread = threading.Thread(target=self._run, name="feed-report", daemon=True)

    def start(self) -> "Reporter":
        self.thread.start()
        return self

    def report(self) -> None:
        self.sink.refresh()
        line = self.counts.line()
        if line != self._last_line:
            self.progress(line)
            self._last_line = line
        if not self.url:
            return
        body = json.dumps(self.counts.snapshot(), ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=5):
                pass
            self._warned = False
        except OSError as exc:
            if not self._warned:  # once per outage; the counts go again with the next report
                self.progress(f"listen: the service did not take the feed's counts ({type(exc).__name__}); trying again")
                self._warned = True

    def _run(self) -> None:
        while not self.stopped.wait(self.every):
            self.report()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)
        self.report()


class Taker:
    """Messages to lines: duplicates counted apart, every other line to the sink."""

    def __init__(self, counts: FeedCounts, sink, character_id: str, rates: DonationRates, tz: str):
        self.counts, self.sink, self.character_id, self.rates, self.tz = counts, sink, character_id, rates, tz
        self.seen = Seen()
        self.activity = 0

    def __call__(self, message: Message) -> None:
        self.activity += 1
        if not self.seen.add(message.msg_id):
            self.counts.add(received=1, duplicates=1)
            return
        line = live_chat_line(message, self.character_id, self.rates, self.tz)
        self.counts.add(received=1, unpriced=int(unpriced(line)))
        self.sink.put(line_text(line))


async def run_feed(source: Source, taker: Taker, counts: FeedCounts, stop: asyncio.Event,
                   backoff: Backoff | None = None, progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> None:
    """Hold the platform connection until `stop`: after each drop, pause (backoff with jitter) and run it again."""
    backoff = backoff or Backoff()
    first = True

    def reconnected() -> None:
        counts.add(reconnects=1)

    def skipped() -> None:
        counts.add(skipped=1)

    while not stop.is_set():
        if not first:
            counts.add(reconnects=1)
        first = False
        seen_before = taker.activity
        run = asyncio.ensure_future(source.run(taker, reconnected, skipped))
        stopping = asyncio.ensure_future(stop.wait())
        counts.set(connected=True)
        try:
            done, _ = await asyncio.wait({run, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if run in done:
                exc = run.exception()
                if exc is not None:  # the platform's own words; credentials never reach an exception here
                    progress(f"listen {source.platform}:{source.channel}: connection lost ({type(exc).__name__}: {exc})")
                else:
                    progress(f"listen {source.platform}:{source.channel}: connection closed")
        finally:
            stopping.cancel()
            if not run.done():
                run.cancel()
                try:
                    await run
                except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping: its end does not matter
                    pass
            counts.set(connected=False)
        if stop.is_set():
            break
        if taker.activity > seen_before:
            backoff.reset()  # it worked for a while: the next drop starts from a short pause again
        try:  # the pause, cut short by a stop
            await asyncio.wait_for(stop.wait(), backoff.next())
        except asyncio.TimeoutError:
            pass
