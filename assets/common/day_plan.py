"""Which parts a stored day is judged and checked in, and what a part reads (`rules.common.units`).

A part is a set of unit buckets, planned from the database's count of rows per bucket: buckets are
taken in order until a part holds about `PART_ROWS` rows; buckets that a domain's `merges` tie
together (a room named with two customers on two days) always fall in one part. Reading a part
reads its buckets' rows of every bucketed table, the rows its events look up in a chunked reference
table, and the small tables whole (once per day, `PartReader`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pandas as pd

from assets.resources.warehouse import BUCKET_COLUMN, WarehouseResource
from rules.common.units import BUCKETS, PART_ROWS

PART_ROWS_ENV = "VERDICTS_PART_ROWS"


@dataclass(frozen=True)
class Part:
    number: int
    buckets: tuple[int, ...]
    rows: int

    @property
    def first(self) -> bool:
        """The first part also reads the rows that belong to no unit (a quarantined line naming no room)."""
        return self.number == 0


@dataclass(frozen=True)
class DayPlan:
    day: str
    days: tuple[str, ...]
    """The partitions read: the day, and its neighbours for a domain with a day window (those stored)."""
    parts: tuple[Part, ...]

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.parts)

    def groups(self, n: int) -> list[tuple[Part, ...]]:
        """The parts in at most `n` runs of about equal rows, in order (one step each)."""
        n = max(1, min(n, len(self.parts)))
        total, out, run, done = max(self.rows, 1), [], [], 0
        for part in self.parts:
            run.append(part)
            done += part.rows
            if len(out) < n - 1 and done >= total * (len(out) + 1) / n:
                out.append(tuple(run))
                run = []
        if run or not out:
            out.append(tuple(run))
        return out


def bucketed(c) -> list[str]:
    """The datasets read a part at a time by bucket (not the small ones, nor those looked up)."""
    return [d for d in c.day_parts.chunked if d not in c.day_parts.looked_up]


def part_rows() -> int:
    """Rows of a part: `VERDICTS_PART_ROWS`, else `PART_ROWS`."""
    raw = os.environ.get(PART_ROWS_ENV, "").strip()
    if not raw:
        return PART_ROWS
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{PART_ROWS_ENV}={raw!r}: expected a whole number of rows")
    return int(raw)


def plan_day(c, warehouse: WarehouseResource, day: str, days: list[str], size: int | None = None) -> DayPlan:
    size = size or part_rows()
    if not c.day_parts.bucketed:
        return DayPlan(day, tuple(days), (Part(0, (), 0),))
    counts: dict[int, int] = {}
    for d in bucketed(c):
        table = c.table(d)
        if not warehouse.has_table(table):
            continue
        if BUCKET_COLUMN not in warehouse.columns(table):
            raise LookupError(f"{table} was stored without unit buckets (by an earlier version): materialise the day's "
                              f"normalised tables again")
        for b, n in warehouse.query(f'SELECT {BUCKET_COLUMN}, COUNT(*) FROM "{table}" WHERE partition_key IN ({_listed(days)}) '
                                    f"AND {BUCKET_COLUMN} IS NOT NULL GROUP BY {BUCKET_COLUMN}"):
            counts[int(b)] = counts.get(int(b), 0) + int(n)
    root = list(range(BUCKETS))

    def find(b: int) -> int:
        while root[b] != b:
            root[b] = root[root[b]]
            b = root[b]
        return b

    for group in c.day_parts.merges:
        for members in _tied(c, warehouse, group, days):
            for b in members[1:]:
                root[find(b)] = find(members[0])
    components: dict[int, list[int]] = {}
    for b in sorted(counts):
        components.setdefault(find(b), []).append(b)
    parts, run, rows = [], [], 0
    for members in sorted(components.values()):
        n = sum(counts[b] for b in members)
        if run and rows + n > size:
            parts.append(Part(len(parts), tuple(run), rows))
            run, rows = [], 0
        run += members
        rows += n
    if run or not parts:
        parts.append(Part(len(parts), tuple(run), rows))
    return DayPlan(day, tuple(days), tuple(parts))


def _listed(days) -> str:
    return ", ".join("'" + d.replace("'", "''") + "'" for d in days)


def _tied(c, warehouse: WarehouseResource, group: tuple[tuple[str, str], ...], days: list[str]) -> list[list[int]]:
    """The buckets of rows stating one value of the group's columns, for each value stated in more than one bucket."""
    selects = [f'SELECT "{col}" AS k, {BUCKET_COLUMN} AS b FROM "{c.table(d)}" WHERE partition_key IN ({_listed(days)}) '
               f"AND {BUCKET_COLUMN} IS NOT NULL" for d, col in group if warehouse.has_table(c.table(d))]
    if not selects:
        return []
    rows = " UNION ALL ".join(selects)
    found = warehouse.query(f"SELECT k, b FROM ({rows}) AS u WHERE k IN (SELECT k FROM ({rows}) AS v GROUP BY k "
                            f"HAVING COUNT(DISTINCT b) > 1) GROUP BY k, b")
    tied: dict[object, list[int]] = {}
    for k, b in found:
        tied.setdefault(k, []).append(int(b))
    return list(tied.values())


@dataclass
class PartReader:
    """Reads the parts of one day's plan; the small tables are read once."""

    c: object
    warehouse: WarehouseResource
    plan: DayPlan
    config: object
    _whole: dict = field(default_factory=dict)

    def raw_tables(self, part: Part, day: str) -> tuple[dict[str, pd.DataFrame], dict]:
        """One day's stored tables of the part, as stored (JSON read back), and verdict key → bucket."""
        c, w = self.c, self.warehouse
        parts = c.day_parts
        tables: dict[str, pd.DataFrame] = {}
        buckets: dict = {}
        for d in parts.whole:
            if (day, d) not in self._whole:
                self._whole[(day, d)] = w.read_rows(c.table(d), day, c.json_columns)
            tables[d] = self._whole[(day, d)]
        for d in bucketed(c):
            frame = w.read_buckets(c.table(d), day, part.buckets, c.json_columns, with_bucket=True) if w.has_table(c.table(d)) \
                else pd.DataFrame(columns=[*c.stored_columns(d), BUCKET_COLUMN])
            key = parts.verdict_key
            if key in frame.columns and d in c.time_fields:
                buckets.update(zip(frame[key].tolist(), frame[BUCKET_COLUMN].tolist()))
            tables[d] = frame.drop(columns=[BUCKET_COLUMN])
        for d, (column, key) in parts.looked_up.items():
            names = next(t[column] for name, t in tables.items() if name in c.time_fields and column in t.columns)
            tables[d] = w.read_in(c.table(d), day, key, names.tolist(), c.json_columns)
        if not parts.bucketed:
            buckets = {}
        return tables, buckets

    def quarantine(self, part: Part, day: str) -> pd.DataFrame:
        table = self.c.table("quarantine")
        if self.c.day_parts.quarantine_bucket is None:
            return self.warehouse.read_rows(table, day)
        return self.warehouse.read_buckets(table, day, part.buckets, unbucketed=part.first)
