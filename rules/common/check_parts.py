"""A day's check results from its parts' (`rules.common.units`).

Each check of a domain reads a verdict row with the input rows of its own unit, so the checks of a
day in parts are the checks of each part: a check passes when it passes in every part, its failing
ids are every part's, in part order, and its detail words the first reasons met, as one check of
the whole day words them. What a check counts across every row of the day (an id stated by two
rows of different parts, such as two `pick_id`s made alike from different lines) is counted across
the parts by the database and added here (`Repeats`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rules.common.checks import SHOWN, CheckResult, worded


@dataclass(frozen=True)
class Repeats:
    """A check that fails a row whose `column` value another row of the day also states."""

    check: str
    """The check's id (`2.required_filled`)."""
    column: str
    reason: Callable[[object, int], str]
    """(the value, how many rows state it) → the reason, as the check words it."""


def merged(parts: list[list[CheckResult]], repeated: dict[str, dict[str, str]] | None = None) -> list[CheckResult]:
    """One result per check from the parts' results (each part's in the same check order);
    `repeated`: check id → {row id: reason} found across parts, added where a part did not fail the row."""
    repeated = repeated or {}
    out = []
    for results in zip(*parts):
        first = results[0]
        failing = list(dict.fromkeys(i for r in results for i in r.failing_ids))
        shown = [s for r in results for s in r.shown][:SHOWN]
        extra = [(i, why) for i, why in repeated.get(first.id, {}).items() if i not in set(failing)]
        failing += [i for i, _ in extra]
        shown = (shown + extra)[:SHOWN]
        passed = all(r.passed for r in results) and not extra
        out.append(CheckResult(first.id, first.title, passed, failing, worded(shown, len(failing)) if not passed else first.detail,
                               shown))
    return out
