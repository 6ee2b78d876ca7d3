"""A client of the live service's `/ws/ingest`: sends batches of chat lines as frames and keeps
every frame until the service acknowledges it durable; on a dropped connection it reconnects
and sends the unacknowledged frames again (a line already stored comes back quarantined as a
duplicate, never judged twice)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import connect


FRAME_BYTES = 48 * 1024
"""Array frames stay under this size, well inside the service's 64 KiB default limit."""


def frames_of(texts: list[str], max_bytes: int = FRAME_BYTES) -> list[str]:
    """Consecutive JSON objects go as array frames of at most `max_bytes`; any other line as a frame of its own."""
    out, group, size = [], [], 2

    def flush():
        nonlocal group, size
        if group:
            out.append("[" + ",".join(group) + "]")
        group, size = [], 2

    for t in texts:
        try:
            is_object = isinstance(json.loads(t), dict)
        except ValueError:
            is_object = False
        if not is_object:
            flush()
            out.append(t)
            continue
        n = len(t.encode("utf-8")) + 1
        if group and size + n > max_bytes:
            flush()
        group.append(t)
        size += n
    flush()
    return out


class IngestClient:
    def __init__(self, url: str, token: str | None = None, progress=lambda s: print(s, file=sys.stderr),
                 retry_for: float = 60.0):
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.progress = progress
        self.retry_for = retry_for
        self.inflight: deque[tuple[int, str]] = deque()  # (frame number on this connection, text)
        self.lock = threading.Condition()
        self.quarantined: list[dict] = []
        self.acked_frames = 0
        self.ws = None
        self.next_no = 0
        self._connect()

    def _connect(self) -> None:
        deadline = time.monotonic() + self.retry_for
        while True:
            try:
                self.ws = connect(self.url, additional_headers=self.headers, max_size=None, open_timeout=10)
                with self.lock:
                    unacked = [t for _, t in self.inflight]
                    self.inflight.clear()
                    self.next_no = 0
                    for t in unacked:  # again, in order, numbered on the new connection
                        self.next_no += 1
                        self.inflight.append((self.next_no, t))
                        self.ws.send(t)
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
                with self.lock:
                    if frame.get("type") == "ack":
                        while self.inflight and self.inflight[0][0] <= frame["through"]:
                            self.inflight.popleft()
                            self.acked_frames += 1
                        self.lock.notify_all()
                    elif frame.get("type") == "quarantined":
                        self.quarantined.append(frame)
        except ConnectionClosed:
            pass
        with self.lock:
            self.lock.notify_all()

    def send(self, texts: list[str]) -> None:
        for text in frames_of(texts):
            while True:
                try:
                    with self.lock:
                        self.next_no += 1
                        self.inflight.append((self.next_no, text))
                        self.ws.send(text)
                    break
                except ConnectionClosed:  # the frame stays in flight and goes again with the others
                    self.progress("replay: connection lost; reconnecting and sending unacknowledged frames again")
                    self._connect()
                    break

    def wait_acked(self, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if not self.inflight:
                    return True
                self.lock.wait(timeout=0.2)
            closed = self.ws.protocol.state.name in ("CLOSED", "CLOSING")
            if closed:
                self._connect()
        return False

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
