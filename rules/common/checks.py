"""Automatic verdict checks: results that always say pass or fail, with the failing ids."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class CheckResult:
    id: str
    title: str
    passed: bool
    failing_ids: list[str] = field(default_factory=list)
    detail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


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
        shown = "; ".join(f"{i}: {self.reasons[i]}" for i in ids[:5])
        more = f" (+{len(ids) - 5} more)" if len(ids) > 5 else ""
        return CheckResult(id_, title, False, ids, shown + more)


def hashable(v):
    """Any JSON value (a list where a string belongs) made usable as a key."""
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def same_json(a, b) -> bool:
    """Equal values of the same JSON kind: True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def evidence_rows(row) -> list[dict]:
    """The evidence objects of a verdict row as written (anything else is ignored)."""
    if not isinstance(row, dict) or not isinstance(row.get("evidence"), list):
        return []
    return [e for e in row["evidence"] if isinstance(e, dict)]


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
