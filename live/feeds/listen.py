"""`verdicts listen PLATFORM CHANNEL --character CH-…`: one platform channel's chat into the live service.

Credentials come from the environment, or from `--credentials FILE` (`KEY=VALUE` lines; the
environment wins): they go to the platform's client only, never to the console, the log, the
service or the warehouse.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from pathlib import Path

from live.feeds.counts import FeedCounts
from live.feeds.loop import Backoff, IngestSink, Reporter, Taker, run_feed, status_url
from live.feeds.question import analyser
from live.feeds.rates import load_rates

PLATFORMS = ("chzzk", "youtube", "twitch")
CREDENTIAL_PREFIXES = ("CHZZK_", "YOUTUBE_", "TWITCH_")


def source_of(platform: str, channel: str, credentials: dict[str, str], endpoint: str | None):
    if platform == "chzzk":
        from live.feeds.chzzk import ChzzkSource as cls
    elif platform == "youtube":
        from live.feeds.youtube import YouTubeSource as cls
    elif platform == "twitch":
        from live.feeds.twitch import TwitchSource as cls
    else:
        raise ValueError(f"unknown platform {platform!r}: one of {', '.join(PLATFORMS)}")
    return cls(channel, credentials, endpoint)


def read_credentials(path: Path | None, environ=os.environ) -> dict[str, str]:
    """The platforms' settings from the file (`KEY=VALUE`, `#` comments), then the environment over it."""
    out: dict[str, str] = {}
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{path}: cannot be read ({exc.strerror})") from None
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, eq, value = line.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"{path}: line {n} is not KEY=VALUE")  # the value is not repeated: it may be a secret
            out[key.strip().removeprefix("export ").strip()] = value.strip().strip('"').strip("'")
    out.update({k: v for k, v in environ.items() if k.startswith(CREDENTIAL_PREFIXES)})
    return out


def listen(platform: str, channel: str, character_id: str, to: str, token: str | None, *, endpoint: str | None = None,
           credentials: dict[str, str] | None = None, rates_path: str | None = None, tz: str = "Asia/Seoul",
           progress=lambda s: print(s, file=sys.stderr)) -> int:
    """Run until SIGINT/SIGTERM; then wait for every line sent to be acknowledged. 0: all were; 1: some were not."""
    rates = load_rates(rates_path)
    source = source_of(platform, channel, credentials or {}, endpoint)
    loading = threading.Thread(target=analyser, name="question-analyser", daemon=True)
    loading.start()  # the analyser (seconds) loads while the ingest socket connects, and before the platform's does:
    counts = FeedCounts(platform, channel, character_id)
    progress(f"listen {platform}:{channel} → {character_id} via {to} (waiting for the service if it is not up yet)")
    sink = IngestSink(to, token, counts, progress=progress)
    reporter = Reporter(counts, sink, status_url(to), token, progress=progress).start()
    taker = Taker(counts, sink, character_id, rates, tz)
    loading.join()  # a line taken before it is ready would wait for it, late for its window

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_feed(source, taker, counts, stop, Backoff(), progress=progress)

    try:
        asyncio.run(main())
    finally:
        durable = sink.close()
        reporter.stop()
    progress(f"listen: stopped; {counts.sent} lines sent, {'all' if durable else 'NOT all'} acknowledged")
    return 0 if durable else 1
