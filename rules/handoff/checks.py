"""Seed 003's eleven automatic checks, plus the output schema and a full re-computation.

Each check reads the verdict rows as written in a file (anything may be wrong in them) and the
judged view of the input (`view`), and reports pass/fail with the failing room_ids. Checks 4–8
re-derive from the row's own fields (so a row always agrees with itself); the re-computation
uses the row-by-row reference, not the engine that produced the rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal

import pandas as pd

from rules.common.checks import CheckResult, Findings, enum_findings, evidence_rows, hashable, polite_findings, same_json, schema_findings
from rules.common.gates import trim
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig
from rules.handoff.reference import FIELDS, Expected, _records, expected_rooms, folded, hours, instant, minutes, same_value
from schemas import columns, row_checker
from schemas.handoff import DOMAIN, INPUT_DATASETS, OUTPUT

REQUIRED = ("room_id", "customer_id", "verdict", "ai_after_trigger", "counselor_message_count", "uncited_message_ids",
            "evidence", "summary")


class _Context:
    def __init__(self, tables: dict[str, pd.DataFrame], rows: list, config: HandoffConfig):
        self.config = config
        self.rows = rows
        self.expected: dict[str, Expected] = expected_rooms(tables, config)
        self.rooms = {r["room_id"]: r for r in _records(tables["rooms"])}
        self.phrases = _records(tables["handoff_phrases"])
        self.articles = _records(tables["help_articles"])
        self.article_ids = {trim(a["article_id"]) for a in self.articles}
        self.messages = defaultdict(list)
        for m in _records(tables["chat_messages"]):
            self.messages[m["room_id"]].append({**m, "at": instant(m["sent_at"], config.timezone)})
        for msgs in self.messages.values():
            msgs.sort(key=lambda m: (m["at"], m["message_id"]))

    def ids(self):
        for i, r in enumerate(self.rows):
            ok = isinstance(r, dict) and isinstance(r.get("room_id"), str) and r["room_id"]
            yield (r["room_id"] if ok else f"line {i + 1}"), r

    def known(self):
        """Rows naming a judged room of the day (other rooms are reported by the re-computation)."""
        return [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.expected and self.expected[i].fields]

    def related(self, room_id: str, row: dict) -> dict[str, list[dict]]:
        """The input rows a verdict on this room may cite, per dataset."""
        msgs = list(self.messages[room_id])
        rooms = [self.rooms[room_id]]
        nxt = row.get("next_room_id")
        if isinstance(nxt, str) and nxt in self.rooms:
            rooms.append(self.rooms[nxt])
            msgs += self.messages.get(nxt, [])
        texts = [folded(m["text"], self.config) for m in self.messages[room_id] if m["sender"] == "customer"]
        phrases = [p for p in self.phrases if (f := folded(p["trigger_phrase"], self.config)) and any(f in t for t in texts)]
        cited = {trim(m["cited_article_id"]) for m in self.messages[room_id] if isinstance(m["cited_article_id"], str)}
        articles = [a for a in self.articles if trim(a["article_id"]) in cited]
        return {"chat_messages": msgs, "rooms": rooms, "handoff_phrases": phrases, "help_articles": articles}


def run_checks(norm, rows: list, config: HandoffConfig) -> list[CheckResult]:
    """All checks, in seed order, on verdict rows (dicts, or None for an unreadable line).

    `norm` carries the judged view (`view.combine`) in its `tables`.
    """
    ctx = _Context(norm.tables, rows, config)
    return [check(ctx) for check in CHECKS]


# -- the checks ----------------------------------------------------------------------------------


def output_schema(ctx: _Context) -> CheckResult:
    return schema_findings(ctx.ids(), row_checker(DOMAIN, OUTPUT)).result(
        "schema", "every row passes the output JSON Schema (verdict.schema.json)")

def c01_verdict_enum(ctx: _Context) -> CheckResult:
    return enum_findings(ctx.ids(), "verdict", V.ORDER).result("1.verdict_enum", "verdict is one of the five enum values")

def c02_required(ctx: _Context) -> CheckResult:
    f = Findings()
    rooms = Counter(hashable(r.get("room_id")) for r in ctx.rows if isinstance(r, dict))
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        missing = [k for k in REQUIRED if k not in row or row[k] is None]
        blank = [k for k in ("room_id", "customer_id", "verdict", "summary") if isinstance(row.get(k), str) and not row[k].strip()]
        if missing or blank:
            f.fail(id_, f"missing: {', '.join(missing + blank)}")
        elif row["evidence"] == []:
            f.fail(id_, "evidence is empty")
        elif rooms[hashable(row["room_id"])] > 1:
            f.fail(id_, f"{rooms[hashable(row['room_id'])]} rows for one room")
    return f.result("2.required_fields", "room_id, customer_id, verdict, ai_after_trigger, counselor_message_count, "
                                         "uncited_message_ids, evidence, summary are present (one row per room)")


def c03_ranges(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        for k in ("ai_after_trigger", "counselor_message_count"):
            if k in row and not (_is_int(row[k]) and row[k] >= 0):
                f.fail(id_, f"{k} {row[k]!r} is not an integer ≥ 0")
        for k in ("reply_wait_min", "reentry_hours"):
            if row.get(k) is not None and not (_is_number(row[k]) and row[k] >= 0):
                f.fail(id_, f"{k} {row[k]!r} is not a number ≥ 0")
    return f.result("3.ranges", "ai_after_trigger, counselor_message_count ≥ 0; reply_wait_min, reentry_hours ≥ 0")


def c04_durations(ctx: _Context) -> CheckResult:
    f = Findings()
    tz = ctx.config.timezone
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        handoff, counselor, wait = row.get("handoff_at"), row.get("first_counselor_at"), row.get("reply_wait_min")
        a, b = _instant(handoff, tz), _instant(counselor, tz)
        if a is not None and b is not None:
            expected = minutes(a, b)
            if not same_value(wait, expected):
                f.fail(id_, f"reply_wait_min {wait!r}, first_counselor_at − handoff_at is {expected} min")
        elif wait is not None:
            f.fail(id_, "reply_wait_min is filled without both handoff_at and first_counselor_at")
        closed, nxt, reentry = row.get("closed_at"), row.get("next_room_id"), row.get("reentry_hours")
        c = _instant(closed, tz)
        if isinstance(nxt, str) and nxt:
            first = ctx.messages.get(nxt)
            if not first:
                f.fail(id_, f"next_room_id {nxt} has no messages in the input")
            elif c is None:
                f.fail(id_, "next_room_id is filled without a closed_at")
            else:
                expected = hours(c, first[0]["at"])
                if not same_value(reentry, expected):
                    f.fail(id_, f"reentry_hours {reentry!r}, {nxt}'s first sent_at − closed_at is {expected} h")
        elif reentry is not None:
            f.fail(id_, "reentry_hours is filled without a next_room_id")
    return f.result("4.durations", "reply_wait_min = first_counselor_at − handoff_at (min); "
                                   "reentry_hours = next room's first sent_at − closed_at (h); both to 0.01")


def _conditions(ctx: _Context, row: dict) -> list[bool]:
    """Rules 1–5 on the row's own fields, as written."""
    window = Decimal(ctx.config.reentry_window_hours)
    wait, limit, reentry = row.get("reply_wait_min"), row.get("first_reply_min"), row.get("reentry_hours")
    room = ctx.rooms.get(row.get("room_id")) if isinstance(row.get("room_id"), str) else None
    closed_by_ai = room["closed_by"] == "ai" if room else row.get("closed_at") is not None
    return [
        row.get("first_trigger_message_id") is not None and row.get("counselor_message_count") == 0
        and _is_int(row.get("ai_after_trigger")) and row["ai_after_trigger"] >= 2,
        isinstance(row.get("uncited_message_ids"), list) and len(row["uncited_message_ids"]) > 0,
        _is_number(reentry) and Decimal(str(reentry)) <= window,
        _is_number(wait) and _is_number(limit) and Decimal(str(wait)) > Decimal(str(limit)),
        closed_by_ai,
    ]


