"""Verdict rows as read from a file: anything may be wrong in them, so each is named with care."""

from __future__ import annotations


class VerdictRows:
    """A file's verdict rows (dicts, or None for an unreadable line), each reported under its id."""

    def __init__(self, rows: list, key: str):
        self.rows = rows
        self.key = key

    def ids(self):
        """(id, row) per row: the row's own `key` when it is a non-empty string, else its line."""
        for n, r in enumerate(self.rows):
            named = isinstance(r, dict) and isinstance(r.get(self.key), str) and r[self.key]
            yield (r[self.key] if named else f"line {n + 1}"), r
