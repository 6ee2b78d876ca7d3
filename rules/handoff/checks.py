"""Seed 003's eleven automatic checks, plus the output schema and a full re-computation.

Each check reads the verdict rows as written in a file (anything may be wrong in them) and the
judged view of the input (`view`), and reports pass/fail with the failing room_ids. Checks 4–8
re-derive from the row's own fields (so a row always agrees with itself); the re-computation
uses the row-by-row reference, not the engine that produced the rows.
"""

from __future__ import annotations

from decimal import Decimal
from functools import partial

import pandas as pd

from rules.common.checks import (CheckResult, column_problem, dataset_columns, enum_findings, evidence_findings,
                                 filled_findings, first_difference, hashable, is_int, polite_findings, recompute_findings,
                                 row_findings, same_json, schema_result)
from rules.common.cells import trim
from rules.common.verdict_rows import VerdictRows
from rules.handoff import verdicts as V
from rules.handoff.config import HandoffConfig
from rules.handoff.reference import (FIELDS, Expected, _records, expected_rooms, folded, hours, instant, messages_by_room, minutes,
                                     same_value)
from schemas import columns
from schemas.handoff import DOMAIN, INPUT_DATASETS, OUTPUT

REQUIRED = ("room_id", "customer_id", "verdict", "ai_after_trigger", "counselor_message_count", "uncited_message_ids",
            "evidence", "summary")


class _Context(VerdictRows):
    def __init__(self, tables: dict[str, pd.DataFrame], rows: list, config: HandoffConfig):
        super().__init__(rows, "room_id")
        self.config = config
        self.messages = messages_by_room(tables["chat_messages"], config.timezone)
        self.expected: dict[str, Expected] = expected_rooms(tables, config, self.messages)
        self.rooms = {r["room_id"]: r for r in _records(tables["rooms"])}
        self.phrases = _records(tables["handoff_phrases"])
        self.articles = _records(tables["help_articles"])
        self.article_ids = {trim(a["article_id"]) for a in self.articles}
        self._related: dict[tuple, dict[str, list[dict]]] = {}

    def known(self):
        """Rows naming a judged room of the day (other rooms are reported by the re-computation)."""
        return [(i, r) for i, r in self.ids() if isinstance(r, dict) and i in self.expected and self.expected[i].fields]

    def related(self, room_id: str, row: dict) -> dict[str, list[dict]]:
        """The input rows a verdict on this room may cite, per dataset."""
        nxt = row.get("next_room_id")
        key = (room_id, nxt if isinstance(nxt, str) and nxt in self.rooms else None)
        # Asked once per evidence object: gathered once per room and next room.
        if key not in self._related:
            self._related[key] = self._gather(*key)
        return self._related[key]

    def _gather(self, room_id: str, nxt: str | None) -> dict[str, list[dict]]:
        msgs = list(self.messages[room_id])
        rooms = [self.rooms[room_id]]
        if nxt is not None:
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
    return schema_result(ctx.ids(), DOMAIN, OUTPUT)

def c01_verdict_enum(ctx: _Context) -> CheckResult:
    return enum_findings(ctx.ids(), "verdict", V.ORDER).result("1.verdict_enum", "verdict is one of the five enum values")

def c02_required(ctx: _Context) -> CheckResult:
    return filled_findings(ctx.ids(), "room_id", _required_problem, lambda _id, n: f"{n} rows for one room").result(
        "2.required_fields", "room_id, customer_id, verdict, ai_after_trigger, counselor_message_count, "
                             "uncited_message_ids, evidence, summary are present (one row per room)")


def _required_problem(row: dict) -> str | None:
    missing = [k for k in REQUIRED if k not in row or row[k] is None]
    blank = [k for k in ("room_id", "customer_id", "verdict", "summary") if isinstance(row.get(k), str) and not row[k].strip()]
    if missing or blank:
        return f"missing: {', '.join(missing + blank)}"
    return "evidence is empty" if row["evidence"] == [] else None


