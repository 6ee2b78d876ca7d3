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

from fractions import Fraction
from functools import partial

from rules.common.checks import (CheckResult, dataset_columns, enum_findings, evidence_findings, filled_findings,
                                 first_difference, hashable, is_blank, polite_findings, recompute_findings, row_findings,
                                 same_json, schema_result)
from rules.common.evidence import frame_records, plain
from rules.common.cells import trim
from rules.common.normalised import Normalised
from rules.common.verdict_rows import VerdictRows
from rules.retry import verdicts as V
from rules.retry.config import RetryConfig
from rules.retry.reference import Expected, expected_verdicts
from schemas.retry import DOMAIN, INPUT_DATASETS, OUTPUT

REQUIRED = ("event_id", "session_id", "surface_key", "verdict", "surface_baseline", "max_overlap", "evidence")
COMPARED = ("session_id", "surface_key", "verdict", "matched_event_id")


class _Context(VerdictRows):
    def __init__(self, norm: Normalised, rows: list, config: RetryConfig, baselines: dict | None = None):
        super().__init__(rows, "event_id")
        self.config = config
        self.expected: dict[str, Expected] = expected_verdicts(norm, config, baselines)
        self.events = {e["event_id"]: e for e in frame_records(norm.tables["interaction_events"])}
        self.catalog = {trim(c["surface_key"]): c for c in frame_records(norm.tables["surface_catalog"])}
        self.tolerance = Fraction(1, 2 * 10**config.display_decimals)
        self.float_tolerance = float(self.tolerance)
        self.known = [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.expected]

    def judged_as(self, verdict: str):
        """Known rows that give this verdict."""
        return ((i, r) for i, r in self.known if r.get("verdict") == verdict)

    def agrees(self, number, exact: Fraction) -> bool:
        if not _is_number(number):
            return False
        if -2 <= number <= 2 and abs(exact.numerator) <= exact.denominator:  # |exact| ≤ 1, in ints
            # In floats the gap is off by less than 1e-15 here: one clear of the edge by 1e-12
            # is settled; only a number at the edge is worked out in fractions.
            gap = abs(number - exact.numerator / exact.denominator)
            if gap <= self.float_tolerance - 1e-12:
                return True
            if gap >= self.float_tolerance + 1e-12:
                return False
        return abs(Fraction(number) - exact) <= self.tolerance

    def cited_rows(self, id_: str, row: dict, dataset) -> list[dict]:
        """The input rows a verdict row may cite: its event, its matched event, its surface's catalog row."""
        rows = []
        if dataset in (None, "interaction_events"):
            rows.append(self.events[id_])
            matched = row.get("matched_event_id")
            if isinstance(matched, str) and matched in self.events:
                rows.append(self.events[matched])
        if dataset in (None, "surface_catalog"):
            surface = self.catalog.get(self.expected[id_].surface_key)
            if surface:
                rows.append(surface)
        return rows


def run_checks(norm: Normalised, rows: list, config: RetryConfig, baselines: dict | None = None) -> list[CheckResult]:
    """All checks, in seed order, on verdict rows (dicts, or None for an unreadable line); `baselines`:
    the re-computed baselines of the whole day when `norm` holds a part of it (`reference_baselines`)."""
    ctx = _Context(norm, rows, config, baselines)
    return [check(ctx) for check in CHECKS]


# -- the checks ----------------------------------------------------------------------------


def output_schema(ctx: _Context) -> CheckResult:
    return schema_result(ctx.ids(), DOMAIN, OUTPUT)

def c01_verdict_enum(ctx: _Context) -> CheckResult:
    return enum_findings(ctx.ids(), "verdict", V.ORDER).result(
        "1.verdict_enum", "verdict is one_shot, exact_retry, reworded_retry or surface_hop")

def c02_required_fields(ctx: _Context) -> CheckResult:
    return filled_findings(ctx.ids(), "event_id", _required_problem, lambda _id, n: f"{n} rows for one event").result(
        "2.required_fields", "the seven fields are present (event_id, session_id, surface_key, verdict, "
                             "surface_baseline, max_overlap, evidence), one row per event")


