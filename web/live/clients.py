"""Console clients: one bounded queue each, so a slow screen never slows ingest.

Publishing never waits: a frame goes into every client's queue at once; a client whose queue
is full has fallen too far behind and is dropped (its socket closes with 1013 and the reason;
the console reconnects with `after_seq=<the last frame number it holds>` and loses nothing).
"""

from __future__ import annotations

import asyncio

BEHIND = "too far behind: reconnect with after_seq=<the last frame number held>"


class Client:
    def __init__(self, limit: int):
        self.queue: asyncio.Queue = asyncio.Queue(maxsize=limit)
        self.dropped = asyncio.Event()
        self.last_seq = 0
        """The number (`delivery`) of the last frame this client was sent: what the queue holds at or
        before it was sent as history already, and is skipped."""


class Hub:
    def __init__(self, limit: int):
        self.limit = limit
        self.clients: set[Client] = set()

    def join(self) -> Client:
        client = Client(self.limit)
        self.clients.add(client)
        return client

    def leave(self, client: Client) -> None:
        self.clients.discard(client)

    async def sent(self, timeout: float) -> None:
        """Wait until every console has been sent what was published (or `timeout` seconds)."""
        waits = [asyncio.ensure_future(c.queue.join()) for c in self.clients]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=timeout)
            for w in pending:
                w.cancel()

    def publish(self, text: str, seq: tuple[int, int] | None = None) -> None:
        for client in list(self.clients):
            try:
                client.queue.put_nowait((seq, text))
            except asyncio.QueueFull:
                self.clients.discard(client)
                client.dropped.set()
