"""The golden-agreement report, shared by every domain (seed 004 is the model).

A report is data first (`Report`, JSON-ready through `to_dict`); `evals.render` turns it
into Markdown for the Dagster UI and a self-contained HTML page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from evals.check_titles import in_korean
from evals.stats import Ratio, cohens_kappa, confusion_matrix, label_order, per_label_precision_recall
from rules.common.checks import CheckResult
from rules.common.reconcile import empty_references

MET = "기준 충족"
NOT_MET = "기준 미달"
RECORD_ONLY = "기록만"
PERSON = "사람이 확인"
NO_DATA = "측정 불가"
EMPTY = "판정한 항목 없음"
"""The status of a criterion in a scope with nothing judged: no verdict is given either way."""
CRITERION_STATUSES = (MET, NOT_MET, NO_DATA)
CENSUS = "표본 아님 (전수)"
"""Shown instead of an interval for a count of everything in scope (checks, quarantined rows): there is no sampling error."""

# Honesty notes every domain's report carries, among its own.
SYNTHETIC_LABELS_NOTE = "골든 라벨은 규칙을 쓴 같은 팀이 만든 합성 라벨이고 사람 검수 전입니다. 일치율은 규칙이 자기 시험을 통과했다는 뜻 이상이 아닙니다."
SMALL_DENOMINATOR_NOTE = "분모가 10보다 작은 지표는 퍼센트를 적지 않습니다."


@dataclass
class Metric:
    name: str
    definition: str
    """What is counted: numerator / denominator."""
    ratio: Ratio | None
    criterion: str
    status: str
    rests_on: str
    """What the figure rests on: rule, data, person."""
    note: str = ""
    key: str = ""
    """For a person-checked metric, the manual check it reports (`persona.1`); see `evals.manual_checks`."""
    census: bool = False
    """The ratio counts everything in scope (checks run, rows quarantined), not a sample: no interval."""
    held_out: Ratio | None = None
    """The same figure measured on data the method was not fitted to, shown beside the fitted one."""
    held_out_label: str = ""

    def interval_text(self) -> str:
        """The 95% Wilson interval for a sample proportion; none for a census or a missing ratio."""
        if self.ratio is None:
            return "—"
        return CENSUS if self.census else self.ratio.format_interval()

    def value_text(self) -> str:
        """n / d (with % from 10 up), and the held-out figure beside it when there is one."""
        if self.ratio is None:
            return "—"
        held = f" · {self.held_out_label or '보류 세트'} {self.held_out.format()}" if self.held_out is not None else ""
        return self.ratio.format() + held

    def to_dict(self) -> dict[str, Any]:
        ratio = self.ratio.to_dict() if self.ratio else None
        if ratio and self.census:
            ratio.update(wilson_low=None, wilson_high=None)
        return {
            "name": self.name,
            "definition": self.definition,
            "ratio": ratio,
            "criterion": self.criterion,
            "status": self.status,
            "rests_on": self.rests_on,
            "note": self.note,
            "key": self.key,
            "census": self.census,
            "held_out": self.held_out.to_dict() if self.held_out else None,
            "held_out_label": self.held_out_label,
        }


def threshold_metric(name: str, definition: str, ratio: Ratio, minimum: float, rests_on: str, note: str = "",
                     census: bool = False) -> Metric:
    """A metric judged against a minimum share."""
    if ratio.denominator == 0:
        status = NO_DATA
    else:
        status = MET if ratio.numerator >= minimum * ratio.denominator else NOT_MET
    criterion = "전부" if minimum >= 1 else f"{minimum:.0%} 이상"
    return Metric(name, definition, ratio, criterion, status, rests_on, note, census=census)


def record_metric(name: str, definition: str, ratio: Ratio, rests_on: str, note: str = "", census: bool = False) -> Metric:
    return Metric(name, definition, ratio, RECORD_ONLY, RECORD_ONLY, rests_on, note, census=census)


def person_metric(name: str, definition: str, note: str = "", key: str = "") -> Metric:
    """A figure a person decides; `key` ties it to a manual check whose decisions can fill it."""
    return Metric(name, definition, None, "사람이 정한다", PERSON, "사람", note, key)


def without_verdict(m: Metric) -> Metric:
    """A metric of a scope with nothing judged: a criterion gets no verdict (and its ratio, which
    would count checks that had nothing to check, is dropped); records and person rows are kept."""
    if m.status not in CRITERION_STATUSES:
        return m
    return replace(m, ratio=None, status=EMPTY, note=(m.note + " · " if m.note else "") + "이 범위에는 판정한 항목이 없어 기준을 판정하지 않습니다")


def rows_by_id(rows: list, id_field: str) -> dict[str, dict]:
    """Verdict rows keyed by their id; rows that are not objects or lack a string id are skipped."""
    return {r[id_field]: r for r in rows if isinstance(r, dict) and isinstance(r.get(id_field), str)}


def quarantined_ids(quarantine) -> set:
    return set(quarantine["id"].dropna()) if quarantine is not None and len(quarantine) else set()


def pair_with_golden(
    predicted: dict[str, str], golden: list[tuple[str, str]], quarantined: set[str], quarantined_reason: str
) -> tuple[list[tuple[str, str, str]], list[dict]]:
    """(id, gold, predicted) for labelled items that were judged, and the labelled items that
    were quarantined instead. Labels for items outside the scope (another day) are left out."""
    pairs, not_judged = [], []
    for id_, gold in golden:
        if id_ in predicted:
            pairs.append((id_, gold, predicted[id_]))
        elif id_ in quarantined:
            not_judged.append({"id": id_, "reason": quarantined_reason})
    return pairs, not_judged


@dataclass
class Paired:
    """Verdicts paired with golden labels: (id, gold, predicted) per judged label, and the labels not judged."""

    pairs: list[tuple[str, str, str]]
    not_judged: list[dict]

    @property
    def gold(self) -> list[str]:
        return [p[1] for p in self.pairs]

    @property
    def predicted(self) -> list[str]:
        return [p[2] for p in self.pairs]

    @property
    def same(self) -> int:
        """How many pairs agree."""
        return sum(g == p for _, g, p in self.pairs)


def pair_labels(
    predicted: dict[str, str], golden: list[dict] | None, id_field: str, label_field: str, quarantined: set[str], quarantined_reason: str
) -> Paired:
    """`pair_with_golden` over golden rows read by `load_golden` (none: nothing paired)."""
    golden_pairs = [(g[id_field], g[label_field]) for g in golden or []]
    return Paired(*pair_with_golden(predicted, golden_pairs, quarantined, quarantined_reason))


def load_golden(path, id_field: str, label_field: str) -> list[dict]:
    """Golden labels, one JSON object per line with an id and a label; anything else is an error."""
    from rules.common.jsonl import read_jsonl_objects

    rows = read_jsonl_objects(path)
    bad = [i + 1 for i, r in enumerate(rows)
           if not r or not isinstance(r.get(id_field), str) or not isinstance(r.get(label_field), str)]
    if bad:
        raise ValueError(f"{path}: line(s) {bad[:5]} are not {{{id_field}, {label_field}}} objects")
    return rows


def golden_loader(id_field: str, label_field: str) -> Callable[[str | Path], list[dict]]:
    """A domain's `load_golden`: its labels are {id_field, label_field} objects."""

    def load(path: str | Path) -> list[dict]:
        return load_golden(path, id_field, label_field)

    load.__name__ = load.__qualname__ = "load_golden"
    return load


