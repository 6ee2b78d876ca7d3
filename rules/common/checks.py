"""Automatic verdict checks: results that always say pass or fail, with the failing ids.

The findings below walk verdict rows as (id, row) pairs and hold what every domain's checks
share; a domain supplies its ids, its datasets and its wording.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable

from schemas import columns, row_checker


@dataclass
class CheckResult:
    id: str
    title: str
    passed: bool
    failing_ids: list[str] = field(default_factory=list)
    detail: str = ""
    shown: list[tuple[str, str]] = field(default_factory=list, compare=False, repr=False)
    """The (id, reason) pairs `detail` words (the first few): what a check of a day in parts keeps of
    each part to word the day's `detail` (`rules.common.check_parts`). Not stored."""

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "passed": self.passed, "failing_ids": list(self.failing_ids),
                "detail": self.detail}


class Findings:
    """Collects failing ids (first reason per id) while a check walks the verdict rows."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def fail(self, id_: str, reason: str) -> None:
        self.reasons.setdefault(id_, reason)

    def result(self, id_: str, title: str, ok_detail: str = "") -> CheckResult:
        ids = list(self.reasons)
        if not ids:
            return CheckResult(id_, title, True, [], ok_detail)
        shown = [(i, self.reasons[i]) for i in ids[:SHOWN]]
        return CheckResult(id_, title, False, ids, worded(shown, len(ids)), shown)


SHOWN = 5
"""Failing rows a check's detail words; the rest are counted."""


def worded(shown: list[tuple[str, str]], failing: int) -> str:
    """A failing check's detail: the first reasons, then how many more rows fail."""
    more = f" (+{failing - SHOWN} more)" if failing > SHOWN else ""
    return "; ".join(f"{i}: {why}" for i, why in shown[:SHOWN]) + more


def hashable(v):
    """Any JSON value (a list where a string belongs) made usable as a key."""
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def same_json(a, b) -> bool:
    """Equal values of the same JSON kind: True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def is_int(v) -> bool:
    """An integer that is not a bool (JSON true is not 1)."""
    return isinstance(v, int) and not isinstance(v, bool)


def is_blank(v) -> bool:
    """A required field left unfilled: null, "", [] or only whitespace."""
    return v in (None, "", []) or (isinstance(v, str) and not v.strip())


def evidence_rows(row) -> list[dict]:
    """The evidence objects of a verdict row as written (anything else is ignored)."""
    if not isinstance(row, dict) or not isinstance(row.get("evidence"), list):
        return []
    return [e for e in row["evidence"] if isinstance(e, dict)]


Pairs = Iterable[tuple[str, object]]
"""Verdict rows with the id each is reported under, as `VerdictRows.ids()` gives them."""


def row_findings(pairs: Pairs, problem: Callable[[str, dict], str | None]) -> Findings:
    """Rows that are JSON objects and for which `problem(id, row)` gives a reason."""
    f = Findings()
    for id_, row in pairs:
        if isinstance(row, dict):
            why = problem(id_, row)
            if why:
                f.fail(id_, why)
    return f


def evidence_findings(pairs: Pairs, problem: Callable[[str, dict, dict], str | None]) -> Findings:
    """Rows with an evidence object for which `problem(id, row, evidence)` gives a reason."""
    f = Findings()
    for id_, row in pairs:
        items = row.get("evidence") if isinstance(row, dict) else None
        if not isinstance(items, list):
            continue
        for e in items:  # the evidence objects of `evidence_rows`, walked in place
            if isinstance(e, dict):
                why = problem(id_, row, e)
                if why:
                    f.fail(id_, why)
    return f


def schema_result(pairs: Pairs, domain: str, output: str) -> CheckResult:
    """The check that every row passes the domain's output JSON Schema."""
    return schema_findings(pairs, row_checker(domain, output)).result(
        "schema", f"every row passes the output JSON Schema ({output}.schema.json)")


def schema_findings(pairs, check) -> Findings:
    """Rows (as (id, row)) that are not objects or fail the output schema's compiled check."""
    f = Findings()
    for id_, row in pairs:
        problem = "not a JSON object" if not isinstance(row, dict) else check(row)
        if problem:
            f.fail(id_, problem)
    return f


_COUNT_WORDS = {4: "four", 5: "five", 6: "six"}


