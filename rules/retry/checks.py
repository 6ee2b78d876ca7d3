"""Seed 002's twelve automatic checks, plus the output schema and a full re-computation.

Each check reads the verdict rows as written in a file (anything may be wrong in them) and
the normalised input tables, and reports pass/fail with the failing event_ids. What a rule
decided is re-computed with the row-by-row reference, not with the engine.

Numbers: a verdict file carries surface_baseline and max_overlap as binary numbers, the
engine writing the nearest one to the exact fraction. A number agrees with the re-computed
fraction when it is within half a unit of the last displayed decimal (so a file rounded to
two decimals, as the seed prints them, agrees too); the verdict itself is checked against
the exact fractions.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from rules.common.checks import CheckResult, Findings, enum_findings, evidence_rows, hashable, polite_findings, same_json, schema_findings
from rules.common.evidence import plain
from rules.common.gates import Normalised, trim
from rules.retry import verdicts as V
from rules.retry.config import RetryConfig
from rules.retry.reference import Expected, expected_verdicts
from schemas import columns, row_checker
from schemas.retry import DOMAIN, INPUT_DATASETS, OUTPUT

REQUIRED = ("event_id", "session_id", "surface_key", "verdict", "surface_baseline", "max_overlap", "evidence")
COMPARED = ("session_id", "surface_key", "verdict", "matched_event_id")


class _Context:
    def __init__(self, norm: Normalised, rows: list, config: RetryConfig):
        self.rows = rows
        self.config = config
        self.expected: dict[str, Expected] = expected_verdicts(norm, config)
        self.events = {e["event_id"]: e for e in norm.tables["interaction_events"].to_dict("records")}
        self.catalog = {trim(c["surface_key"]): c for c in norm.tables["surface_catalog"].to_dict("records")}
        self.tolerance = Fraction(1, 2 * 10**config.display_decimals)
        self.known = [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.expected]

    def ids(self):
        for n, r in enumerate(self.rows):
            ok = isinstance(r, dict) and isinstance(r.get("event_id"), str) and r["event_id"]
            yield (r["event_id"] if ok else f"line {n + 1}"), r

    def agrees(self, number, exact: Fraction) -> bool:
        return _is_number(number) and abs(Fraction(number) - exact) <= self.tolerance

    def cited_rows(self, id_: str, row: dict, dataset) -> list[dict]:
        """The input rows a verdict row may cite: its event, its matched event, its surface's catalog row."""
        event = self.events[id_]
        matched = self.events.get(row.get("matched_event_id")) if isinstance(row.get("matched_event_id"), str) else None
        rows = {"interaction_events": [event] + ([matched] if matched else []),
                "surface_catalog": [c for c in [self.catalog.get(self.expected[id_].surface_key)] if c]}
        return rows.get(dataset, []) if dataset is not None else rows["interaction_events"] + rows["surface_catalog"]


def run_checks(norm: Normalised, rows: list, config: RetryConfig) -> list[CheckResult]:
    """All checks, in seed order, on verdict rows (dicts, or None for an unreadable line)."""
    ctx = _Context(norm, rows, config)
    return [check(ctx) for check in CHECKS]


# -- the checks ----------------------------------------------------------------------------


def output_schema(ctx: _Context) -> CheckResult:
    return schema_findings(ctx.ids(), row_checker(DOMAIN, OUTPUT)).result(
        "schema", "every row passes the output JSON Schema (verdict.schema.json)")

def c01_verdict_enum(ctx: _Context) -> CheckResult:
    return enum_findings(ctx.ids(), "verdict", V.ORDER).result(
        "1.verdict_enum", "verdict is one_shot, exact_retry, reworded_retry or surface_hop")

def c02_required_fields(ctx: _Context) -> CheckResult:
    f = Findings()
    ids = Counter(hashable(r.get("event_id")) for r in ctx.rows if isinstance(r, dict))
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        missing = [k for k in REQUIRED if k not in row]
        empty = [k for k in REQUIRED if k in row and k != "max_overlap" and (row[k] in (None, "", []) or (isinstance(row[k], str) and not row[k].strip()))]
        if missing or empty:
            f.fail(id_, "; ".join(x for x in (f"missing: {', '.join(missing)}" if missing else "",
                                              f"empty: {', '.join(empty)}" if empty else "") if x))
        elif ids[hashable(row["event_id"])] > 1:
            f.fail(id_, f"{ids[hashable(row['event_id'])]} rows for one event")
    return f.result("2.required_fields", "the seven fields are present (event_id, session_id, surface_key, verdict, "
                                         "surface_baseline, max_overlap, evidence), one row per event")