def label(value) -> str:
    """A verdict as a label; a missing or non-string one is shown as such, not dropped."""
    return value if isinstance(value, str) else NO_LABEL


NO_LABEL = "(판정 없음)"


def labels_of(rows: dict[str, dict], verdict_field: str) -> dict[str, str]:
    """Each row's verdict as a label, by id."""
    return {k: label(r.get(verdict_field)) for k, r in rows.items()}


def count_labels(labels: Iterable[str], order: Iterable[str]) -> dict[str, int]:
    """How many of each verdict, in the domain's order (zero included)."""
    counts = Counter(labels)
    return {v: counts.get(v, 0) for v in order}


@dataclass
class WrongCase:
    metric: str
    """The first metric the case fails (the headline agreement); `metrics` has every one."""
    id: str
    gold: str
    predicted: str
    step: str
    """The rule step where the two diverge."""
    summary: str = ""
    metrics: list[str] = field(default_factory=list)
    """Every metric the case is wrong on; a case is listed once, whatever their number."""
    values: list[tuple[str, Any]] = field(default_factory=list)
    """The values that decide the verdict at that step (field, value), from the verdict row and its evidence."""

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "metrics": self.metrics or [self.metric], "id": self.id, "gold": self.gold,
                "predicted": self.predicted, "step": self.step, "summary": self.summary,
                "values": [{"field": f, "value": v} for f, v in self.values]}


