"""Where a rule verdict and a golden label part: the rule step, and the wrong cases listed by it."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Callable

from evals.report import Paired, WrongCase
from evals.shared_metrics import AGREEMENT


def step_finder(steps: dict[str, str], outside: str, rule_order: Iterable[str] | None = None) -> Callable[[str, str], str]:
    """A domain's `diverging_step`: the step of the first verdict (in rule order, else `steps` order) either side names."""
    order = [v for v in (steps if rule_order is None else rule_order) if v in steps]

    def diverging_step(gold: str, predicted: str) -> str:
        for verdict in order:
            if verdict in (gold, predicted):
                return steps[verdict]
        return outside

    return diverging_step


def wrong_cases(
    paired: Paired,
    step: Callable[[str, str], str],
    rows: dict[str, dict],
    summary_field: str,
    metric: str = AGREEMENT,
    differ: Callable[[str, str], bool] = operator.ne,
) -> list[WrongCase]:
    """Every pair that `differ`s, for `metric`, with its step and the verdict row's summary."""
    return [WrongCase(metric, i, g, p, step(g, p), rows.get(i, {}).get(summary_field, ""))
            for i, g, p in paired.pairs if differ(g, p)]