def c03_surface_key(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        raw = ctx.events[id_]["surface_key_raw"]
        want = trim(raw).lower()
        if row.get("surface_key") != want:
            f.fail(id_, f"surface_key {row.get('surface_key')!r}, but surface_key_raw {raw!r} trimmed and lower-cased is {want!r}")
        elif want not in ctx.catalog:
            f.fail(id_, f"surface_key {want!r} is not in surface_catalog")
    return f.result("3.surface_key", "surface_key is surface_key_raw trimmed and lower-cased, and is in surface_catalog")


def c04_baseline(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        exp = ctx.expected[id_]
        if not ctx.agrees(row.get("surface_baseline"), exp.baseline):
            f.fail(id_, f"surface_baseline {row.get('surface_baseline')!r}, re-computed {_exact(exp.baseline)} ({exp.baseline_source})")
    return f.result("4.baseline", "surface_baseline is the median overlap over every cross-session pair of the surface "
                                  "(else the catalog default, else the fallback)")


def c05_max_overlap(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        exp, value = ctx.expected[id_], row.get("max_overlap")
        if exp.max_overlap is None:
            if value is not None:
                f.fail(id_, f"max_overlap {value!r}, but no earlier event of the same session and surface exists")
        elif not ctx.agrees(value, exp.max_overlap):
            f.fail(id_, f"max_overlap {value!r}, re-computed {_exact(exp.max_overlap)}")
    return f.result("5.max_overlap", "max_overlap is the largest overlap with an earlier event of the same session and "
                                     "surface, null when there is none")


def c06_ranges(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        for k in ("surface_baseline", "max_overlap"):
            v = row.get(k)
            if v is None and k == "max_overlap":
                continue
            if not (_is_number(v) and 0 <= v <= 1):
                f.fail(id_, f"{k} {v!r} is not a number between 0 and 1")
    return f.result("6.ranges", "surface_baseline and max_overlap are between 0 and 1")


def c07_evidence_fields(ctx: _Context) -> CheckResult:
    f = Findings()
    known = {d: set(columns(DOMAIN, d)) for d in INPUT_DATASETS}
    for id_, row in ctx.ids():
        for e in evidence_rows(row):
            d, field = hashable(e.get("dataset")), hashable(e.get("field"))
            if d is not None and d not in known:
                f.fail(id_, f"dataset {d!r} is not interaction_events or surface_catalog")
            elif field not in (known[d] if d is not None else known["interaction_events"] | known["surface_catalog"]):
                f.fail(id_, f"{field!r} is not a column of {d or 'interaction_events or surface_catalog'}")
    return f.result("7.evidence_fields", "every evidence field is a real column of interaction_events or surface_catalog")


def c08_evidence_values(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        for e in evidence_rows(row):
            d, field, value = hashable(e.get("dataset")), hashable(e.get("field")), e.get("value")
            if d is not None and d not in INPUT_DATASETS:
                continue  # reported by check 7
            if e.get("agg") is not None:
                f.fail(id_, f"agg {e.get('agg')!r} on {field}: no aggregate is defined for this domain's evidence")
                continue
            cited = [r for r in ctx.cited_rows(id_, row, d) if field in r]
            if not cited:
                continue  # not a column: reported by check 7
            if not any(same_json(value, plain(r[field])) for r in cited):
                f.fail(id_, f"{field} {value!r} is not the value in the event's, its matched event's or its surface's row")
    return f.result("8.evidence_values", "evidence values are the cited rows' values as written")


def c09_exact(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        if row.get("verdict") != V.EXACT_RETRY:
            continue
        exp, matched = ctx.expected[id_], row.get("matched_event_id")
        if not exp.exact_ids:
            f.fail(id_, "exact_retry, but no earlier event of the session and surface has the same text without spaces and punctuation")
        elif matched is not None and matched not in exp.exact_ids:
            f.fail(id_, f"matched_event_id {matched!r} does not have the same text without spaces and punctuation")
    return f.result("9.exact_retry", "an exact_retry has the same text, without whitespace and punctuation, as an earlier event")


def c10_reworded(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        if row.get("verdict") != V.REWORDED_RETRY:
            continue
        exp = ctx.expected[id_]
        top, base = row.get("max_overlap"), row.get("surface_baseline")
        if exp.max_overlap is None or not exp.max_overlap > exp.baseline:
            shown = "none" if exp.max_overlap is None else _exact(exp.max_overlap)
            f.fail(id_, f"reworded_retry, but the re-computed max_overlap {shown} does not exceed the baseline {_exact(exp.baseline)}")
        elif not (_is_number(top) and _is_number(base)) or top < base:
            f.fail(id_, f"reworded_retry, but the row says max_overlap {top!r} and surface_baseline {base!r}")
    return f.result("10.reworded_retry", "a reworded_retry's max_overlap exceeds surface_baseline (exact fractions)")


def c11_hop(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known:
        if row.get("verdict") != V.SURFACE_HOP:
            continue
        exp, matched = ctx.expected[id_], row.get("matched_event_id")
        if exp.session_surfaces < ctx.config.hop_min_surfaces:
            f.fail(id_, f"surface_hop, but the session has {exp.session_surfaces} distinct surfaces")
        elif not exp.hop_ids:
            f.fail(id_, "surface_hop, but no earlier event on another surface shares a word")
        elif matched is not None and matched not in exp.hop_ids:
            f.fail(id_, f"matched_event_id {matched!r} is not an earlier event on another surface sharing a word")
    return f.result("11.surface_hop", f"a surface_hop's session has {ctx.config.hop_min_surfaces}+ distinct surfaces and "
                                      "shares words with an earlier event on another surface")


def c12_polite(ctx: _Context) -> CheckResult:
    return polite_findings(ctx.ids(), fields=("reason",), optional=()).result(
        "12.polite", "every Korean sentence (the reason) ends in a polite form")

def recompute(ctx: _Context) -> CheckResult:
    f = Findings()
    seen = set()
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        if id_ not in ctx.expected:
            f.fail(id_, "no judged event has this event_id (unknown or quarantined)")
            continue
        seen.add(id_)
        exp = ctx.expected[id_]
        for k in COMPARED:
            if row.get(k) != getattr(exp, k):
                f.fail(id_, f"{k} {row.get(k)!r}, re-computed {getattr(exp, k)!r}")
                break
    for e in ctx.expected:
        if e not in seen:
            f.fail(e, "judged event has no verdict row")
    return f.result("recompute", "every verdict re-computed from the input rows (one row per judged event, fields equal)")


CHECKS = (output_schema, c01_verdict_enum, c02_required_fields, c03_surface_key, c04_baseline, c05_max_overlap,
          c06_ranges, c07_evidence_fields, c08_evidence_values, c09_exact, c10_reworded, c11_hop, c12_polite, recompute)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def _exact(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator} ≈ {float(v):.4f}"