def c03_ranges(ctx: _Context) -> CheckResult:
    return row_findings(ctx.ids(), _range_problem).result(
        "3.ranges", "ai_after_trigger, counselor_message_count ≥ 0; reply_wait_min, reentry_hours ≥ 0")


def _range_problem(_id: str, row: dict) -> str | None:
    for k in ("ai_after_trigger", "counselor_message_count"):
        if k in row and not (is_int(row[k]) and row[k] >= 0):
            return f"{k} {row[k]!r} is not an integer ≥ 0"
    for k in ("reply_wait_min", "reentry_hours"):
        if row.get(k) is not None and not (_is_number(row[k]) and row[k] >= 0):
            return f"{k} {row[k]!r} is not a number ≥ 0"
    return None


def c04_durations(ctx: _Context) -> CheckResult:
    return row_findings(ctx.ids(), lambda _id, row: _wait_problem(ctx, row) or _reentry_problem(ctx, row)).result(
        "4.durations", "reply_wait_min = first_counselor_at − handoff_at (min); "
                       "reentry_hours = next room's first sent_at − closed_at (h); both to 0.01")


def _wait_problem(ctx: _Context, row: dict) -> str | None:
    tz = ctx.config.timezone
    handoff, counselor, wait = row.get("handoff_at"), row.get("first_counselor_at"), row.get("reply_wait_min")
    a, b = _instant(handoff, tz), _instant(counselor, tz)
    if a is not None and b is not None:
        expected = minutes(a, b)
        return None if same_value(wait, expected) else f"reply_wait_min {wait!r}, first_counselor_at − handoff_at is {expected} min"
    return "reply_wait_min is filled without both handoff_at and first_counselor_at" if wait is not None else None


def _reentry_problem(ctx: _Context, row: dict) -> str | None:
    closed, nxt, reentry = row.get("closed_at"), row.get("next_room_id"), row.get("reentry_hours")
    c = _instant(closed, ctx.config.timezone)
    if not (isinstance(nxt, str) and nxt):
        return "reentry_hours is filled without a next_room_id" if reentry is not None else None
    first = ctx.messages.get(nxt)
    if not first:
        return f"next_room_id {nxt} has no messages in the input"
    if c is None:
        return "next_room_id is filled without a closed_at"
    expected = hours(c, first[0]["at"])
    return None if same_value(reentry, expected) else f"reentry_hours {reentry!r}, {nxt}'s first sent_at − closed_at is {expected} h"


