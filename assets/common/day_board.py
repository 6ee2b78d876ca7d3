"""A stored day's verdicts as its board asks for them: counts computed by the warehouse, and only the rows shown.

A board counts every row of the day (per verdict, per window, per surface) but shows a bounded number
of them (`evals.board_limits`). Read whole into Python, a 10⁶-row live_pick day's board took 20 s and
1.1 GB; here the database counts and picks the rows to show, and only those are read, whole, by key.

A row's place on the page (its `i-<n>` anchor, the order of the rows within a group, which of them
come first) is its place in the day as the table holds it: SQLite's rowid, PostgreSQL's ctid, the
order the nightly run wrote them, which is the order it judged them (the order of a board judged
from the raw folder). Rows are picked and read whole by that position.
"""

from __future__ import annotations

from functools import cached_property

import pandas as pd

PARTITION = "partition_key"


def q(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


class StoredRows:
    """The day's stored verdict rows, asked of the warehouse (`Board.stored`)."""

    def __init__(self, chain, warehouse, day: str):
        self.chain, self.warehouse, self.day = chain, warehouse, day
        self.table = chain.table("verdicts")
        self.key = chain.output_columns[0]
        self._groups: dict = {}
        self._counts: dict = {}

    @cached_property
    def _pos(self) -> str:
        return "ctid" if self.warehouse.is_postgres else "rowid"

    @cached_property
    def _text_order(self) -> str:
        """Text compared by code point, as Python compares `str`."""
        return ' COLLATE "C"' if self.warehouse.is_postgres else ""

    def _query(self, sql: str, params: dict | None = None) -> list[tuple]:
        return self.warehouse.query(sql, {"_p": self.day, **(params or {})})

    def _marks(self, values, name: str) -> tuple[str, dict]:
        """`IN` list of positions or values, and its parameters."""
        cast = (lambda m: f"CAST({m} AS tid)") if name == "_r" and self.warehouse.is_postgres else (lambda m: m)
        return ", ".join(cast(f":{name}{i}") for i in range(len(values))), {f"{name}{i}": v for i, v in enumerate(values)}

    @cached_property
    def _first(self) -> tuple:
        """(rows, first rowid, last rowid) of the day."""
        found = self._query(f"SELECT COUNT(*), MIN({self._pos}), MAX({self._pos}) FROM {q(self.table)} WHERE {PARTITION} = :_p")
        return found[0]

    @cached_property
    def total(self) -> int:
        return int(self._first[0])

    def _places(self, positions: list) -> dict:
        """Each position's place in the day (from 0). A SQLite day written in one transaction holds
        consecutive rowids, so the place is the rowid less the first; otherwise the database numbers the day."""
        n, low, high = self._first
        if not positions:
            return {}
        if not self.warehouse.is_postgres and n and high - low + 1 == n:
            return {r: r - low for r in positions}
        out = {}
        for start in range(0, len(positions), 900):
            part = positions[start:start + 900]
            marks, params = self._marks(part, "_r")
            out.update(self._query(
                f"SELECT _r, _n FROM (SELECT {self._pos} AS _r, ROW_NUMBER() OVER (ORDER BY {self._pos}) - 1 AS _n "
                f"FROM {q(self.table)} WHERE {PARTITION} = :_p) AS d WHERE _r IN ({marks})", params))
        return {r: int(m) for r, m in out.items()}

    def _whole(self, heads: list[tuple]) -> list[tuple[int, dict]]:
        """(place, every stored column of the row) of rows given as (position, key, ...), in the order of their place."""
        c = self.chain
        positions = [h[0] for h in heads]
        places = self._places(positions)
        frames = []
        for start in range(0, len(positions), 900):
            marks, params = self._marks(positions[start:start + 900], "_r")
            frames.append(self.warehouse.read_rows(self.table, self.day, c.verdict_json_columns, f"{self._pos} IN ({marks})", params))
        by_key = {r.get(self.key): r for frame in frames for r in (c.records(frame) if len(frame) else [])}
        return sorted(((places[h[0]], by_key[h[1]]) for h in heads if h[1] in by_key), key=lambda m: m[0])

    def counts(self, column: str) -> dict:
        """Rows per stored value of `column`."""
        if column not in self._counts:
            self._counts[column] = {v: int(n) for v, n in self._query(
                f"SELECT {q(column)}, COUNT(*) FROM {q(self.table)} WHERE {PARTITION} = :_p GROUP BY {q(column)}")}
        return self._counts[column]

    def groups(self, column: str, limit: int) -> dict:
        """Each stored value of `column`: (its rows, the first `limit` of them as (place, row)), in the
        order of their first row."""
        if (column, limit) not in self._groups:
            heads = self._query(
                f"SELECT _r, {q(self.key)}, {q(column)} FROM (SELECT {self._pos} AS _r, {q(self.key)}, {q(column)}, "
                f"ROW_NUMBER() OVER (PARTITION BY {q(column)} ORDER BY {self._pos}) AS _g FROM {q(self.table)} WHERE {PARTITION} = :_p) AS g "
                f"WHERE _g <= :_limit", {"_limit": int(limit)})
            value_of = {h[1]: h[2] for h in heads}
            out: dict = {}
            for place, row in self._whole(heads):  # in order of place: each value first met at its first row
                out.setdefault(value_of[row.get(self.key)], []).append((place, row))
            counted = self.counts(column)
            self._groups[(column, limit)] = {v: (counted[v], rows) for v, rows in out.items()}
        return self._groups[(column, limit)]

    def positions(self, column: str, values) -> dict:
        """The place of the last row of each of `values` in `column` (what an anchor by id links to)."""
        values = [v for v in dict.fromkeys(values) if v is not None]
        found: dict = {}
        for start in range(0, len(values), 900):
            marks, params = self._marks(values[start:start + 900], "_v")
            for v, r in self._query(f"SELECT {q(column)}, MAX({self._pos}) FROM {q(self.table)} WHERE {PARTITION} = :_p "
                                    f"AND {q(column)} IN ({marks}) GROUP BY {q(column)}", params):
                found[v] = r
        places = self._places(list(found.values()))
        return {v: places[r] for v, r in found.items()}

    # -- live_pick: windows ---------------------------------------------------------------------

    def windows(self, keys: tuple[str, str], verdict: str, first: str, limit: int, per_value: int, every: str):
        """The first `limit` windows (by `keys` values compared as text, the second first), each as
        (key, rows, {(verdict, `first` value): rows}, shown rows as (place, row)), where the shown rows are
        every row whose verdict is `every` and the first `per_value` of each other verdict; with the
        number of windows and the rows of those left off."""
        a, b = keys
        order = ", ".join(f"COALESCE(CAST({q(x)} AS TEXT), 'None'){self._text_order}" for x in (b, a))
        table = q(self.table)
        listed = self._query(f"SELECT {q(a)}, {q(b)}, COUNT(*), COUNT(*) OVER () FROM {table} WHERE {PARTITION} = :_p "
                             f"GROUP BY {q(a)}, {q(b)} ORDER BY {order} LIMIT :_limit", {"_limit": int(limit)})
        many = int(listed[0][3]) if listed else 0  # the windows, counted over the groups before the limit
        listed = [(x, y, n) for x, y, n, _ in listed]
        hidden = self.total - sum(int(n) for *_, n in listed)
        wanted = {(x, y) for x, y, _ in listed}
        if not wanted:
            return [], many, hidden
        parts, params = [], {}
        for j, (col, name) in enumerate(((a, "_a"), (b, "_b"))):
            values = sorted({k[j] for k in wanted if k[j] is not None})
            marks, more = self._marks(values, name)
            params.update(more)
            either = ([f"{q(col)} IN ({marks})"] if values else []) + ([f"{q(col)} IS NULL"] if None in {k[j] for k in wanted} else [])
            parts.append("(" + " OR ".join(either) + ")")
        within = " AND ".join(parts)  # the windows' values crossed: a superset, narrowed below
        split = self._query(f"SELECT {q(a)}, {q(b)}, {q(verdict)}, {q(first)}, COUNT(*) FROM {table} WHERE {PARTITION} = :_p AND {within} "
                            f"GROUP BY {q(a)}, {q(b)}, {q(verdict)}, {q(first)}", params)
        heads = self._query(
            f"SELECT _r, {q(self.key)}, {q(a)}, {q(b)} FROM (SELECT {self._pos} AS _r, {q(self.key)}, {q(a)}, {q(b)}, {q(verdict)}, "
            f"ROW_NUMBER() OVER (PARTITION BY {q(a)}, {q(b)}, {q(verdict)} ORDER BY {self._pos}) AS _g FROM {table} "
            f"WHERE {PARTITION} = :_p AND {within}) AS g WHERE {q(verdict)} = :_every OR _g <= :_per",
            {**params, "_every": every, "_per": int(per_value)})
        window_of = {h[1]: (h[2], h[3]) for h in heads}
        rows = self._whole(heads)
        out = []
        for x, y, n in listed:
            by = {(v, f): int(m) for x2, y2, v, f, m in split if (x2, y2) == (x, y)}
            out.append(((x, y), int(n), by, [m for m in rows if window_of[m[1].get(self.key)] == (x, y)]))
        return out, many, hidden

    # -- retry: surfaces ------------------------------------------------------------------------

    def split(self, columns: list[str]) -> list[tuple]:
        """(values of `columns` as the domain's records hold them, rows) per distinct values, in the
        order of their first row."""
        listed = ", ".join(q(c) for c in columns)
        found = self._query(f"SELECT {listed}, COUNT(*) FROM {q(self.table)} WHERE {PARTITION} = :_p "
                            f"GROUP BY {listed} ORDER BY MIN({self._pos})")
        if not found:
            return []
        # As stored (a float for an exact fraction's column, say); the records read them as every row is read.
        frame = pd.DataFrame([r[:-1] for r in found], columns=columns).reindex(columns=self.chain.output_columns, fill_value=0)
        values = [tuple(r[c] for c in columns) for r in self.chain.records(frame)]
        return [(v, int(r[-1])) for v, r in zip(values, found)]
