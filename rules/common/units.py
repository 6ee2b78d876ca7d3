"""A day in parts: each domain's rows fall into independent units (a character's 30-second window, a
session, a customer's rooms, a turn), and a part is a set of whole units.

Every row the nightly chain stores of a bucketed dataset carries its unit's bucket: the unit's key
hashed (SipHash with a fixed key, the same in every process and on every machine) to one of
`BUCKETS`. A part is a set of buckets holding about `PART_ROWS` rows (one bucket may hold more: a
unit is never cut), so a part is read with one indexed condition, and the rules, the gates and the
checks run on a part exactly as on a whole day: what one unit decides never reads another unit.
What does look across units (retry's baseline per surface, repeated ids across days) is worked out
once per day as a columnar aggregate and handed to every part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from rules.common.normalised import Normalised, gathered

BUCKETS = 4096
PART_ROWS = 50_000
"""Rows of a part: the gates, the rules and the checks hold one part's rows at a time."""


def buckets_of(*keys) -> np.ndarray:
    """The bucket of each row whose unit is named by `keys` (columns of equal length, any values)."""
    frame = pd.DataFrame({str(i): pd.Series(k, dtype=object) if not isinstance(k, pd.Series) else k.reset_index(drop=True)
                          for i, k in enumerate(keys)})
    if frame.empty:
        return np.zeros(0, dtype=np.int64)
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return (hashed % np.uint64(BUCKETS)).astype(np.int64)


@dataclass(frozen=True)
class DayParts:
    """How the nightly chain takes a domain's day in parts (`rules/<domain>/day_parts.py`).

    The `whole` datasets (small reference tables) are gated at once, then each `chunked` one a block
    of lines at a time, in order, each block against what `learn` kept of the datasets before it.
    Gating every block in turn gives the rows and the quarantine one gating of the whole file gives
    (ids repeated across blocks included: `gates.ids_seen_before`)."""

    unit: str
    """The unit, in words (for pages and docs)."""
    verdict_key: str
    """The column a verdict row and its event rows share (the row's id): it puts a verdict row in its unit."""
    whole: tuple[str, ...]
    """Datasets gated, stored and read whole: small reference tables every part reads."""
    chunked: tuple[str, ...]
    """Datasets gated a block of lines at a time, in this order."""
    gate_whole: Callable[[dict, Any], Normalised]
    """(raw tables of `whole`, config) → their normalised tables and quarantine."""
    gate_chunk: Callable[[str, pd.DataFrame, dict, Any], Normalised] | None
    """(dataset, a block of its raw lines, context, config) → that block's rows and quarantine."""
    bucket: Callable[[str, pd.DataFrame, dict, Any], np.ndarray | None]
    """(dataset, normalised rows, context, config) → each row's bucket; None: the dataset is not bucketed."""
    learn: Callable[[str, pd.DataFrame, dict, Any], None] = lambda dataset, rows, context, config: None
    """What a later dataset's gates or buckets need of these rows, kept in `context` (small, columnar)."""
    context: Callable[[Normalised, Any], dict] = lambda whole, config: {}
    """(the `whole` datasets gated, config) → the context the chunked datasets start from."""
    looked_up: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Chunked reference dataset → (column of the event dataset, its own key column): a part reads only
    the rows its events name (live_pick's viewers)."""
    quarantine_bucket: Callable[[pd.DataFrame, dict, Any], np.ndarray] | None = None
    """The bucket of quarantined rows a part reads (-1: none; handoff holds a rejected message's room);
    None: parts read no quarantine."""
    merges: tuple[tuple[tuple[str, str], ...], ...] = ()
    """Groups of (dataset, column): rows of the days judged together that state one value of these
    columns must be judged in one part, whatever their buckets (handoff: a room whose rows name two
    customers on two days, a message id repeated across days). Found by the database; rare."""
    day_context: Callable[[Callable[[], Iterator[pd.DataFrame]], dict, Any], dict] | None = None
    """(the day's event rows a part at a time, restored; the whole tables; config) → {"judge": keyword
    arguments, "checks": keyword arguments}: what judging and checking a part read of the whole day
    (retry's baselines)."""
    repeats: tuple = ()
    """The checks' `check_parts.Repeats`: what a check counts over every row of the day."""

    @property
    def bucketed(self) -> bool:
        return bool(self.chunked)


def whole_day(datasets: tuple[str, ...], normalise: Callable[[dict, Any], Normalised]) -> DayParts:
    """A domain that declares no parts: its day is one unit, gated and judged whole."""
    return DayParts(unit="day", verdict_key="", whole=datasets, chunked=(), gate_whole=normalise, gate_chunk=None,
                    bucket=lambda dataset, rows, context, config: None)


def one_dataset(dataset: str, screen, accepted: Callable[[Any], pd.DataFrame] | None = None) -> Normalised:
    """A gated block of one dataset as a `Normalised` (its rows, its quarantine)."""
    return gathered({dataset: screen}, (dataset,), accepted=accepted or (lambda s: s.accepted()))
