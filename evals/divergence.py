"""Where a rule verdict and a golden label part: the rule step, the values that decide it there,
and the wrong cases listed by it (each item once, with every metric it is wrong on)."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any, Callable

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


def deciding_values(row: dict, fields: Iterable[str]) -> list[tuple[str, Any]]:
    """Each named field's value: the verdict row's own field, else the value(s) its evidence cites
    under that name (several: a list, in evidence order). Fields found nowhere are left out."""
    evidence = [x for x in row.get("evidence") or [] if isinstance(x, dict)]
    out = []
    for f in fields:
        if f in row:
            out.append((f, row[f]))
            continue
        cited = [x.get("value") for x in evidence if x.get("field") == f]
        if cited:
            out.append((f, cited[0] if len(cited) == 1 else cited))
    return out


def wrong_cases(
    paired: Paired,
    step: Callable[[str, str], str],
    rows: dict[str, dict],
    summary_field: str,
    deciding: Mapping[str, tuple[str, ...]] | None = None,
    also: Iterable[tuple[str, Callable[[str, str], bool]]] = (),
    metric: str = AGREEMENT,
    differ: Callable[[str, str], bool] = operator.ne,
) -> list[WrongCase]:
    """Every pair that `differ`s, once, for `metric` and each of `also` ((metric, differ)) it fails
    too, with its step, the values that decide that step (`deciding`: step → field names) and the
    verdict row's summary."""
    also = list(also)
    out = []
    for i, g, p in paired.pairs:
        if not differ(g, p):
            continue
        where = step(g, p)
        row = rows.get(i, {})
        out.append(WrongCase(metric, i, g, p, where, row.get(summary_field, ""),
                             metrics=[metric, *[name for name, d in also if d(g, p)]],
                             values=deciding_values(row, (deciding or {}).get(where, ()))))
    return out
