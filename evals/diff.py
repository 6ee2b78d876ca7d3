"""Run-to-run diff: which items changed verdict between two runs (two days, two uploads) and
which report metrics moved, each with its Wilson interval and the difference's Newcombe interval."""

from __future__ import annotations

from dataclasses import dataclass, field

from statsmodels.stats.proportion import confint_proportions_2indep

from evals.report import Report, label, rows_by_id
from evals.stats import Ratio


@dataclass
class Changed:
    id: str
    before: str
    after: str
    summary: str


@dataclass
class MetricMove:
    name: str
    before: Ratio | None
    after: Ratio | None
    difference: float | None = None
    interval: tuple[float, float] | None = None
    """95% Newcombe interval of after − before (both denominators > 0)."""

    @property
    def moved(self) -> bool:
        if self.before is None or self.after is None:
            return (self.before is None) != (self.after is None)
        return (self.before.numerator, self.before.denominator) != (self.after.numerator, self.after.denominator)


@dataclass
class RunDiff:
    before: str
    after: str
    changed: list[Changed] = field(default_factory=list)
    only_before: list[tuple[str, str]] = field(default_factory=list)
    only_after: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    counts: list[tuple[str, int, int]] = field(default_factory=list)
    """(verdict, items before, items after)."""
    metrics: list[MetricMove] = field(default_factory=list)
    checks: list[tuple[str, str, bool | None, bool | None]] = field(default_factory=list)
    """(check id, title, passed before, passed after); None where the run has no such check."""


def _move(name: str, a: Ratio | None, b: Ratio | None) -> MetricMove:
    m = MetricMove(name, a, b)
    if a is not None and b is not None and a.denominator and b.denominator:
        m.difference = b.value - a.value
        low, high = confint_proportions_2indep(b.numerator, b.denominator, a.numerator, a.denominator, method="newcomb", compare="diff")
        m.interval = (float(low), float(high))
    return m


def diff_runs(rows_a: list[dict], rows_b: list[dict], report_a: Report, report_b: Report, *, id_field: str, verdict_key: str,
              summary_field: str = "summary") -> RunDiff:
    a, b = rows_by_id(rows_a, id_field), rows_by_id(rows_b, id_field)
    out = RunDiff(report_a.scope, report_b.scope)
    for id_ in sorted(a.keys() & b.keys()):
        va, vb = label(a[id_].get(verdict_key)), label(b[id_].get(verdict_key))
        if va != vb:
            out.changed.append(Changed(id_, va, vb, str(b[id_].get(summary_field) or "")))
        else:
            out.unchanged += 1
    out.only_before = [(i, label(a[i].get(verdict_key))) for i in sorted(a.keys() - b.keys())]
    out.only_after = [(i, label(b[i].get(verdict_key))) for i in sorted(b.keys() - a.keys())]
    verdicts = list(dict.fromkeys([*report_a.verdict_counts, *report_b.verdict_counts]))
    out.counts = [(v, report_a.verdict_counts.get(v, 0), report_b.verdict_counts.get(v, 0)) for v in verdicts]
    before = {m.name: m for m in report_a.metrics}
    after = {m.name: m for m in report_b.metrics}
    for name in dict.fromkeys([*before, *after]):
        ma, mb = before.get(name), after.get(name)
        out.metrics.append(_move(name, ma.ratio if ma else None, mb.ratio if mb else None))
    checks_a = {c.id: c for c in report_a.checks}
    checks_b = {c.id: c for c in report_b.checks}
    for cid in dict.fromkeys([*checks_a, *checks_b]):
        c = checks_b.get(cid) or checks_a[cid]
        out.checks.append((cid, c.title, checks_a[cid].passed if cid in checks_a else None,
                           checks_b[cid].passed if cid in checks_b else None))
    return out