def _required_problem(row: dict) -> str | None:
    missing = [k for k in REQUIRED if k not in row]
    # max_overlap is null when there is no earlier event, so only its absence counts.
    empty = [k for k in REQUIRED if k in row and k != "max_overlap" and is_blank(row[k])]
    if not (missing or empty):
        return None
    return "; ".join(x for x in (f"missing: {', '.join(missing)}" if missing else "",
                                 f"empty: {', '.join(empty)}" if empty else "") if x)


def c03_surface_key(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_surface_key_problem, ctx)).result(
        "3.surface_key", "surface_key is surface_key_raw trimmed and lower-cased, and is in surface_catalog")


def _surface_key_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    raw = ctx.events[id_]["surface_key_raw"]
    want = trim(raw).lower()
    if row.get("surface_key") != want:
        return f"surface_key {row.get('surface_key')!r}, but surface_key_raw {raw!r} trimmed and lower-cased is {want!r}"
    if want not in ctx.catalog:
        return f"surface_key {want!r} is not in surface_catalog"
    return None


def c04_baseline(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_baseline_problem, ctx)).result(
        "4.baseline", "surface_baseline is the median overlap over every cross-session pair of the surface "
                      "(else the catalog default, else the fallback)")


def _baseline_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp = ctx.expected[id_]
    if ctx.agrees(row.get("surface_baseline"), exp.baseline):
        return None
    return f"surface_baseline {row.get('surface_baseline')!r}, re-computed {_exact(exp.baseline)} ({exp.baseline_source})"


def c05_max_overlap(ctx: _Context) -> CheckResult:
    return row_findings(ctx.known, partial(_max_overlap_problem, ctx)).result(
        "5.max_overlap", "max_overlap is the largest overlap with an earlier event of the same session and "
                         "surface, null when there is none")


def _max_overlap_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp, value = ctx.expected[id_], row.get("max_overlap")
    if exp.max_overlap is None:
        return None if value is None else f"max_overlap {value!r}, but no earlier event of the same session and surface exists"
    return None if ctx.agrees(value, exp.max_overlap) else f"max_overlap {value!r}, re-computed {_exact(exp.max_overlap)}"


def c06_ranges(ctx: _Context) -> CheckResult:
    return row_findings(ctx.ids(), _range_problem).result("6.ranges", "surface_baseline and max_overlap are between 0 and 1")


def _range_problem(_id: str, row: dict) -> str | None:
    for k in ("surface_baseline", "max_overlap"):
        v = row.get(k)
        if v is None and k == "max_overlap":
            continue
        if not (_is_number(v) and 0 <= v <= 1):
            return f"{k} {v!r} is not a number between 0 and 1"
    return None


def c07_evidence_fields(ctx: _Context) -> CheckResult:
    known = dataset_columns(DOMAIN, INPUT_DATASETS)
    return evidence_findings(ctx.ids(), lambda _id, _row, e: _column_problem(known, e)).result(
        "7.evidence_fields", "every evidence field is a real column of interaction_events or surface_catalog")


def _column_problem(known: dict[str, set], e: dict) -> str | None:
    # Evidence may leave out its dataset: the field is then a column of either.
    d, field = hashable(e.get("dataset")), hashable(e.get("field"))
    if d is not None and d not in known:
        return f"dataset {d!r} is not interaction_events or surface_catalog"
    if field not in (known[d] if d is not None else known["interaction_events"] | known["surface_catalog"]):
        return f"{field!r} is not a column of {d or 'interaction_events or surface_catalog'}"
    return None


def c08_evidence_values(ctx: _Context) -> CheckResult:
    return evidence_findings(ctx.known, partial(_evidence_problem, ctx)).result(
        "8.evidence_values", "evidence values are the cited rows' values as written")


