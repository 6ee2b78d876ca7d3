"""A feed's counts, kept as lines move from the platform to the live service's acknowledgement.

- `received`: chat messages the platform delivered (a redelivered copy counts again);
- `duplicates`: of those, copies of a message already taken (same platform message id): never sent;
- `sent`: lines handed to the ingest socket; `acknowledged`: of those, lines the service has stored;
- `quarantined`: lines the service stored in quarantine (it says which and why);
- `reconnects`: platform connections made again after one dropped;
- `skipped`: platform events that are not chat lines (system notices, subscriptions, stickers without text);
- `unpriced`: donations in a currency the rate table does not know (sent at 0 won, the amount in the note).

Every message received is a duplicate or a line sent: `received = duplicates + sent + waiting`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

FIELDS = ("received", "sent", "acknowledged", "quarantined", "duplicates", "reconnects", "skipped", "unpriced")


@dataclass
class FeedCounts:
    platform: str
    channel: str
    character_id: str
    received: int = 0
    sent: int = 0
    acknowledged: int = 0
    quarantined: int = 0
    duplicates: int = 0
    reconnects: int = 0
    skipped: int = 0
    unpriced: int = 0
    connected: bool = False
    started_at: float = field(default_factory=time.time)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def feed(self) -> str:
        return f"{self.platform}:{self.channel}"

    def add(self, **deltas: int) -> None:
        with self.lock:
            for name, n in deltas.items():
                setattr(self, name, getattr(self, name) + n)

    def set(self, **values) -> None:
        with self.lock:
            for name, v in values.items():
                setattr(self, name, v)

    def snapshot(self) -> dict:
        with self.lock:
            out = {k: getattr(self, k) for k in ("platform", "channel", "character_id", *FIELDS, "connected", "started_at")}
        out["feed"] = self.feed
        return out

    def line(self) -> str:
        s = self.snapshot()
        state = "connected" if s["connected"] else "reconnecting"
        return (f"listen {s['feed']} → {s['character_id']} ({state}): received {s['received']} · sent {s['sent']} · "
                f"acknowledged {s['acknowledged']} · quarantined {s['quarantined']} · duplicates {s['duplicates']} · "
                f"reconnects {s['reconnects']}" + (f" · skipped {s['skipped']}" if s["skipped"] else "")
                + (f" · unpriced {s['unpriced']}" if s["unpriced"] else ""))
