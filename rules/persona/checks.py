"""Seed 000's seven automatic checks, plus the output schema and a full re-computation."""

from __future__ import annotations

from collections import Counter

from rules.common.checks import CheckResult, Findings, enum_findings, evidence_rows, hashable, polite_findings, same_json, schema_findings
from rules.common.gates import Normalised, trim
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig
from rules.persona.reference import expected_codes
from schemas import columns, row_checker
from schemas.persona import DOMAIN, OUTPUT

REQUIRED_FILLED = ("check_id", "turn_no", "persona_code", "evidence", "summary")
SOURCES = {"profile": "profiles", "turn": "turns"}






class _Context:
    def __init__(self, norm: Normalised, rows: list, config: PersonaConfig):
        self.rows = rows
        self.config = config
        self.turns = {t["turn_no"]: t for t in norm.tables["turns"].to_dict("records")}
        self.profiles = {p["profile_no"]: p for p in norm.tables["profiles"].to_dict("records")}
        self.by_code = {trim(p["character_code"]): p for p in self.profiles.values()}
        self.expected = expected_codes(norm, config)

    def ids(self):
        for i, r in enumerate(self.rows):
            ok = isinstance(r, dict) and isinstance(r.get("turn_no"), str) and r["turn_no"]
            yield (r["turn_no"] if ok else f"line {i + 1}"), r

    def known(self):
        return [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.turns]

    def profile_of(self, turn_no: str) -> dict | None:
        return self.by_code.get(trim(self.turns[turn_no]["character_code_raw"]))


def run_checks(norm: Normalised, rows: list, config: PersonaConfig) -> list[CheckResult]:
    ctx = _Context(norm, rows, config)
    return [check(ctx) for check in CHECKS]


def output_schema(ctx) -> CheckResult:
    return schema_findings(ctx.ids(), row_checker(DOMAIN, OUTPUT)).result(
        "schema", "every row passes the output JSON Schema (verdict.schema.json)")

def c01_code_enum(ctx) -> CheckResult:
    return enum_findings(ctx.ids(), "persona_code", V.ORDER).result("1.code_enum", "persona_code is one of the six enum values")

def c02_required_filled(ctx) -> CheckResult:
    f = Findings()
    check_ids = Counter(hashable(r.get("check_id")) for r in ctx.rows if isinstance(r, dict))
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        empty = [k for k in REQUIRED_FILLED if row.get(k) in (None, "", []) or (isinstance(row.get(k), str) and not row[k].strip())]
        if empty:
            f.fail(id_, f"empty: {', '.join(empty)}")
        elif check_ids[hashable(row["check_id"])] > 1:
            f.fail(id_, f"check_id {row['check_id']} is not unique")
    return f.result("2.required_filled", "check_id, turn_no, persona_code, evidence, summary are filled")


def c03_stated_age(ctx) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known():
        age = ctx.turns[id_]["stated_age"]
        if age is not None and not 0 <= age <= 120:
            f.fail(id_, f"stated_age {age} outside 0–120")
        for e in evidence_rows(row):
            if e.get("field") == "stated_age" and e.get("value") is not None and not (
                isinstance(e["value"], (int, float)) and not isinstance(e["value"], bool) and 0 <= e["value"] <= 120
            ):
                f.fail(id_, f"evidence stated_age {e['value']!r} outside 0–120")
    return f.result("3.stated_age", "stated_age is between 0 and 120")


def c04_evidence_fields(ctx) -> CheckResult:
    f = Findings()
    for id_, row in ctx.ids():
        for e in evidence_rows(row):
            source, field = hashable(e.get("source")), hashable(e.get("field"))
            if source not in SOURCES:
                f.fail(id_, f"source {source!r} is not profile or turn")
            elif field not in columns(DOMAIN, SOURCES[source]):
                f.fail(id_, f"{source}.{field} is not a column of {SOURCES[source]}")
    return f.result("4.evidence_fields", "every evidence field is a real column of profiles or turns")


def c05_evidence_values(ctx) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known():
        turn, profile = ctx.turns[id_], ctx.profile_of(id_)
        for e in evidence_rows(row):
            source, field, value, agg = hashable(e.get("source")), hashable(e.get("field")), e.get("value"), e.get("agg")
            if source not in SOURCES or field not in columns(DOMAIN, SOURCES[source]):
                continue
            if agg is not None:
                if (source, field, agg) == ("profile", "character_code", "count"):
                    n = int(profile is not None)
                    if not same_json(value, n):
                        f.fail(id_, f"{n} profiles have this character code, evidence says {value!r}")
                else:
                    f.fail(id_, f"agg {agg!r} on {source}.{field} cannot be re-computed")
                continue
            cited = turn if source == "turn" else profile
            if cited is None:
                f.fail(id_, f"{source}.{field} cited but the turn has no profile")
            elif not same_json(value, cited.get(field)):
                f.fail(id_, f"{source}.{field} is {cited.get(field)!r}, evidence says {value!r}")
    return f.result("5.evidence_values", "evidence values equal the turn's or profile's row")


def c06_forbidden(ctx) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known():
        turn, profile = ctx.turns[id_], ctx.profile_of(id_)
        if profile is None or ctx.expected[id_][1] == V.REPLY_EMPTY:
            continue
        topic, forbidden = trim(turn["topic_tag"]) or None, trim(profile["forbidden_topic"]) or None
        hit = topic is not None and topic == forbidden
        if hit and row.get("persona_code") != V.FORBIDDEN_TOPIC:
            f.fail(id_, f"topic_tag {topic!r} is the forbidden topic but persona_code is {row.get('persona_code')!r}")
    return f.result("6.forbidden_topic", "a turn whose topic_tag is the character's forbidden_topic is forbidden_topic")


def c07_polite(ctx) -> CheckResult:
    return polite_findings(ctx.ids()).result("7.polite", "summary (and hedge) end in polite Korean")

def recompute(ctx) -> CheckResult:
    f = Findings()
    seen = set()
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        if id_ not in ctx.expected:
            f.fail(id_, "no judged turn has this turn_no (unknown or quarantined)")
            continue
        if id_ in seen:
            f.fail(id_, "more than one verdict row for this turn")
            continue
        seen.add(id_)
        profile_no, code = ctx.expected[id_]
        if row.get("persona_code") != code:
            f.fail(id_, f"persona_code {row.get('persona_code')!r}, re-computed {code!r}")
        elif row.get("profile_no") != profile_no:
            f.fail(id_, f"profile_no {row.get('profile_no')!r}, re-computed {profile_no!r}")
    for t in ctx.expected:
        if t not in seen:
            f.fail(t, "judged turn has no verdict row")
    return f.result("recompute", "every verdict re-computed from the input rows (one row per judged turn)")




CHECKS = (output_schema, c01_code_enum, c02_required_filled, c03_stated_age, c04_evidence_fields,
          c05_evidence_values, c06_forbidden, c07_polite, recompute)
