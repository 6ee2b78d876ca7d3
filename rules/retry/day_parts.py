"""retry's day in parts: a session's events are judged together, against the catalog (read whole)
and the day's baseline per surface, which looks across sessions and is worked out once a day."""

from __future__ import annotations

from rules.common.normalised import gathered
from rules.common.units import DayParts, buckets_of, one_dataset
from rules.retry.day_baselines import DayBaselines
from rules.retry.normalise import derive, screen_catalog, screen_events


def _gate_chunk(dataset: str, raw, context: dict, config):
    return one_dataset(dataset, screen_events(raw, context["catalog"], config), lambda s: derive(s.accepted(), config))


def _context(whole, config) -> dict:
    """What the events' gates read of the catalog: its valid keys and the ids of its rows quarantined."""
    q = whole.quarantine
    return {"catalog": (set(whole.tables["surface_catalog"]["surface_key"]),
                        set(q.loc[q["dataset"] == "surface_catalog", "id"].dropna()))}


def _day_context(events, tables: dict, config) -> dict:
    """The day's baselines, the engine's and the reference's, each worked out once (`DayBaselines`)."""
    day = DayBaselines()
    for block in events():
        day.add(block)
    catalog = tables["surface_catalog"]
    return {"judge": {"baselines": day.engine(catalog, config)}, "checks": {"baselines": day.reference(catalog, config)}}


DAY_PARTS = DayParts(
    unit="session",
    verdict_key="event_id",
    whole=("surface_catalog",),
    chunked=("interaction_events",),
    gate_whole=lambda raw, config: gathered({"surface_catalog": screen_catalog(raw["surface_catalog"])}, ("surface_catalog",)),
    gate_chunk=_gate_chunk,
    bucket=lambda dataset, rows, context, config: buckets_of(rows["session_id"]) if dataset == "interaction_events" else None,
    context=_context,
    day_context=_day_context,
)