def _evidence_problem(ctx: _Context, id_: str, row: dict, e: dict) -> str | None:
    d, field, value = hashable(e.get("dataset")), hashable(e.get("field")), e.get("value")
    if d is not None and d not in INPUT_DATASETS:
        return None  # reported by check 7
    if e.get("agg") is not None:
        return f"agg {e.get('agg')!r} on {field}: no aggregate is defined for this domain's evidence"
    cited = [r for r in ctx.cited_rows(id_, row, d) if field in r]
    if not cited:
        return None  # not a column: reported by check 7
    if not any(same_json(value, plain(r[field])) for r in cited):
        return f"{field} {value!r} is not the value in the event's, its matched event's or its surface's row"
    return None


def c09_exact(ctx: _Context) -> CheckResult:
    same_text = "the same text without spaces and punctuation"

    def problem(id_: str, row: dict) -> str | None:
        return _match_problem(ctx.expected[id_].exact_ids, row,
                              f"exact_retry, but no earlier event of the session and surface has {same_text}",
                              f"does not have {same_text}")

    return row_findings(ctx.judged_as(V.EXACT_RETRY), problem).result(
        "9.exact_retry", "an exact_retry has the same text, without whitespace and punctuation, as an earlier event")


def c10_reworded(ctx: _Context) -> CheckResult:
    return row_findings(ctx.judged_as(V.REWORDED_RETRY), partial(_reworded_problem, ctx)).result(
        "10.reworded_retry", "a reworded_retry's max_overlap exceeds surface_baseline (exact fractions)")


def _reworded_problem(ctx: _Context, id_: str, row: dict) -> str | None:
    exp = ctx.expected[id_]
    top, base = row.get("max_overlap"), row.get("surface_baseline")
    if exp.max_overlap is None or not exp.max_overlap > exp.baseline:
        shown = "none" if exp.max_overlap is None else _exact(exp.max_overlap)
        return f"reworded_retry, but the re-computed max_overlap {shown} does not exceed the baseline {_exact(exp.baseline)}"
    if not (_is_number(top) and _is_number(base)) or top < base:
        return f"reworded_retry, but the row says max_overlap {top!r} and surface_baseline {base!r}"
    return None


def c11_hop(ctx: _Context) -> CheckResult:
    def problem(id_: str, row: dict) -> str | None:
        exp = ctx.expected[id_]
        if exp.session_surfaces < ctx.config.hop_min_surfaces:
            return f"surface_hop, but the session has {exp.session_surfaces} distinct surfaces"
        return _match_problem(exp.hop_ids, row, "surface_hop, but no earlier event on another surface shares a word",
                              "is not an earlier event on another surface sharing a word")

    return row_findings(ctx.judged_as(V.SURFACE_HOP), problem).result(
        "11.surface_hop", f"a surface_hop's session has {ctx.config.hop_min_surfaces}+ distinct surfaces and "
                          "shares words with an earlier event on another surface")


def _match_problem(candidates, row: dict, none_found: str, not_one: str) -> str | None:
    """A retry needs an earlier event that qualifies, and a matched_event_id given must be one of them."""
    matched = row.get("matched_event_id")
    if not candidates:
        return none_found
    if matched is not None and matched not in candidates:
        return f"matched_event_id {matched!r} {not_one}"
    return None


def c12_polite(ctx: _Context) -> CheckResult:
    return polite_findings(ctx.ids(), fields=("reason",), optional=()).result(
        "12.polite", "every Korean sentence (the reason) ends in a polite form")

def recompute(ctx: _Context) -> CheckResult:
    return recompute_findings(
        ctx.ids(), ctx.expected,
        lambda id_, row: first_difference(row, {k: getattr(ctx.expected[id_], k) for k in COMPARED}),
        unknown="no judged event has this event_id (unknown or quarantined)",
        missing="judged event has no verdict row",
    ).result("recompute", "every verdict re-computed from the input rows (one row per judged event, fields equal)")


CHECKS = (output_schema, c01_verdict_enum, c02_required_fields, c03_surface_key, c04_baseline, c05_max_overlap,
          c06_ranges, c07_evidence_fields, c08_evidence_values, c09_exact, c10_reworded, c11_hop, c12_polite, recompute)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def _exact(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator} ≈ {float(v):.4f}"
