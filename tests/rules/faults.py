"""Fault injection for every domain's verdict checks.

A fault changes a deep copy of the engine's clean rows in one way and names the ids the checks
must report; `Faults` holds, for one domain, how rows are found and how the checks are run.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Callable


@dataclass
class Fault:
    """One way to break the clean rows, and the checks that must then fail."""

    name: str
    inject: Callable[[list], list[str]]
    """Mutates the rows in place; returns the ids the checks must name."""
    checks: tuple[str, ...]


def loosened(rows: list) -> list:
    """A deep copy written as loosely as the schema allows: evidence reversed, null hedges left out."""
    rows = copy.deepcopy(rows)
    for r in rows:
        r["evidence"].reverse()
        if r["hedge"] is None:
            del r["hedge"]
    return rows


def differs(old, new) -> bool:
    """A real change: another value, or the same value of another JSON kind (1, 1.0 and True differ)."""
    return old != new or type(old) is not type(new)


@dataclass(frozen=True)
class Faults:
    """One domain's verdict rows: found by `id_field`, evidence by `source_key`, checked by `run_checks`."""

    id_field: str
    run_checks: Callable
    source_key: str = "dataset"

    # -- looking rows up -------------------------------------------------------------------------

    def row_of(self, rows: list, row_id: str) -> dict:
        """The one row with this id (lines that are not objects are skipped)."""
        found = [r for r in rows if isinstance(r, dict) and r.get(self.id_field) == row_id]
        assert len(found) == 1, f"{row_id} should have exactly one row"
        return found[0]

    def evidence_of(self, row: dict, source: str | None, field: str, nth: int = 0) -> dict:
        """The nth evidence item citing this field (of this source, unless source is None)."""
        found = [e for e in row["evidence"] if e["field"] == field and (source is None or e.get(self.source_key) == source)]
        assert len(found) > nth, f"{row[self.id_field]} cites no {source or '*'}.{field} #{nth}"
        return found[nth]

    def results(self, sample, rows) -> dict:
        """Every check's result on these rows, by check id, in the order the checks run."""
        norm, _, config = sample
        return {r.id: r for r in self.run_checks(norm, rows, config)}

    def results_with(self, sample, row_id: str, change: Callable[[dict], object]) -> dict:
        """Every check's result on a copy of the clean rows where change(row) altered one row."""
        rows = copy.deepcopy(sample[1])
        change(self.row_of(rows, row_id))
        return self.results(sample, rows)

    def failures(self, sample, rows) -> dict:
        """The detail of every check that fails on these rows."""
        return {k: r.detail for k, r in self.results(sample, rows).items() if not r.passed}

    def assert_fails(self, sample, fault: Fault, exact: bool = False) -> None:
        """The fault's checks fail naming exactly its ids; with exact, in that order and no other check fails."""
        _, clean, _ = sample
        before = json.dumps(clean, ensure_ascii=False)
        rows = copy.deepcopy(clean)
        faulty = fault.inject(rows)
        got = self.results(sample, rows)
        if exact:
            assert {k for k, r in got.items() if not r.passed} == set(fault.checks), self.failures(sample, rows)
        for check in fault.checks:
            r = got[check]
            assert not r.passed, f"{check} should fail for {fault.name}"
            named = r.failing_ids if exact else sorted(r.failing_ids)
            assert named == (faulty if exact else sorted(faulty)), f"{check} names {r.failing_ids}, expected {faulty}"
            assert r.detail and all(i in r.detail for i in faulty[:5]), (check, r.detail)
        assert json.dumps(clean, ensure_ascii=False) == before, "the shared clean rows must stay untouched"

    # -- fault builders: each changes one row and names it ----------------------------------------

    def set(self, row_id: str, **fields):
        """Fields of a row set to other values."""
        def inject(rows):
            row = self.row_of(rows, row_id)
            for k, v in fields.items():
                assert differs(row.get(k), v), f"{row_id}.{k} is already {v!r}"
                row[k] = v
            return [row_id]

        return inject

    def drop_key(self, row_id: str, key: str):
        """A key left out of a row."""
        def inject(rows):
            del self.row_of(rows, row_id)[key]
            return [row_id]

        return inject

    def add_evidence(self, row_id: str, item: dict):
        """One more evidence item on a row."""
        def inject(rows):
            self.row_of(rows, row_id)["evidence"].append(item)
            return [row_id]

        return inject

    def evidence(self, row_id: str, source: str | None, field: str, changes: dict, nth: int = 0):
        """An evidence item (found as `evidence_of` finds it) with some keys changed."""
        def inject(rows):
            return self._change(row_id, self.evidence_of(self.row_of(rows, row_id), source, field, nth), changes)

        return inject

    def evidence_at(self, row_id: str, index: int, changes: dict):
        """The evidence item at this position with some keys changed."""
        def inject(rows):
            return self._change(row_id, self.row_of(rows, row_id)["evidence"][index], changes)

        return inject

    def remove(self, row_id: str):
        """A row left out."""
        def inject(rows):
            rows.remove(self.row_of(rows, row_id))
            return [row_id]

        return inject

    def duplicate(self, row_id: str, **fields):
        """A second row for the same id, with some fields changed."""
        def inject(rows):
            rows.append({**copy.deepcopy(self.row_of(rows, row_id)), **fields})
            return [row_id]

        return inject

    def copy_as(self, source_id: str, row_id: str, **fields):
        """A copy of one row given another id (and some fields changed)."""
        def inject(rows):
            rows.append({**copy.deepcopy(self.row_of(rows, source_id)), self.id_field: row_id, **fields})
            return [row_id]

        return inject

    @staticmethod
    def _change(row_id: str, item: dict, changes: dict) -> list[str]:
        """Apply changes to an evidence item, at least one of them a real change."""
        assert any(differs(item.get(k), v) for k, v in changes.items()), f"{row_id}: {item} already has {changes}"
        item.update(changes)
        return [row_id]