def enum_findings(pairs, key: str, allowed) -> Findings:
    """Rows whose `key` is not one of the allowed verdict keys."""
    f = Findings()
    count = _COUNT_WORDS.get(len(allowed), str(len(allowed)))
    for id_, row in pairs:
        if isinstance(row, dict) and row.get(key) not in allowed:
            f.fail(id_, f"{key} {row.get(key)!r} is not one of the {count} keys")
    return f


def polite_findings(pairs, fields: tuple[str, ...] = ("summary",), optional: tuple[str, ...] = ("hedge",)) -> Findings:
    """Rows whose sentences (required fields, and optional ones when present) are not polite Korean."""
    from rules.common.korean import is_polite

    f = Findings()
    for id_, row in pairs:
        if not isinstance(row, dict):
            continue
        for name in fields:
            if not isinstance(row.get(name), str) or not is_polite(row[name]):
                f.fail(id_, f"{name} is not polite Korean: {str(row.get(name))[:60]!r}")
        for name in optional:
            if row.get(name) is not None and not (isinstance(row[name], str) and is_polite(row[name])):
                f.fail(id_, f"{name} is not polite Korean: {str(row.get(name))[:60]!r}")
    return f


def empty_reason(row: dict, fields: tuple[str, ...]) -> str | None:
    """'empty: a, b' for the required fields a row leaves blank, None when all are filled."""
    empty = [k for k in fields if is_blank(row.get(k))]
    return f"empty: {', '.join(empty)}" if empty else None


def filled_findings(pairs: Pairs, key: str, problem: Callable[[dict], str | None],
                    repeated: Callable[[object, int], str]) -> Findings:
    """Rows whose required fields have a problem, else whose id `key` stands in more than one row.

    `problem(row)` words what is wrong with the fields, `repeated(value, n)` a repeated id.
    """
    pairs = list(pairs)
    counts = Counter(hashable(r.get(key)) for _, r in pairs if isinstance(r, dict))

    def first(_id: str, row: dict) -> str | None:
        why = problem(row)
        if why:
            return why
        n = counts[hashable(row.get(key))]
        return repeated(row.get(key), n) if n > 1 else None

    return row_findings(pairs, first)


def dataset_columns(domain: str, datasets: tuple[str, ...]) -> dict[str, set]:
    """The columns of each input dataset, for checking what evidence cites."""
    return {d: set(columns(domain, d)) for d in datasets}


def column_problem(known: dict[str, set], dataset, field) -> str | None:
    """A cited dataset that is not an input one, or a field that is not one of its columns."""
    if dataset not in known:
        return f"dataset {dataset!r} is not an input dataset"
    if field not in known[dataset]:
        return f"{dataset}.{field} is not a column"
    return None


def first_difference(row: dict, expected: dict, same: Callable[[object, object], bool] = operator.eq) -> str | None:
    """The first field (in `expected`'s order) whose written value is not the re-computed one."""
    for k, want in expected.items():
        if not same(row.get(k), want):
            return f"{k} {row.get(k)!r}, re-computed {want!r}"
    return None


def recompute_findings(
    pairs: Pairs,
    expected: dict,
    mismatch: Callable[[str, dict], str | None],
    unknown: str,
    missing: str | Callable[[str], str | None],
    *,
    repeated: str | None = None,
    judged: Callable[[str, dict], bool] | None = None,
) -> Findings:
    """Rows naming no judged id or differing from the re-computation, then judged ids without a row.

    `missing` may say per id whether it fails (None: it may go without a row); `repeated`, when
    given, fails a second row for one id; `judged(id, row)` replaces `id in expected`.
    """
    f = Findings()
    seen = set()
    for id_, row in pairs:
        if not isinstance(row, dict):
            continue
        if not (judged(id_, row) if judged else id_ in expected):
            f.fail(id_, unknown)
            continue
        if repeated and id_ in seen:
            f.fail(id_, repeated)
            continue
        seen.add(id_)
        why = mismatch(id_, row)
        if why:
            f.fail(id_, why)
    for id_ in expected:
        if id_ not in seen:
            why = missing(id_) if callable(missing) else missing
            if why:
                f.fail(id_, why)
    return f


def format_results(results: list[CheckResult]) -> str:
    """A plain-text table for the terminal: one line per check."""
    width = max((len(r.id) for r in results), default=0)
    lines = []
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        line = f"{mark}  {r.id.ljust(width)}  {r.title}"
        if not r.passed:
            line += f"\n      {len(r.failing_ids)} failing: {r.detail}"
        lines.append(line)
    failed = sum(not r.passed for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)
