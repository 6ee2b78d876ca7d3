"""Run-to-run diff, as evaluation tools have it: per item improved / regressed / changed against a
baseline run, a "different only" view with the regressions first, the metrics that moved (each
with its Wilson interval and, for sample proportions, the difference's Newcombe interval), the
checks, and what differs in the runs' pinned inputs.

An item is compared by id. With a golden label on each side, it is *regressed* when the baseline
verdict matched its label and the new one does not, *improved* the other way round, *changed*
when the verdict moved otherwise (no label, or from one wrong verdict to another), *same* when
the verdict did not move. A run read from a report file holds its labelled items only; a run
held in memory (the admin pages) holds every item.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statsmodels.stats.proportion import confint_proportions_2indep

from evals.paired import PairedDifference, paired_difference
from evals.pins import differences
from evals.report import Report, label, rows_by_id
from evals.stats import Ratio

REGRESSED, IMPROVED, CHANGED, SAME, ONLY_BEFORE, ONLY_AFTER = "regressed", "improved", "changed", "same", "only_before", "only_after"
KIND_ORDER = (REGRESSED, CHANGED, IMPROVED, ONLY_BEFORE, ONLY_AFTER, SAME)
"""The "different only" view's order: what got worse first."""
KIND_WORDS = {REGRESSED: "퇴보", IMPROVED: "개선", CHANGED: "바뀜", SAME: "같음", ONLY_BEFORE: "이전에만", ONLY_AFTER: "이후에만"}


