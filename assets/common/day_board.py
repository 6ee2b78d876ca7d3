"""A stored day's verdicts as its board asks for them: counts computed by the warehouse, and only the rows shown.

A board counts every row of the day (per verdict, per window, per surface) but shows a bounded number
of them (`evals.board_limits`). Read whole into Python, a 10⁶-row live_pick day's board took 20 s and
1.1 GB; here the database counts and picks the rows to show, and only those are read, whole, by key.

A row's place on the page (its `i-<n>` anchor, the order of the rows within a group, which of them
come first) is its place in the day as the table holds it: SQLite's rowid, PostgreSQL's ctid, the
order a scan of the partition returns (what reading the day whole gave). Each query numbers the
partition's rows in that order in the database (`_n`, from 0).
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

    @cached_property
    def _position(self) -> str:
        return "ctid" if self.warehouse.is_postgres else "rowid"

    @cached_property
    def _text_order(self) -> str:
        """Text compared by code point, as Python compares `str`."""
        return ' COLLATE "C"' if self.warehouse.is_postgres else ""

    def _numbered(self, columns) -> str:
        listed = ", ".join(q(c) for c in dict.fromkeys(columns))
        return (f"SELECT {listed}, ROW_NUMBER() OVER (ORDER BY {self._position}) - 1 AS _n "
                f'FROM {q(self.table)} WHERE {PARTITION} = :_p')

    def _query(self, sql: str, params: dict | None = None) -> list[tuple]:
        return self.warehouse.query(sql, {"_p": self.day, **(params or {})})

    @cached_property
    def total(self) -> int:
        return int(self._query(f"SELECT COUNT(*) FROM {q(self.table)} WHERE {PARTITION} = :_p")[0][0])

    def _whole(self, numbered: list[tuple]) -> list[tuple[int, dict]]:
        """(n, every stored column of the row) of each (key, n), in the order given."""
        c = self.chain
        found = c.records(self.warehouse.read_in(self.table, self.day, self.key, [k for k, _ in numbered], c.verdict_json_columns))
        by_key = {r.get(self.key): r for r in found}
        return [(int(n), by_key[k]) for k, n in numbered if k in by_key]

    def groups(self, column: str, limit: int) -> dict:
        """Each stored value of `column`: (its rows, the first `limit` of them as (n, row)), in the order
        of their first row."""
        if (column, limit) in self._groups:
            return self._groups[(column, limit)]
        numbered = self._numbered([self.key, column])
        counts = self._query(f"SELECT {q(column)}, COUNT(*), MIN(_n) FROM ({numbered}) AS d GROUP BY {q(column)} ORDER BY MIN(_n)")
        heads = self._query(
            f"SELECT {q(self.key)}, _n, {q(column)} FROM (SELECT {q(self.key)}, {q(column)}, _n, "
            f"ROW_NUMBER() OVER (PARTITION BY {q(column)} ORDER BY _n) AS _g FROM ({numbered}) AS d) AS g "
            f"WHERE _g <= :_limit ORDER BY _n", {"_limit": int(limit)})
        rows = self._whole([(k, n) for k, n, _ in heads])
        out = {value: (int(n), []) for value, n, _ in counts}
        for (_, _, value), row in zip(heads, rows):
            out[value][1].append(row)
        self._groups[(column, limit)] = out
        return out

    def positions(self, column: str, values) -> dict:
        """The place of the last row of each of `values` in `column` (what an anchor by id links to)."""
        values = [v for v in dict.fromkeys(values) if v is not None]
        if not values:
            return {}
        marks = ", ".join(f":_v{i}" for i in range(len(values)))
        found = self._query(f"SELECT {q(column)}, MAX(_n) FROM ({self._numbered([column])}) AS d "
                            f"WHERE {q(column)} IN ({marks}) GROUP BY {q(column)}", {f"_v{i}": v for i, v in enumerate(values)})
        return {v: int(n) for v, n in found}

    # -- live_pick: windows ---------------------------------------------------------------------

    def windows(self, keys: tuple[str, str], verdict: str, first: str, limit: int, per_value: int, every: str):
        """The first `limit` windows (by `keys` values, compared as text, in that order of `keys`
        reversed: start then broadcast), as (key, rows, {(verdict, version): rows}, shown rows) where the
        shown rows are every row whose verdict is `every` and the first `per_value` of each other verdict;
        with the number of windows and the rows of those left off."""
        a, b = keys  # the window is (a, b); it sorts by b, then a
        order = ", ".join(f"COALESCE(CAST({q(x)} AS TEXT), 'None'){self._text_order}" for x in (b, a))
        table = q(self.table)
        listed = self._query(f"SELECT {q(a)}, {q(b)}, COUNT(*) FROM {table} WHERE {PARTITION} = :_p "
                             f"GROUP BY {q(a)}, {q(b)} ORDER BY {order} LIMIT :_limit", {"_limit": int(limit)})
        many = int(self._query(f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE {PARTITION} = :_p GROUP BY {q(a)}, {q(b)}) AS w")[0][0])
        hidden = self.total - sum(int(n) for *_, n in listed)
        wanted = {(x, y) for x, y, _ in listed}
        if not wanted:
            return [], many, hidden
        xs, ys = sorted({x for x, _ in wanted if x is not None}), sorted({y for _, y in wanted if y is not None})
        params = {**{f"_a{i}": x for i, x in enumerate(xs)}, **{f"_b{i}": y for i, y in enumerate(ys)}}
        within = " AND ".join(
            f"({q(col)} IN ({', '.join(f':_{p}{i}' for i in range(len(vals)))})" + (f" OR {q(col)} IS NULL" if None in {k[j] for k in wanted} else "") + ")"
            if vals else f"{q(col)} IS NULL" for j, (col, p, vals) in enumerate(((a, "a", xs), (b, "b", ys))))
        split = self._query(f"SELECT {q(a)}, {q(b)}, {q(verdict)}, {q(first)}, COUNT(*) FROM {table} WHERE {PARTITION} = :_p AND {within} "
                            f"GROUP BY {q(a)}, {q(b)}, {q(verdict)}, {q(first)}", params)
        numbered = self._numbered([self.key, a, b, verdict])
        heads = self._query(
            f"SELECT {q(self.key)}, _n, {q(a)}, {q(b)} FROM (SELECT {q(self.key)}, {q(a)}, {q(b)}, {q(verdict)}, _n, "
            f"ROW_NUMBER() OVER (PARTITION BY {q(a)}, {q(b)}, {q(verdict)} ORDER BY _n) AS _g FROM ({numbered}) AS d "
            f"WHERE {within}) AS g WHERE {q(verdict)} = :_every OR _g <= :_per ORDER BY _n",
            {**params, "_every": every, "_per": int(per_value)})
        rows = self._whole([(k, n) for k, n, *_ in heads])
        out = []
        for x, y, n in listed:
            by = {(v, s): int(m) for x2, y2, v, s, m in split if (x2, y2) == (x, y)}
            shown = [row for (_, _, x2, y2), row in zip(heads, rows) if (x2, y2) == (x, y)]
            out.append(((x, y), int(n), by, shown))
        return out, many, hidden

    # -- retry: surfaces ------------------------------------------------------------------------

    def split(self, columns: list[str]) -> list[tuple]:
        """(values of `columns` as the domain's records hold them, rows, first row's place) per distinct
        values, in the order of their first row."""
        listed = ", ".join(q(c) for c in columns)
        found = self._query(f"SELECT {listed}, COUNT(*), MIN(_n) FROM ({self._numbered(columns)}) AS d GROUP BY {listed} ORDER BY MIN(_n)")
        if not found:
            return []
        # As stored (a float for an exact fraction's column, say); the records read them as every row is read.
        frame = pd.DataFrame([r[:-2] for r in found], columns=columns).reindex(columns=self.chain.output_columns, fill_value=0)
        values = [tuple(r[c] for c in columns) for r in self.chain.records(frame)]
        return [(v, int(r[-2]), int(r[-1])) for v, r in zip(values, found)]