def by_step(cases: list[WrongCase]) -> dict[str, list[WrongCase]]:
    """Wrong cases grouped by the step where they diverge, the step with most cases first (ties: first met)."""
    groups: dict[str, list[WrongCase]] = {}
    for w in cases:
        groups.setdefault(w.step, []).append(w)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def values_text(values: list[tuple[str, Any]]) -> str:
    """`field=value` pairs for one line of text (lists joined, null shown as null)."""
    def show(v) -> str:
        if v is None:
            return "null"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(show(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {show(x)}" for k, x in v.items()) + "}"
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    return ", ".join(f"{f}={show(v)}" for f, v in values)


@dataclass
class Report:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _KINDS[_kind_of(cls)] = cls  # a kind with fields of its own is read back as itself

    domain: str
    scope: str
    title: str
    metrics: list[Metric]
    labels: list[str]
    gold: list[str] = field(default_factory=list)
    predicted: list[str] = field(default_factory=list)
    wrong_cases: list[WrongCase] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    verdict_counts: dict[str, int] = field(default_factory=dict)
    quarantine: pd.DataFrame | None = None
    reconciliation: dict = field(default_factory=dict)
    golden_not_judged: list[dict] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)
    """Items judged but left out of the denominator, each {id, code, reason}."""
    extra_sections: list[tuple[str, str]] = field(default_factory=list)
    """(heading, Markdown body) appended to the report, e.g. a prompt-version comparison."""
    honesty: list[str] = field(default_factory=list)
    has_golden: bool = True
    warnings: list[str] = field(default_factory=list)
    """Data-quality failures a reader must see first (e.g. a reference table with no valid row)."""
    judged: int | None = None
    """Items judged in scope, where the verdict counts do not say it (handoff judges rooms it does not list)."""
    labelled: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, gold, predicted) of every labelled item judged: the items a run diff compares."""
    pins: dict = field(default_factory=dict)
    """What the run was made from (`evals.pins`): golden file hash and rows, rules configuration hash, tagger, code version."""
    manual: dict[str, dict] = field(default_factory=dict)
    """Manual check key → this run's sample ({ids, candidates, size, why}); see `evals.manual_checks`."""
    reviewers: dict[str, dict] = field(default_factory=dict)
    """Manual check key → the team's review: progress per reviewer, agreement between reviewers."""
    step_hints: dict[str, str] = field(default_factory=dict)
    """Rule step → what decides it, for the next steps written from the wrong cases."""

    @property
    def judged_count(self) -> int:
        return self.verdict_counts_total if self.judged is None else self.judged

    @property
    def empty(self) -> bool:
        """Nothing was judged in scope: no criterion gets a verdict."""
        return self.judged_count == 0

    @property
    def confusion(self) -> pd.DataFrame:
        return confusion_matrix(self.gold, self.predicted, self.labels)

    @property
    def kappa(self) -> float | None:
        return cohens_kappa(self.gold, self.predicted, self.labels) if self.gold else None

    @property
    def per_label(self) -> dict[str, dict[str, Ratio]]:
        return per_label_precision_recall(self.gold, self.predicted, self.labels)

    @property
    def verdict_counts_total(self) -> int:
        """Items judged in scope (the verdict keys of `labels` only, not the header counts some domains add)."""
        return sum(n for k, n in self.verdict_counts.items() if k in self.labels)

    @property
    def checks_passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        confusion = self.confusion
        return {
            "domain": self.domain,
            "scope": self.scope,
            "title": self.title,
            "has_golden": self.has_golden,
            "metrics": [m.to_dict() for m in self.metrics],
            "verdict_counts": self.verdict_counts,
            "confusion": {
                "labels": label_order(self.gold, self.predicted, self.labels),
                "rows_gold_columns_predicted": confusion.to_numpy().tolist(),
            },
            "kappa": self.kappa,
            "per_label": {
                k: {"precision": v["precision"].to_dict(), "recall": v["recall"].to_dict()} for k, v in self.per_label.items()
            },
            "wrong_cases": [w.to_dict() for w in self.wrong_cases],
            "wrong_cases_by_step": {step: [w.id for w in cases] for step, cases in by_step(self.wrong_cases).items()},
            "checks": [c.to_dict() for c in self.checks],
            "quarantine": [] if self.quarantine is None else _records(self.quarantine),
            "reconciliation": self.reconciliation,
            "golden_not_judged": self.golden_not_judged,
            "excluded": self.excluded,
            "honesty": self.honesty,
            "warnings": self.warnings,
            "judged": self.judged_count,
            "empty": self.empty,
            "items": [{"id": i, "gold": g, "verdict": p} for i, g, p in self.labelled],
            "pins": self.pins,
            "manual_checks": self.manual,
            "reviewers": self.reviewers,
            "kind": _kind_of(type(self)),
            "labels": list(self.labels),
            "gold": list(self.gold),
            "predicted": list(self.predicted),
            "sections": [{"heading": h, "markdown": b} for h, b in self.extra_sections],
            "step_hints": self.step_hints,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        """The report `to_dict` wrote, whole again: what a page shows of a stored run, without its rows."""
        metrics = [Metric(m["name"], m["definition"], _ratio(m["ratio"]), m["criterion"], m["status"], m["rests_on"], m.get("note", ""),
                          m.get("key", ""), bool(m.get("census")), _ratio(m.get("held_out")), m.get("held_out_label", ""))
                   for m in data["metrics"]]
        quarantine = data.get("quarantine") or []
        return cls(
            domain=data["domain"], scope=data["scope"], title=data["title"], metrics=metrics, labels=list(data["labels"]),
            gold=list(data["gold"]), predicted=list(data["predicted"]),
            wrong_cases=[WrongCase(w["metric"], w["id"], w["gold"], w["predicted"], w["step"], w.get("summary", ""), list(w.get("metrics") or []),
                                   [(v["field"], v["value"]) for v in w.get("values", [])]) for w in data["wrong_cases"]],
            checks=[CheckResult(c["id"], c["title"], bool(c["passed"]), list(c.get("failing_ids") or []), c.get("detail") or "")
                    for c in data["checks"]],
            verdict_counts=dict(data["verdict_counts"]),
            quarantine=pd.DataFrame.from_records(quarantine) if quarantine else None,
            reconciliation=dict(data.get("reconciliation") or {}),
            golden_not_judged=list(data.get("golden_not_judged") or []), excluded=list(data.get("excluded") or []),
            extra_sections=[(s["heading"], s["markdown"]) for s in data.get("sections") or []],
            honesty=list(data.get("honesty") or []), has_golden=bool(data["has_golden"]), warnings=list(data.get("warnings") or []),
            judged=int(data["judged"]), labelled=[(i["id"], i["gold"], i["verdict"]) for i in data.get("items") or []],
            pins=dict(data.get("pins") or {}), manual=dict(data.get("manual_checks") or {}), reviewers=dict(data.get("reviewers") or {}),
            step_hints=dict(data.get("step_hints") or {}), **cls.own_fields(data),
        )

    @classmethod
    def own_fields(cls, data: dict) -> dict:
        """A kind of report's own fields from its `to_dict` (none for the shared one)."""
        return {}


_KINDS: dict[str, type] = {}
"""`to_dict`'s "kind" → the report class that reads it back: this module's, and each kind defined
(imported) since."""


def _kind_of(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_KINDS[_kind_of(Report)] = Report


def report_from_dict(data: dict) -> Report:
    """`Report.from_dict` of the kind that wrote `data`: a kind imported already (a domain's own is
    imported with its reporting, `Domain.reporting`)."""
    kind = str(data.get("kind") or _kind_of(Report))
    if kind not in _KINDS:
        raise ValueError(f"not a report kind: {data.get('kind')!r}")
    return _KINDS[kind].from_dict(data)


def _ratio(data: dict | None) -> Ratio | None:
    return None if data is None else Ratio(int(data["numerator"]), int(data["denominator"]))


def golden_report(
    domain: str, scope: str, paired: Paired, checks: list[CheckResult], quarantine: pd.DataFrame | None, reconciliation: dict,
    honesty: list[str], kind: type[Report] = Report, **fields,
) -> Report:
    """A domain's report with the shared title, the golden side taken from the pairing."""
    report = kind(
        domain=domain,
        scope=scope,
        title=f"{domain} 골든 일치 리포트",
        gold=paired.gold,
        predicted=paired.predicted,
        golden_not_judged=paired.not_judged,
        has_golden=bool(paired.pairs),
        labelled=list(paired.pairs),
        checks=in_korean(domain, checks),
        quarantine=quarantine,
        reconciliation=reconciliation,
        honesty=honesty,
        warnings=[reference_warning(name, reconciliation[name]) for name in empty_references(domain, reconciliation)],
        **fields,
    )
    if report.empty:
        report.metrics = [without_verdict(m) for m in report.metrics]
    return report


def reference_warning(name: str, counts: dict) -> str:
    return (f"기준 표 {name} 에 유효한 행이 없습니다 (원본 {counts['raw']}줄, 격리 {counts['quarantined']}줄). "
            f"이 표에서 찾는 값은 모두 없는 것으로 판정되므로, 그에 기대는 판정은 믿을 수 없습니다.")


def _records(frame: pd.DataFrame) -> list[dict]:
    cols = [c for c in ("dataset", "file", "line", "id", "reason_code", "reason") if c in frame.columns]
    out = frame[cols].astype(object).where(frame[cols].notna(), None).to_dict("records")
    for r in out:
        if r.get("line") is not None:
            r["line"] = int(r["line"])
    return out
