"""A domain's gated input, gathered from its datasets' screens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from rules.common.gates import Screen
from rules.common.reconcile import empty_quarantine, reconcile


@dataclass
class Normalised:
    """A domain's gated input: normalised tables, the quarantine, and raw counts per dataset."""

    tables: dict[str, pd.DataFrame]
    quarantine: pd.DataFrame
    raw_counts: dict[str, int] = field(default_factory=dict)

    def reconciliation(self) -> dict:
        return reconcile(self.raw_counts, self.tables, self.quarantine)


def gathered(
    screens: dict[str, Screen],
    datasets: tuple[str, ...],
    kind: type[Normalised] = Normalised,
    accepted: Callable[[Screen], pd.DataFrame] = Screen.accepted,
) -> Normalised:
    """A domain's gated input from its screens: tables and counts per dataset, quarantines in screening order."""
    quarantine = pd.concat([s.quarantine() for s in screens.values()], ignore_index=True)
    return kind(
        tables={name: accepted(screens[name]) for name in datasets},
        quarantine=quarantine if not quarantine.empty else empty_quarantine(),
        raw_counts={name: screens[name].raw_count for name in datasets},
    )
