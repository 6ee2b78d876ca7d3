"""live_pick's day in parts: a character's 30-second window is ranked alone, against the sheets
(read whole) and the relations of its own viewers (looked up by viewer_id)."""

from __future__ import annotations

import numpy as np

from rules.common.normalised import gathered
from rules.common.timestamps import NS_PER_SEC
from rules.common.units import DayParts, buckets_of, one_dataset
from rules.live_pick.checks import REPEATS
from rules.live_pick.normalise import last_replies, screen_chat_against, screen_relations, screen_sheets


def _gate_chunk(dataset: str, raw, context: dict, config):
    if dataset == "viewer_relation":
        return one_dataset(dataset, screen_relations(raw, config))
    return one_dataset(dataset, screen_chat_against(raw, context["characters"], context["last_replies"], config))


def _learn(dataset: str, rows, context: dict, config) -> None:
    if dataset == "viewer_relation":
        context["last_replies"].update(last_replies(rows))


def _bucket(dataset: str, rows, context: dict, config):
    if dataset != "live_chat":
        return None
    window = rows["sent_at_ns"].to_numpy(dtype=np.int64) // (config.window_seconds * NS_PER_SEC)
    return buckets_of(rows["character_id"], window)


DAY_PARTS = DayParts(
    unit="character and 30-second window",
    verdict_key="msg_id",
    whole=("character_sheet",),
    chunked=("viewer_relation", "live_chat"),
    gate_whole=lambda raw, config: gathered({"character_sheet": screen_sheets(raw["character_sheet"])}, ("character_sheet",)),
    gate_chunk=_gate_chunk,
    bucket=_bucket,
    learn=_learn,
    context=lambda whole, config: {"characters": set(whole.tables["character_sheet"]["character_id"]), "last_replies": {}},
    looked_up={"viewer_relation": ("viewer_id", "viewer_id")},
    repeats=REPEATS,
)
