"""persona's day in parts: a turn is judged alone, against the profiles (a small table read whole)."""

from __future__ import annotations

from rules.common.normalised import gathered
from rules.common.units import DayParts, buckets_of, one_dataset
from rules.persona.checks import REPEATS
from rules.persona.normalise import screen_profiles, screen_turns

DAY_PARTS = DayParts(
    unit="turn",
    verdict_key="turn_no",
    whole=("profiles",),
    chunked=("turns",),
    gate_whole=lambda raw, config: gathered({"profiles": screen_profiles(raw["profiles"])}, ("profiles",)),
    gate_chunk=lambda dataset, raw, context, config: one_dataset("turns", screen_turns(raw, config)),
    bucket=lambda dataset, rows, context, config: buckets_of(rows["turn_no"]) if dataset == "turns" else None,
    repeats=REPEATS,
)