def _first_rule(ctx: _Context, row: dict) -> int | None:
    return next((i for i, c in enumerate(_conditions(ctx, row)) if c), None)


def _rule_check(index: int, id_: str, title: str):
    """Checks 5–7: the rule at `index` decides exactly the rows where it is the first to match."""
    target = V.RULE_ORDER[index]

    def check(ctx: _Context) -> CheckResult:
        f = Findings()
        for room, row in ctx.ids():
            if not isinstance(row, dict):
                continue
            first = _first_rule(ctx, row)
            written = row.get("verdict")
            if first == index and written != target:
                f.fail(room, f"rule {index + 1} is the first to match but verdict is {written!r}")
            elif written == target and first != index:
                f.fail(room, f"verdict {written!r} but the first matching rule is {'none' if first is None else first + 1}")
        return f.result(id_, title)

    return check


def c08_late_or_ai_ended(ctx: _Context) -> CheckResult:
    """Rules 4 and 5, and a listed room that no rule lists."""
    f = Findings()
    for room, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        first = _first_rule(ctx, row)
        written = row.get("verdict")
        if first is None:
            f.fail(room, "no rule matches this room, so it should not be listed")
        elif first >= 3 and written != V.RULE_ORDER[first]:
            f.fail(room, f"rule {first + 1} is the first to match ({V.RULE_ORDER[first]}) but verdict is {written!r}")
        elif written in (V.LATE_REPLY, V.AI_ENDED) and first != V.RULE_ORDER.index(written):
            f.fail(room, f"verdict {written!r} but the first matching rule is {first + 1}")
    return f.result("8.late_or_ai_ended", "otherwise, reply_wait_min > first_reply_min → 넘긴 뒤 상담원 응답이 늦음; "
                                          "else a room the AI closed → AI 응대로 끝남")


