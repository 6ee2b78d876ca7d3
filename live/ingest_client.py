"""A client of the live service's `/ws/ingest`: sends batches of chat lines as frames and keeps
every frame until the service acknowledges it stored.

It names itself (`?sender=ID`) and numbers its frames once, across reconnections (`&next=N`): on a
dropped connection, or an `error` frame (a frame the service could not store: the service closes
the socket after it), it reconnects and sends every unacknowledged frame again under its own number,
and the service acknowledges those it had stored already without storing them twice. An error never
counts as an acknowledgement. `summary()` counts lines sent, acknowledged, quarantined and sent again.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import connect


FRAME_BYTES = 48 * 1024
"""Array frames stay under this size, well inside the service's 64 KiB default limit."""
FRAME_LINES = 500
"""Array frames hold at most this many lines, well inside the service's 1,000-line default limit."""
NOTICES_KEPT = 1000
"""Quarantine notices kept one by one (the count covers them all)."""


def frames_of(texts: list[str], max_bytes: int = FRAME_BYTES, max_lines: int = FRAME_LINES) -> list[str]:
    """Consecutive JSON objects go as array frames of at most `max_bytes` and `max_lines`; any other
    line as a frame of its own."""
    out, group, size = [], [], 2

    def flush():
        nonlocal group, size
        if group:
            out.append("[" + ",".join(group) + "]")
        group, size = [], 2

    for t in texts:
        try:
            is_object = isinstance(json.loads(t), dict)
        except (ValueError, RecursionError):
            is_object = False
        if not is_object:
            flush()
            out.append(t)
            continue
        n = len(t.encode("utf-8")) + 1
        if group and (size + n > max_bytes or len(group) >= max_lines):
            flush()
        group.append(t)
        size += n
    flush()
    return out


def lines_in(frame: str) -> int:
    """How many chat lines a frame made by `frames_of` holds."""
    if not frame.startswith("["):
        return 1
    try:
        value = json.loads(frame)
    except (ValueError, RecursionError):
        return 1
    return len(value) if isinstance(value, list) else 1


@dataclass
class Counts:
    sent: int = 0
    """Lines handed over to send (each counted once, however often it went)."""
    frames: int = 0
    acknowledged: int = 0
    """Lines in frames the service acknowledged stored."""
    quarantined: int = 0
    """Lines the service quarantined, by its notices (coalesced ones by their count)."""
    resent: int = 0
    """Lines sent again after a reconnect or an error."""
    errors: int = 0
    """Frames the service said it could not store."""
    reconnects: int = 0
    notices: list[dict] = field(default_factory=list)


class IngestClient:
    def __init__(self, url: str, token: str | None = None, progress=lambda s: print(s, file=sys.stderr),
                 retry_for: float = 60.0, sender: str | None = None):
        self.base = url
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.progress = progress
        self.retry_for = retry_for
        self.sender = sender or uuid.uuid4().hex
        self.inflight: deque[tuple[int, str, int]] = deque()  # (frame number, text, lines), oldest first
        self.lock = threading.Condition()
        self.counts = Counts()
        self.last_no = 0
        self.ws = None
        self.broken = False
        """The service said a frame was not stored: the socket closes, and the frames are sent again on a new one."""
        self._connect(first=True)

    @property
    def quarantined(self) -> list[dict]:
        """The quarantine notices kept (the first `NOTICES_KEPT`)."""
        return self.counts.notices

    def _url(self, next_no: int) -> str:
        parts = urlsplit(self.base)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("sender", "next")]
        query += [("sender", self.sender), ("next", str(next_no))]
        return urlunsplit(parts._replace(query=urlencode(query)))

    def _connect(self, first: bool = False) -> None:
        deadline = time.monotonic() + self.retry_for
        while True:
            try:
                with self.lock:
                    again = list(self.inflight)
                    next_no = again[0][0] if again else self.last_no + 1
                    self.ws = connect(self._url(next_no), additional_headers=self.headers, max_size=None, open_timeout=10)
                    self.broken = False
                    for _, text, n in again:  # again, in order, under their own numbers
                        self.ws.send(text)
                        self.counts.resent += n
                    if not first:
                        self.counts.reconnects += 1
                break
            except InvalidStatus as exc:
                if exc.response.status_code < 500:
                    raise  # refused (a wrong token): trying again will not help
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError):  # the service is (re)starting
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        threading.Thread(target=self._read, args=(self.ws,), daemon=True).start()

    def _read(self, ws) -> None:
        try:
            for message in ws:
                frame = json.loads(message)
                kind = frame.get("type")
                with self.lock:
                    if kind == "ack":
                        while self.inflight and self.inflight[0][0] <= frame["through"]:
                            self.counts.acknowledged += self.inflight.popleft()[2]
                        self.lock.notify_all()
                    elif kind == "quarantined":
                        self.counts.quarantined += int(frame.get("count", 1))
                        if len(self.counts.notices) < NOTICES_KEPT:
                            self.counts.notices.append(frame)
                    elif kind == "error":  # not stored: it and every later frame go again on a new socket
                        self.counts.errors += 1
                        self.broken = True
                        self.progress(f"replay: frame {frame.get('frame')} was not stored ({frame.get('reason')}); sending it again")
                        self.lock.notify_all()
        except ConnectionClosed:
            pass
        with self.lock:
            self.lock.notify_all()

    def _closed(self) -> bool:
        return self.broken or self.ws.protocol.state.name in ("CLOSED", "CLOSING")

    def send(self, texts: list[str]) -> None:
        for text in frames_of(texts):
            n = lines_in(text)
            with self.lock:
                self.last_no += 1
                self.inflight.append((self.last_no, text, n))
                self.counts.sent += n
                self.counts.frames += 1
            try:
                if self._closed():
                    raise ConnectionClosed(None, None)
                self.ws.send(text)
            except ConnectionClosed:  # the frame stays in flight and goes again with the others
                self.progress("replay: connection lost; reconnecting and sending unacknowledged frames again")
                self._reconnect()

    def _reconnect(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - closing a socket that is gone already
            pass
        self._connect()

    def wait_acked(self, timeout: float = 60.0) -> bool:
        """Whether every frame sent was acknowledged within `timeout` (reconnecting as needed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if not self.inflight:
                    return True
                self.lock.wait(timeout=0.2)
            if self._closed():
                self._reconnect()
        with self.lock:
            return not self.inflight

    def summary(self) -> dict:
        c = self.counts
        return {"sent": c.sent, "acknowledged": c.acknowledged, "quarantined": c.quarantined, "resent": c.resent,
                "errors": c.errors, "reconnects": c.reconnects, "frames": c.frames}

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


def service_status(ingest_url: str, token: str | None = None, timeout: float = 10.0) -> dict | None:
    """The service's `/live/status` (the store's figures), found beside its ingest socket; None when it does not answer."""
    import urllib.request

    parts = urlsplit(ingest_url)
    url = urlunsplit(("https" if parts.scheme == "wss" else "http", parts.netloc, "/live/status", "", ""))
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def figures_line(name: str, c: dict) -> str:
    """One line of the store's figures: received = judged + quarantined + duplicates + late + pending."""
    return (f"{name}: received {c['received']} = judged {c['judged']} + quarantined {c['quarantined']} + duplicates {c['duplicates']}"
            f" + late {c['late']} + pending {c['pending']}")
