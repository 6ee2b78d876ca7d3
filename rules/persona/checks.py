"""Seed 000's seven automatic checks, plus the output schema and a full re-computation."""

from __future__ import annotations

from functools import lru_cache, partial

from rules.common.checks import (CheckResult, empty_reason, enum_findings, evidence_findings, evidence_rows, filled_findings,
                                 hashable, polite_findings, recompute_findings, row_findings, same_json, schema_result)
from rules.common.check_parts import Repeats
from rules.common.evidence import frame_records
from rules.common.cells import trim
from rules.common.normalised import Normalised
from rules.common.verdict_rows import VerdictRows
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig
from rules.persona.reference import expected_codes
from schemas import columns
from schemas.persona import DOMAIN, OUTPUT

REQUIRED_FILLED = ("check_id", "turn_no", "persona_code", "evidence", "summary")
REPEATS = (Repeats("2.required_filled", "check_id", lambda check_id, _n: f"check_id {check_id} is not unique"),)
"""What a check counts over every row of a day: counted across a day's parts too (`check_parts`)."""
SOURCES = {"profile": "profiles", "turn": "turns"}


class _Context(VerdictRows):
    def __init__(self, norm: Normalised, rows: list, config: PersonaConfig):
        super().__init__(rows, "turn_no")
        self.config = config
        self.turns = {t["turn_no"]: t for t in frame_records(norm.tables["turns"])}
        self.profiles = {p["profile_no"]: p for p in frame_records(norm.tables["profiles"])}
        self.by_code = {trim(p["character_code"]): p for p in self.profiles.values()}
        self.expected = expected_codes(norm, config)
        self._known = [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.turns]
        self._by_raw_code: dict[str, dict | None] = {}  # a few codes, as written, behind many turns

    def known(self):
        return self._known

    def profile_of(self, turn_no: str) -> dict | None:
        raw = self.turns[turn_no]["character_code_raw"]
        if raw not in self._by_raw_code:
            self._by_raw_code[raw] = self.by_code.get(trim(raw))
        return self._by_raw_code[raw]


def run_checks(norm: Normalised, rows: list, config: PersonaConfig) -> list[CheckResult]:
    ctx = _Context(norm, rows, config)
    return [check(ctx) for check in CHECKS]


def output_schema(ctx) -> CheckResult:
    return schema_result(ctx.ids(), DOMAIN, OUTPUT)

def c01_code_enum(ctx) -> CheckResult:
    return enum_findings(ctx.ids(), "persona_code", V.ORDER).result("1.code_enum", "persona_code is one of the six enum values")

def c02_required_filled(ctx) -> CheckResult:
    return filled_findings(ctx.ids(), "check_id", lambda row: empty_reason(row, REQUIRED_FILLED), REPEATS[0].reason).result(
        "2.required_filled", "check_id, turn_no, persona_code, evidence, summary are filled")


def c03_stated_age(ctx) -> CheckResult:
    return row_findings(ctx.known(), partial(_stated_age_problem, ctx)).result("3.stated_age", "stated_age is between 0 and 120")


def _stated_age_problem(ctx, id_: str, row: dict) -> str | None:
    age = ctx.turns[id_]["stated_age"]
    if age is not None and not 0 <= age <= 120:
        return f"stated_age {age} outside 0–120"
    for e in evidence_rows(row):
        if e.get("field") == "stated_age" and e.get("value") is not None and not (
            isinstance(e["value"], (int, float)) and not isinstance(e["value"], bool) and 0 <= e["value"] <= 120
        ):
            return f"evidence stated_age {e['value']!r} outside 0–120"
    return None


def c04_evidence_fields(ctx) -> CheckResult:
    return evidence_findings(ctx.ids(), _column_problem).result(
        "4.evidence_fields", "every evidence field is a real column of profiles or turns")


def _column_problem(_id: str, _row: dict, e: dict) -> str | None:
    source, field = hashable(e.get("source")), hashable(e.get("field"))
    if source not in SOURCES:
        return f"source {source!r} is not profile or turn"
    if field not in _columns()[source]:
        return f"{source}.{field} is not a column of {SOURCES[source]}"
    return None


@lru_cache(maxsize=None)
def _columns() -> dict[str, frozenset]:
    """The columns evidence may cite, by source."""
    return {source: frozenset(columns(DOMAIN, dataset)) for source, dataset in SOURCES.items()}


def c05_evidence_values(ctx) -> CheckResult:
    return evidence_findings(ctx.known(), partial(_evidence_problem, ctx)).result(
        "5.evidence_values", "evidence values equal the turn's or profile's row")


def _evidence_problem(ctx, id_: str, _row: dict, e: dict) -> str | None:
    source, field, value, agg = hashable(e.get("source")), hashable(e.get("field")), e.get("value"), e.get("agg")
    if source not in SOURCES or field not in _columns()[source]:
        return None  # reported by check 4
    turn, profile = ctx.turns[id_], ctx.profile_of(id_)
    if agg is not None:
        if (source, field, agg) != ("profile", "character_code", "count"):
            return f"agg {agg!r} on {source}.{field} cannot be re-computed"
        n = int(profile is not None)
        return None if same_json(value, n) else f"{n} profiles have this character code, evidence says {value!r}"
    cited = turn if source == "turn" else profile
    if cited is None:
        return f"{source}.{field} cited but the turn has no profile"
    return None if same_json(value, cited.get(field)) else f"{source}.{field} is {cited.get(field)!r}, evidence says {value!r}"


def c06_forbidden(ctx) -> CheckResult:
    return row_findings(ctx.known(), partial(_forbidden_problem, ctx)).result(
        "6.forbidden_topic", "a turn whose topic_tag is the character's forbidden_topic is forbidden_topic")


def _forbidden_problem(ctx, id_: str, row: dict) -> str | None:
    turn, profile = ctx.turns[id_], ctx.profile_of(id_)
    if profile is None or ctx.expected[id_][1] == V.REPLY_EMPTY:
        return None
    topic, forbidden = trim(turn["topic_tag"]) or None, trim(profile["forbidden_topic"]) or None
    if topic is not None and topic == forbidden and row.get("persona_code") != V.FORBIDDEN_TOPIC:
        return f"topic_tag {topic!r} is the forbidden topic but persona_code is {row.get('persona_code')!r}"
    return None


def c07_polite(ctx) -> CheckResult:
    return polite_findings(ctx.ids()).result("7.polite", "summary (and hedge) end in polite Korean")

def recompute(ctx) -> CheckResult:
    return recompute_findings(
        ctx.ids(), ctx.expected, partial(_recompute_problem, ctx),
        unknown="no judged turn has this turn_no (unknown or quarantined)",
        missing="judged turn has no verdict row",
        repeated="more than one verdict row for this turn",
    ).result("recompute", "every verdict re-computed from the input rows (one row per judged turn)")


def _recompute_problem(ctx, id_: str, row: dict) -> str | None:
    profile_no, code = ctx.expected[id_]
    if row.get("persona_code") != code:
        return f"persona_code {row.get('persona_code')!r}, re-computed {code!r}"
    if row.get("profile_no") != profile_no:
        return f"profile_no {row.get('profile_no')!r}, re-computed {profile_no!r}"
    return None


CHECKS = (output_schema, c01_code_enum, c02_required_filled, c03_stated_age, c04_evidence_fields,
          c05_evidence_values, c06_forbidden, c07_polite, recompute)