c05_kept_answering = _rule_check(0, "5.kept_answering", "trigger, no counselor, ai_after_trigger ≥ 2 → 상담원 요청을 AI가 계속 받음")
c06_uncited = _rule_check(1, "6.uncited", "otherwise, uncited_message_ids not empty → 도움말에 없는 답변")
c07_reentry = _rule_check(2, "7.reentry", "otherwise, reentry_hours ≤ 24 → 같은 문의가 다시 들어옴")


def c09_evidence_fields(ctx: _Context) -> CheckResult:
    f = Findings()
    known = {d: set(columns(DOMAIN, d)) for d in INPUT_DATASETS}
    every = set().union(*known.values())
    for id_, row in ctx.ids():
        for e in evidence_rows(row):
            d, field = hashable(e.get("dataset")), hashable(e.get("field"))
            if "dataset" in e and d not in known:
                f.fail(id_, f"dataset {d!r} is not an input dataset")
            elif "dataset" in e and field not in known[d]:
                f.fail(id_, f"{d}.{field} is not a column")
            elif field not in every:
                f.fail(id_, f"field {field!r} is not a column of chat_messages, rooms, handoff_phrases or help_articles")
    return f.result("9.evidence_fields", "every evidence field is a column of one of the four datasets")


def c10_evidence_values(ctx: _Context) -> CheckResult:
    f = Findings()
    for id_, row in ctx.known():
        related = ctx.related(id_, row)
        for e in evidence_rows(row):
            problem = _evidence_problem(ctx, id_, e, related)
            if problem:
                f.fail(id_, problem)
    return f.result("10.evidence_values", "evidence values equal the cited rows as written; counts carry agg and re-compute")


def c11_polite(ctx: _Context) -> CheckResult:
    return polite_findings(ctx.ids()).result("11.polite", "summary (and hedge) end in polite Korean")

def recompute(ctx: _Context) -> CheckResult:
    f = Findings()
    seen = set()
    for id_, row in ctx.ids():
        if not isinstance(row, dict):
            continue
        exp = ctx.expected.get(id_)
        if exp is None:
            f.fail(id_, "no room of the judged day has this room_id")
            continue
        seen.add(id_)
        if exp.status != V.LISTED:
            f.fail(id_, {V.HELD_STATUS: "the room is held (판정 보류), not judged",
                         V.UNLISTED: "no rule lists this room", V.OUT_OF_SCOPE: "the room is out of scope"}[exp.status])
            continue
        if row.get("verdict") != exp.verdict:
            f.fail(id_, f"verdict {row.get('verdict')!r}, re-computed {exp.verdict!r}")
            continue
        for k in FIELDS:
            if not same_value(row.get(k), exp.fields[k]):
                f.fail(id_, f"{k} {row.get(k)!r}, re-computed {exp.fields[k]!r}")
                break
    for room, exp in ctx.expected.items():
        if exp.status == V.LISTED and room not in seen:
            f.fail(room, f"listed room ({exp.verdict}) has no verdict row")
    return f.result("recompute", "every verdict and field re-computed from the input rows (one row per listed room, none for others)")


CHECKS = (output_schema, c01_verdict_enum, c02_required, c03_ranges, c04_durations, c05_kept_answering, c06_uncited,
          c07_reentry, c08_late_or_ai_ended, c09_evidence_fields, c10_evidence_values, c11_polite, recompute)


# -- helpers ---------------------------------------------------------------------------------------


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _instant(v, tz: str):
    if not isinstance(v, str):
        return None
    try:
        return instant(v, tz)
    except ValueError:
        return None


def _evidence_problem(ctx: _Context, room_id: str, e: dict, related: dict[str, list[dict]]) -> str | None:
    d, field, agg, value = hashable(e.get("dataset")), hashable(e.get("field")), e.get("agg"), e.get("value")
    datasets = [d] if "dataset" in e else [x for x in INPUT_DATASETS if field in columns(DOMAIN, x)]
    if not datasets or datasets[0] not in INPUT_DATASETS or field not in columns(DOMAIN, datasets[0]):
        return None  # reported by check 9
    if agg is not None:
        if agg == "count" and field == "sender" and "chat_messages" in datasets:
            exp = ctx.expected.get(room_id)
            n = exp.fields.get("ai_after_trigger") if exp and exp.fields else None
            return None if n is not None and same_json(value, n) else f"count of ai messages after the request is {n}, evidence says {value!r}"
        if agg == "count" and field == "article_id" and "help_articles" in datasets:
            n = len(ctx.article_ids)
            return None if same_json(value, n) else f"help_articles has {n} articles, evidence says {value!r}"
        return f"agg {agg!r} on {field} cannot be re-computed"
    for name in datasets:
        if any(same_json(value, r.get(field)) for r in related[name]):
            return None
    where = datasets[0] if len(datasets) == 1 else " / ".join(datasets)
    return f"{where}.{field} = {value!r} is in no row this room rests on"
