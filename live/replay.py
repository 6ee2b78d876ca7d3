"""`verdicts replay`: feed a recorded live_chat.jsonl into the landing table as if live, or
with `--to ws://HOST:PORT/ws/ingest` into the live service's socket.

With `--rate R`, lines go out at R lines per second; with `--speed X`, at the recording's own
pace sped up X times. `--shift-to-now` re-times each line's `sent_at` to when it is sent (in
the line's own form), so windows close in real time for the sensor. `--pace original` (with
`--to`) is `--speed X` (default 1) with `sent_at` untouched, for a service that judges the
recording in its own time (`verdicts serve --clock event`, docs/live.md).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable

import sqlalchemy as sa

from live import landing, store
from rules.common import timestamps
from rules.common.bounded_json import parse_object
from rules.live_pick.config import LivePickConfig

BATCH_SECONDS = 0.1
"""Lines due within one tick are appended in one insert: 400 lines/s is 40 per insert."""


def _retime(text: str, sent_ns: int, tz: str) -> str:
    obj = parse_object(text)
    if obj is None:
        return text  # unreadable lines are replayed as they are, for the gates to catch
    old = timestamps.parse(obj.get("sent_at"), tz)
    obj["sent_at"] = timestamps.format_ns(sent_ns, old.form if old else "", tz)
    return json.dumps(obj, ensure_ascii=False)


def schedule(texts: list[str], rate: float | None, speed: float | None, tz: str) -> list[float]:
    """Seconds after the start at which each line goes out."""
    if rate:
        return [i / rate for i in range(len(texts))]
    stamps = [timestamps.parse((parse_object(t) or {}).get("sent_at"), tz) for t in texts]
    known = [s.ns for s in stamps if s]
    first = min(known) if known else 0
    out, last = [], 0.0
    for s in stamps:
        last = (s.ns - first) / 1e9 / speed if s else last  # an unreadable line goes with the one before
        out.append(max(last, 0.0))
    return out


def replay(
    engine: sa.Engine,
    path: Path,
    config: LivePickConfig,
    rate: float | None = None,
    speed: float | None = None,
    shift_to_now: bool = False,
    clock: Callable[[], int] = time.time_ns,
    sleep: Callable[[float], None] = time.sleep,
    progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    send: Callable[[list[str]], None] | None = None,
) -> int:
    """Append every line of `path` on schedule; returns the number sent (stops cleanly on Ctrl-C).

    `send(batch)` replaces the landing-table append (the socket client's `send`)."""
    if not rate and not speed:
        raise ValueError("give --rate LINES_PER_SEC or --speed X")
    texts = [t for t in path.read_text(encoding="utf-8").split("\n") if t.strip()]
    if speed:  # the recording's own order of time
        order = sorted(range(len(texts)), key=lambda i: (timestamps.parse((parse_object(texts[i]) or {}).get("sent_at"), config.timezone) or timestamps.Stamp(0, "")).ns)
        texts = [texts[i] for i in order]
    offsets = schedule(texts, rate, speed, config.timezone)
    if send is None:
        store.ensure_tables(engine)

        def send(batch):
            landing.append(engine, batch, clock(), config.window_seconds, config.timezone)
    start = clock()
    sent = 0
    last_report = start
    try:
        while sent < len(texts):
            now = clock()
            elapsed = (now - start) / 1e9
            due = sent
            while due < len(texts) and offsets[due] <= elapsed + BATCH_SECONDS:
                due += 1
            if due > sent:
                batch = []
                for i in range(sent, due):
                    sent_ns = start + int(offsets[i] * 1e9)
                    batch.append(_retime(texts[i], sent_ns, config.timezone) if shift_to_now else texts[i])
                send(batch)
                sent = due
            if clock() - last_report >= 1e9:
                last_report = clock()
                progress(f"replay: {sent}/{len(texts)} lines, {sent / max(elapsed, 1e-9):.0f} lines/s")
            if sent < len(texts):
                sleep(max(0.0, min(BATCH_SECONDS, offsets[sent] - (clock() - start) / 1e9)))
    except KeyboardInterrupt:
        progress(f"replay: stopped after {sent}/{len(texts)} lines")
        return sent
    progress(f"replay: done, {sent} lines in {(clock() - start) / 1e9:.1f} s")
    return sent
