"""Verdict rows as read from a file: anything may be wrong in them, so each is named with care."""

from __future__ import annotations


class VerdictRows:
    """A file's verdict rows (dicts, or None for an unreadable line), each reported under its id."""

    def __init__(self, rows: list, key: str):
        self.rows = rows
        self.key = key
        self._ids: list[tuple[str, object]] | None = None

    def ids(self) -> list[tuple[str, object]]:
        """(id, row) per row: the row's own `key` when it is a non-empty string, else its line.

        Named once (every check walks them): the rows are read, never changed, while checked."""
        if self._ids is None:
            key = self.key
            self._ids = [((r[key] if isinstance(r, dict) and isinstance(r.get(key), str) and r[key] else f"line {n + 1}"), r)
                         for n, r in enumerate(self.rows)]
        return self._ids