@dataclass
class RunView:
    """What a diff compares of one run."""

    title: str
    items: dict[str, tuple[str, str | None, str]]
    """id → (verdict, golden label or None, summary)."""
    labelled_only: bool = False
    metrics: dict[str, tuple[Ratio | None, bool]] = field(default_factory=dict)
    """name → (ratio, census)."""
    checks: dict[str, tuple[str, bool]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    pins: dict = field(default_factory=dict)


def view_of_report(report: Report, rows: list[dict] | None = None, *, id_field: str = "", verdict_key: str = "",
                   summary_field: str = "summary") -> RunView:
    """A run from its report, with every verdict row when `rows` are given (else its labelled items)."""
    gold = {i: g for i, g, _ in report.labelled}
    if rows is not None:
        by_id = rows_by_id(rows, id_field)
        items = {i: (label(r.get(verdict_key)), gold.get(i), str(r.get(summary_field) or "")) for i, r in by_id.items()}
    else:
        items = {i: (p, g, "") for i, g, p in report.labelled}
    return RunView(report.scope, items, rows is None, {m.name: (m.ratio, m.census) for m in report.metrics},
                   {c.id: (c.title, c.passed) for c in report.checks}, dict(report.verdict_counts), dict(report.pins))


def view_of_json(data: dict) -> RunView:
    """A run from a report.json (`verdicts agree`, `verdicts eval`, the nightly report): its labelled items."""
    def ratio(m: dict) -> Ratio | None:
        r = m.get("ratio")
        return Ratio(r["numerator"], r["denominator"]) if r else None

    items = {x["id"]: (x["verdict"], x.get("gold"), "") for x in data.get("items", [])}
    summaries = {w["id"]: w.get("summary") or "" for w in data.get("wrong_cases", [])}
    items = {i: (v, g, summaries.get(i, s)) for i, (v, g, s) in items.items()}
    return RunView(str(data.get("scope", "")), items, True, {m["name"]: (ratio(m), bool(m.get("census"))) for m in data.get("metrics", [])},
                   {c["id"]: (c.get("title", ""), bool(c["passed"])) for c in data.get("checks", [])},
                   dict(data.get("verdict_counts", {})), dict(data.get("pins") or {}))


@dataclass
class ItemDiff:
    id: str
    before: str | None
    after: str | None
    gold_before: str | None
    gold_after: str | None
    kind: str
    summary: str = ""

    @property
    def gold(self) -> str | None:
        return self.gold_after if self.gold_after is not None else self.gold_before

    @property
    def label_changed(self) -> bool:
        return None not in (self.gold_before, self.gold_after) and self.gold_before != self.gold_after


def classify(before: str | None, after: str | None, gold_before: str | None, gold_after: str | None) -> str:
    if before is None:
        return ONLY_AFTER
    if after is None:
        return ONLY_BEFORE
    if before == after:
        return SAME
    if gold_before is not None and gold_after is not None:
        right_before, right_after = before == gold_before, after == gold_after
        if right_before and not right_after:
            return REGRESSED
        if right_after and not right_before:
            return IMPROVED
    return CHANGED


@dataclass
class MetricMove:
    name: str
    before: Ratio | None
    after: Ratio | None
    census: bool = False
    difference: float | None = None
    interval: tuple[float, float] | None = None
    """95% Newcombe interval of after − before (both denominators > 0; sample proportions only)."""

    @property
    def moved(self) -> bool:
        if self.before is None or self.after is None:
            return (self.before is None) != (self.after is None)
        return (self.before.numerator, self.before.denominator) != (self.after.numerator, self.after.denominator)


@dataclass
class RunDiff:
    before: str
    after: str
    items: list[ItemDiff] = field(default_factory=list)
    labelled_only: bool = False
    pins: list[str] = field(default_factory=list)
    """What differs in the two runs' pinned inputs (empty: the same inputs)."""
    counts: list[tuple[str, int, int]] = field(default_factory=list)
    """(verdict, items before, items after)."""
    metrics: list[MetricMove] = field(default_factory=list)
    checks: list[tuple[str, str, bool | None, bool | None]] = field(default_factory=list)
    """(check id, title, passed before, passed after); None where the run has no such check."""
    agreement: PairedDifference | None = None
    """Verdict agreement after − before over the items labelled alike in both runs: the same items
    twice, so a paired difference (its discordant pairs are the improved and regressed items)."""

    def of(self, kind: str) -> list[ItemDiff]:
        return [i for i in self.items if i.kind == kind]

    def tally(self) -> dict[str, int]:
        return {k: len(self.of(k)) for k in KIND_ORDER}

    def different(self) -> list[ItemDiff]:
        """Every item that is not the same, regressions first (then changed, improved, one side only)."""
        return sorted((i for i in self.items if i.kind != SAME), key=lambda i: (KIND_ORDER.index(i.kind), i.id))

    @property
    def regressed(self) -> list[ItemDiff]:
        return self.of(REGRESSED)

    @property
    def checks_broken(self) -> list[str]:
        """Checks that passed before and fail now."""
        return [cid for cid, _, a, b in self.checks if a is True and b is False]

    # The admin pages' earlier names.
    @property
    def changed(self) -> list[ItemDiff]:
        return [i for i in self.items if i.kind in (REGRESSED, IMPROVED, CHANGED)]

    @property
    def unchanged(self) -> int:
        return len(self.of(SAME))

    @property
    def only_before(self) -> list[tuple[str, str]]:
        return [(i.id, i.before) for i in self.of(ONLY_BEFORE)]

    @property
    def only_after(self) -> list[tuple[str, str]]:
        return [(i.id, i.after) for i in self.of(ONLY_AFTER)]

    def to_dict(self) -> dict:
        return {
            "before": self.before, "after": self.after, "labelled_only": self.labelled_only, "pins": self.pins,
            "tally": self.tally(),
            "different": [{"id": i.id, "kind": i.kind, "gold": i.gold, "before": i.before, "after": i.after,
                           "label_changed": i.label_changed, "summary": i.summary} for i in self.different()],
            "metrics": [{"name": m.name, "before": m.before.to_dict() if m.before else None, "after": m.after.to_dict() if m.after else None,
                         "census": m.census, "difference": m.difference, "newcombe_95": m.interval, "moved": m.moved} for m in self.metrics],
            "counts": [{"verdict": v, "before": a, "after": b} for v, a, b in self.counts],
            "checks": [{"id": c, "title": t, "before": a, "after": b} for c, t, a, b in self.checks],
            "agreement_paired": self.agreement.to_dict() if self.agreement else None,
        }


def _move(name: str, a: Ratio | None, b: Ratio | None, census: bool) -> MetricMove:
    m = MetricMove(name, a, b, census)
    if a is not None and b is not None and a.denominator and b.denominator:
        m.difference = b.value - a.value
        if not census:  # a count of everything in scope has no sampling error to bound
            low, high = confint_proportions_2indep(b.numerator, b.denominator, a.numerator, a.denominator, method="newcomb", compare="diff")
            m.interval = (float(low), float(high))
    return m


def diff_views(a: RunView, b: RunView) -> RunDiff:
    out = RunDiff(a.title, b.title, labelled_only=a.labelled_only or b.labelled_only, pins=differences(a.pins, b.pins))
    for id_ in sorted(a.items.keys() | b.items.keys()):
        va, ga, _ = a.items.get(id_, (None, None, ""))
        vb, gb, sb = b.items.get(id_, (None, None, ""))
        before_summary = a.items.get(id_, ("", None, ""))[2]
        summary = sb or (f"(기준 실행의 요약) {before_summary}" if before_summary else "")
        out.items.append(ItemDiff(id_, va, vb, ga, gb, classify(va, vb, ga, gb), summary))
    same_label = [i for i in out.items if None not in (i.before, i.after, i.gold_before) and i.gold_before == i.gold_after]
    if same_label:
        out.agreement = paired_difference([i.before == i.gold_before for i in same_label], [i.after == i.gold_after for i in same_label])
    verdicts = list(dict.fromkeys([*a.counts, *b.counts]))
    out.counts = [(v, a.counts.get(v, 0), b.counts.get(v, 0)) for v in verdicts]
    for name in dict.fromkeys([*a.metrics, *b.metrics]):
        (ra, ca), (rb, cb) = a.metrics.get(name, (None, False)), b.metrics.get(name, (None, False))
        out.metrics.append(_move(name, ra, rb, ca or cb))
    for cid in dict.fromkeys([*a.checks, *b.checks]):
        title = (b.checks.get(cid) or a.checks[cid])[0]
        out.checks.append((cid, title, a.checks[cid][1] if cid in a.checks else None, b.checks[cid][1] if cid in b.checks else None))
    return out


def diff_runs(rows_a: list[dict], rows_b: list[dict], report_a: Report, report_b: Report, *, id_field: str, verdict_key: str,
              summary_field: str = "summary") -> RunDiff:
    """Two runs held in memory: every item of each compared."""
    kw = {"id_field": id_field, "verdict_key": verdict_key, "summary_field": summary_field}
    return diff_views(view_of_report(report_a, rows_a, **kw), view_of_report(report_b, rows_b, **kw))
