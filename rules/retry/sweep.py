"""The baseline sweep: each surface's baseline scaled ×0.5 … ×1.5, and the retries at each step.

Rule 2 is applied again with the scaled baseline, strictly as the rules do (equal is not a
retry); exact retries do not depend on the baseline and are counted at every step. It reads
verdict rows, turning their numbers back into the exact fractions they stand for.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from rules.retry import verdicts as V
from rules.retry.display import as_fraction


@dataclass
class SweepStep:
    factor: Fraction
    exact: int
    reworded: int
    by_surface: dict[str, int] = field(default_factory=dict)
    """Retries (exact and reworded) per surface."""

    @property
    def retries(self) -> int:
        return self.exact + self.reworded

    def to_dict(self) -> dict:
        return {"factor": str(self.factor), "exact_retry": self.exact, "reworded_retry": self.reworded,
                "retries": self.retries, "by_surface": self.by_surface}


def sweep(rows: list[dict], factors: list[Fraction]) -> list[SweepStep]:
    """The retries at each factor. Rows that read the same (surface, exact, overlap, baseline) are
    counted together: a day's 10⁵ rows hold a few thousand distinct ones, each compared once a step."""
    events: Counter = Counter()
    for r in rows:
        if not isinstance(r, dict) or r.get("verdict") not in V.ORDER or not isinstance(r.get("surface_key"), str):
            continue
        base = as_fraction(r.get("surface_baseline"))
        if base is None:
            continue
        events[(r["surface_key"], r["verdict"] == V.EXACT_RETRY, as_fraction(r.get("max_overlap")), base)] += 1
    surfaces = sorted({s for s, *_ in events})
    steps = []
    for factor in factors:
        exact = reworded = 0
        per: Counter = Counter({s: 0 for s in surfaces})
        for (surface, is_exact, top, base), n in events.items():
            if is_exact:
                exact += n
            elif top is not None and top > factor * base:
                reworded += n
            else:
                continue
            per[surface] += n
        steps.append(SweepStep(factor, exact, reworded, dict(per)))
    return steps
