"""Statistics for golden-agreement reports.

Report conventions:

* a ratio is always shown as ``numerator / denominator``;
* a percentage is added only when the denominator is at least :data:`MIN_DENOMINATOR_FOR_PERCENT`
  (10), because a percentage of a handful of cases suggests more precision than there is;
* the 95% Wilson score interval is shown in percent for d >= 10 and as plain fractions with
  two decimals for 0 < d < 10 (same reason), and as ``—`` when there is no data.

Formulas come from statsmodels rather than being re-implemented here.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "MIN_DENOMINATOR_FOR_PERCENT",
    "Ratio",
    "cohens_kappa",
    "confusion_matrix",
    "label_order",
    "per_label_precision_recall",
]

MIN_DENOMINATOR_FOR_PERCENT = 10
NO_DATA = "—"


@dataclass(frozen=True)
class Ratio:
    """A count-based proportion such as ``41 / 42`` with its 95% Wilson interval."""

    numerator: int
    denominator: int

    def __post_init__(self) -> None:
        for name in ("numerator", "denominator"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            # numpy ints would leak into to_dict() and break JSON serialisation.
            object.__setattr__(self, name, int(value))
        if self.denominator < 0 or self.numerator < 0:
            raise ValueError(f"counts must be non-negative: {self.numerator} / {self.denominator}")
        if self.numerator > self.denominator:
            raise ValueError(f"numerator exceeds denominator: {self.numerator} / {self.denominator}")

    @property
    def value(self) -> float | None:
        """The proportion, or ``None`` when the denominator is 0."""
        if self.denominator == 0:
            return None
        return self.numerator / self.denominator

    @property
    def wilson(self) -> tuple[float, float] | None:
        """95% Wilson score interval ``(low, high)`` as fractions, or ``None`` when d == 0."""
        if self.denominator == 0:
            return None
        low, high = proportion_confint(self.numerator, self.denominator, alpha=0.05, method="wilson")
        # Clamp float noise (e.g. 1.0000000000000002) so the bounds stay proportions.
        return (min(max(float(low), 0.0), 1.0), min(max(float(high), 0.0), 1.0))

    @property
    def shows_percent(self) -> bool:
        return self.denominator >= MIN_DENOMINATOR_FOR_PERCENT

    def format(self) -> str:
        """``"41 / 42 (97.6%)"`` when d >= 10, ``"3 / 8"`` when 0 < d < 10, ``"0 / 0"`` when d == 0."""
        text = f"{self.numerator} / {self.denominator}"
        if self.shows_percent:
            text += f" ({self.value * 100:.1f}%)"
        return text

    def format_interval(self) -> str:
        """Wilson interval for display.

        ``"[87.7%, 99.6%]"`` (percent, one decimal) when d >= 10; ``"[0.14, 0.69]"`` (fractions,
        two decimals, no percent sign) when 0 < d < 10; ``"—"`` when d == 0.
        """
        interval = self.wilson
        if interval is None:
            return NO_DATA
        low, high = interval
        if self.shows_percent:
            return f"[{low * 100:.1f}%, {high * 100:.1f}%]"
        return f"[{low:.2f}, {high:.2f}]"

    def to_dict(self) -> dict[str, Any]:
        interval = self.wilson
        return {
            "numerator": self.numerator,
            "denominator": self.denominator,
            "value": self.value,
            "wilson_low": None if interval is None else interval[0],
            "wilson_high": None if interval is None else interval[1],
            "display": self.format(),
        }

    def __str__(self) -> str:
        return self.format()


def _check_lengths(gold: Sequence[str], pred: Sequence[str]) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"gold and pred differ in length: {len(gold)} != {len(pred)}")


def label_order(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> list[str]:
    """``labels`` in the given order (duplicates dropped), then any other label seen, sorted."""
    ordered = list(dict.fromkeys(labels))
    known = set(ordered)
    extras = sorted({*gold, *pred} - known)
    return ordered + extras


def confusion_matrix(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> pd.DataFrame:
    """Counts with gold labels as rows and predicted labels as columns.

    Rows and columns follow :func:`label_order`, so labels never seen still get a zero row and
    column, and unexpected labels are not silently dropped.
    """
    _check_lengths(gold, pred)
    order = label_order(gold, pred, labels)
    counts = Counter(zip(gold, pred))
    data = [[counts.get((g, p), 0) for p in order] for g in order]
    frame = pd.DataFrame(
        data,
        index=pd.Index(order, name="gold"),
        columns=pd.Index(order, name="predicted"),
        dtype="int64",
    )
    return frame


def cohens_kappa(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> float | None:
    """Cohen's kappa between gold and predicted labels (unweighted).

    ``None`` when kappa is undefined: empty input, or expected agreement of 1 — which happens
    when both raters use one and the same label for every item.
    """
    _check_lengths(gold, pred)
    if len(gold) == 0:
        return None
    table = confusion_matrix(gold, pred, labels).to_numpy(dtype=float)
    with warnings.catch_warnings():
        # 0/0 for the degenerate table is reported as None below, not as a warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        kappa = float(_sm_cohens_kappa(table, return_results=False))
    if math.isnan(kappa) or math.isinf(kappa):
        return None
    return kappa


def per_label_precision_recall(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]
) -> dict[str, dict[str, Ratio]]:
    """Per label: precision = TP / predicted as label, recall = TP / gold label.

    Keys follow :func:`label_order`. A label never predicted has precision ``0 / 0``; one never
    in gold has recall ``0 / 0`` — shown as no data rather than as 0% or 100%.
    """
    matrix = confusion_matrix(gold, pred, labels)
    predicted_totals = matrix.sum(axis=0)
    gold_totals = matrix.sum(axis=1)
    result: dict[str, dict[str, Ratio]] = {}
    for label in matrix.index:
        true_positives = int(matrix.at[label, label])
        result[label] = {
            "precision": Ratio(true_positives, int(predicted_totals[label])),
            "recall": Ratio(true_positives, int(gold_totals[label])),
        }
    return result
