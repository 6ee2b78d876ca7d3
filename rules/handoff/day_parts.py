"""handoff's day in parts: a room is judged with its customer's other rooms (the re-entry look-up),
so a unit is a customer's rooms; phrases and articles are small tables read whole. A room's bucket
is its customer's, or its own id's when no valid rooms row names a customer; a quarantined row that
names a room goes with that room (it may hold it back), one that names none with the day's first part."""

from __future__ import annotations

import numpy as np

from rules.common.normalised import gathered
from rules.common.units import DayParts, buckets_of, one_dataset
from rules.handoff.normalise import accepted, screen_messages, screen_phrases, screen_rooms, _screen
from rules.handoff.view import room_in_raw


def _gate_chunk(dataset: str, raw, context: dict, config):
    return one_dataset(dataset, screen_rooms(raw) if dataset == "rooms" else screen_messages(raw, config), accepted)


def _learn(dataset: str, rows, context: dict, config) -> None:
    if dataset == "rooms":
        context["customers"].update(zip(rows["room_id"].tolist(), rows["customer_id"].tolist()))


def room_buckets(rooms, context: dict) -> np.ndarray:
    customers = context["customers"]
    return buckets_of([customers.get(r, r) for r in rooms])


def _bucket(dataset: str, rows, context: dict, config):
    if dataset == "rooms":
        return buckets_of(rows["customer_id"])
    if dataset == "chat_messages":
        return room_buckets(rows["room_id"].tolist(), context)
    return None


def _quarantine_bucket(quarantine, context: dict, config) -> np.ndarray:
    rooms = [room_in_raw(raw) if dataset in ("chat_messages", "rooms") else None
             for dataset, raw in zip(quarantine["dataset"].tolist(), quarantine["raw"].tolist())]
    named = [r for r in rooms if r is not None]
    out = np.full(len(rooms), -1, dtype=np.int64)
    if named:
        out[[i for i, r in enumerate(rooms) if r is not None]] = room_buckets(named, context)
    return out


WHOLE = ("handoff_phrases", "help_articles")

DAY_PARTS = DayParts(
    unit="customer's rooms",
    verdict_key="room_id",
    whole=WHOLE,
    chunked=("rooms", "chat_messages"),
    gate_whole=lambda raw, config: gathered({"handoff_phrases": screen_phrases(raw["handoff_phrases"], config),
                                             "help_articles": _screen(raw, "help_articles")}, WHOLE, accepted=accepted),
    gate_chunk=_gate_chunk,
    bucket=_bucket,
    learn=_learn,
    context=lambda whole, config: {"customers": {}},
    quarantine_bucket=_quarantine_bucket,
    merges=((("chat_messages", "room_id"), ("rooms", "room_id")), (("chat_messages", "message_id"),)),
)