def _conditions(ctx: _Context, row: dict) -> list[bool]:
    """Rules 1–5 on the row's own fields, as written."""
    window = Decimal(ctx.config.reentry_window_hours)
    wait, limit, reentry = row.get("reply_wait_min"), row.get("first_reply_min"), row.get("reentry_hours")
    room = ctx.rooms.get(row.get("room_id")) if isinstance(row.get("room_id"), str) else None
    closed_by_ai = room["closed_by"] == "ai" if room else row.get("closed_at") is not None
    return [
        row.get("first_trigger_message_id") is not None and row.get("counselor_message_count") == 0
        and is_int(row.get("ai_after_trigger")) and row["ai_after_trigger"] >= 2,
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

    def problem(ctx: _Context, _room: str, row: dict) -> str | None:
        first, written = _first_rule(ctx, row), row.get("verdict")
        if first == index and written != target:
            return f"rule {index + 1} is the first to match but verdict is {written!r}"
        if written == target and first != index:
            return f"verdict {written!r} but the first matching rule is {'none' if first is None else first + 1}"
        return None

    def check(ctx: _Context) -> CheckResult:
        return row_findings(ctx.ids(), partial(problem, ctx)).result(id_, title)

    return check


def c08_late_or_ai_ended(ctx: _Context) -> CheckResult:
    """Rules 4 and 5, and a listed room that no rule lists."""
    return row_findings(ctx.ids(), partial(_late_or_ai_ended_problem, ctx)).result(
        "8.late_or_ai_ended", "otherwise, reply_wait_min > first_reply_min → 넘긴 뒤 상담원 응답이 늦음; "
                              "else a room the AI closed → AI 응대로 끝남")


def _late_or_ai_ended_problem(ctx: _Context, _room: str, row: dict) -> str | None:
    first, written = _first_rule(ctx, row), row.get("verdict")
    if first is None:
        return "no rule matches this room, so it should not be listed"
    if first >= 3 and written != V.RULE_ORDER[first]:
        return f"rule {first + 1} is the first to match ({V.RULE_ORDER[first]}) but verdict is {written!r}"
    if written in (V.LATE_REPLY, V.AI_ENDED) and first != V.RULE_ORDER.index(written):
        return f"verdict {written!r} but the first matching rule is {first + 1}"
    return None


c05_kept_answering = _rule_check(0, "5.kept_answering", "trigger, no counselor, ai_after_trigger ≥ 2 → 상담원 요청을 AI가 계속 받음")
c06_uncited = _rule_check(1, "6.uncited", "otherwise, uncited_message_ids not empty → 도움말에 없는 답변")
c07_reentry = _rule_check(2, "7.reentry", "otherwise, reentry_hours ≤ 24 → 같은 문의가 다시 들어옴")


def c09_evidence_fields(ctx: _Context) -> CheckResult:
    known = dataset_columns(DOMAIN, INPUT_DATASETS)
    every = set().union(*known.values())

    def problem(_id: str, _row: dict, e: dict) -> str | None:
        d, field = hashable(e.get("dataset")), hashable(e.get("field"))
        # Evidence may leave out its dataset: the field is then a column of any of the four.
        if "dataset" in e:
            return column_problem(known, d, field)
        if field not in every:
            return f"field {field!r} is not a column of chat_messages, rooms, handoff_phrases or help_articles"
        return None

    return evidence_findings(ctx.ids(), problem).result(
        "9.evidence_fields", "every evidence field is a column of one of the four datasets")


def c10_evidence_values(ctx: _Context) -> CheckResult:
    return evidence_findings(ctx.known(), lambda id_, row, e: _evidence_problem(ctx, id_, e, ctx.related(id_, row))).result(
        "10.evidence_values", "evidence values equal the cited rows as written; counts carry agg and re-compute")


def c11_polite(ctx: _Context) -> CheckResult:
    return polite_findings(ctx.ids()).result("11.polite", "summary (and hedge) end in polite Korean")

def recompute(ctx: _Context) -> CheckResult:
    return recompute_findings(
        ctx.ids(), ctx.expected, partial(_recompute_problem, ctx),
        unknown="no room of the judged day has this room_id",
        missing=lambda room: f"listed room ({ctx.expected[room].verdict}) has no verdict row"
        if ctx.expected[room].status == V.LISTED else None,
    ).result("recompute", "every verdict and field re-computed from the input rows (one row per listed room, none for others)")


def _recompute_problem(ctx: _Context, room: str, row: dict) -> str | None:
    exp = ctx.expected[room]
    if exp.status != V.LISTED:
        return {V.HELD_STATUS: "the room is held (판정 보류), not judged",
                V.UNLISTED: "no rule lists this room", V.OUT_OF_SCOPE: "the room is out of scope"}[exp.status]
    if row.get("verdict") != exp.verdict:
        return f"verdict {row.get('verdict')!r}, re-computed {exp.verdict!r}"
    return first_difference(row, {k: exp.fields[k] for k in FIELDS}, same_value)


CHECKS = (output_schema, c01_verdict_enum, c02_required, c03_ranges, c04_durations, c05_kept_answering, c06_uncited,
          c07_reentry, c08_late_or_ai_ended, c09_evidence_fields, c10_evidence_values, c11_polite, recompute)


# -- helpers ---------------------------------------------------------------------------------------


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
