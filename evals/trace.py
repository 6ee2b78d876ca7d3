"""Where a verdict comes from: the source file and line of every row its evidence cites, and the
conversation around it (the turn's character, the window's chat, the session's events, the room).

Works on the normalised tables the rules judged (each row keeps its `file` and `line`). An
evidence item without `agg` is matched to the first related row whose field holds its value
(equal, an element of a list, or an entry of a map, as SPEC §2 allows); one with `agg` was
counted over several rows and cites no single line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable

import pandas as pd

from rules.common.gates import trim

ORIGIN_DATASETS = {"persona": {"profile": "profiles", "turn": "turns"}}
"""Evidence that names a `source` rather than a dataset (persona) maps to these datasets."""


@dataclass
class CitedRow:
    """One evidence item with the row it was found in (None: counted over rows, or not found)."""

    dataset: str
    field: str
    value: object
    agg: str | None
    file: str | None = None
    line: int | None = None
    row_id: str | None = None
    note: str = ""


@dataclass
class Transcript:
    title: str
    columns: list[str]
    rows: list[dict]
    """Each row: the shown columns, plus `file`, `line`, `_id` and `_focus` (the item's own row)."""
    verdicts: dict[str, str] = field(default_factory=dict)
    """Verdict of the transcript rows that were judged themselves, by id."""


@dataclass(frozen=True)
class TraceSpec:
    ids: dict[str, str]
    """Dataset → its id column."""
    related: Callable[[dict, dict[str, pd.DataFrame]], dict[str, pd.DataFrame]]
    """(verdict row, tables) → per dataset, the rows its evidence may cite."""
    transcript: Callable[[dict, dict[str, pd.DataFrame]], Transcript]


def _where(frame: pd.DataFrame | None, column: str, values) -> pd.DataFrame:
    if frame is None or column not in frame.columns:
        return pd.DataFrame()
    wanted = {v for v in values if isinstance(v, str)}
    return frame[frame[column].isin(wanted)]


def _rows(frame: pd.DataFrame, columns: list[str], id_col: str, focus: set[str]) -> list[dict]:
    out = []
    for r in frame.to_dict("records"):
        item = {c: _plain(r.get(c)) for c in columns}
        item.update(file=r.get("file"), line=_int(r.get("line")), _id=r.get(id_col), _focus=r.get(id_col) in focus)
        out.append(item)
    return out


def _plain(v):
    if isinstance(v, float) and v != v:
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        return v.item()
    return v


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


# -- per domain ----------------------------------------------------------------------------------


def _persona_related(row, t):
    return {"turns": _where(t.get("turns"), "turn_no", [row.get("turn_no")]),
            "profiles": _where(t.get("profiles"), "profile_no", [row.get("profile_no")])}


def _persona_transcript(row, t) -> Transcript:
    turns = t.get("turns", pd.DataFrame())
    own = _where(turns, "turn_no", [row.get("turn_no")])
    if own.empty:
        return Transcript("같은 캐릭터의 턴", [], [])
    me = own.iloc[0]
    same = turns[turns["character_code_raw"].map(trim) == trim(me["character_code_raw"])].sort_values(["created_at_ns", "turn_no"])
    scenario = me.get("scenario_id")
    if isinstance(scenario, str) and scenario:
        shown = same[same["scenario_id"] == scenario]
        title = f"같은 시나리오 {scenario}의 턴 (프롬프트 버전별)"
    else:
        at = list(same["turn_no"]).index(me["turn_no"])
        shown = same.iloc[max(0, at - 3): at + 4]
        title = "같은 캐릭터의 앞뒤 턴"
    cols = ["turn_no", "prompt_ver", "created_at", "user_text", "reply_text", "stated_age", "stated_job", "topic_tag"]
    return Transcript(title, cols, _rows(shown, cols, "turn_no", {me["turn_no"]}))


def _live_related(row, t):
    return {"live_chat": _where(t.get("live_chat"), "msg_id", [row.get("msg_id")]),
            "character_sheet": _where(t.get("character_sheet"), "character_id", [row.get("character_id")]),
            "viewer_relation": _where(t.get("viewer_relation"), "viewer_id", [row.get("viewer_id")])}


def _live_transcript(row, t) -> Transcript:
    chat = t.get("live_chat", pd.DataFrame())
    start = row.get("window_start")
    title = f"{row.get('character_id')} 방송의 30초 구간 {start}의 채팅"
    try:
        begin = datetime.fromisoformat(start)
    except (TypeError, ValueError):
        return Transcript(title, [], [])
    end = begin + timedelta(seconds=30)
    mine = chat[chat["character_id"] == row.get("character_id")]
    sent = mine["sent_at"].map(lambda s: _naive(s))
    shown = mine[sent.map(lambda s: s is not None and begin <= s < end)].sort_values(["sent_at_ns", "msg_id"])
    cols = ["msg_id", "sent_at", "viewer_id", "body", "topic_tags", "donation_amount", "is_question"]
    return Transcript(title, cols, _rows(shown, cols, "msg_id", {row.get("msg_id")}))


def _naive(text) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return stamp.replace(tzinfo=None)


def _retry_related(row, t):
    return {"interaction_events": _where(t.get("interaction_events"), "event_id", [row.get("event_id"), row.get("matched_event_id")]),
            "surface_catalog": _where(t.get("surface_catalog"), "surface_key", [row.get("surface_key")])}


def _retry_transcript(row, t) -> Transcript:
    events = t.get("interaction_events", pd.DataFrame())
    shown = _where(events, "session_id", [row.get("session_id")]).sort_values(["sent_at_ns", "event_id"])
    cols = ["event_id", "sent_at", "surface_key_raw", "input_text", "result_shown"]
    return Transcript(f"세션 {row.get('session_id')}의 이벤트", cols,
                      _rows(shown, cols, "event_id", {row.get("event_id"), row.get("matched_event_id")} - {None}))


def _handoff_rooms(row) -> list:
    return [row.get("room_id"), row.get("next_room_id")]


def _handoff_related(row, t):
    return {"chat_messages": _where(t.get("chat_messages"), "room_id", _handoff_rooms(row)),
            "rooms": _where(t.get("rooms"), "room_id", _handoff_rooms(row)),
            "handoff_phrases": t.get("handoff_phrases", pd.DataFrame()),
            "help_articles": t.get("help_articles", pd.DataFrame())}


def _handoff_transcript(row, t) -> Transcript:
    messages = _where(t.get("chat_messages"), "room_id", _handoff_rooms(row)).sort_values(["sent_at_ns", "message_id"])
    cols = ["message_id", "room_id", "sender", "sent_at", "text", "cited_article_id"]
    focus = {row.get("first_trigger_message_id"), *(row.get("uncited_message_ids") or [])} - {None}
    nxt = row.get("next_room_id")
    title = f"대화 {row.get('room_id')}" + (f"와 다음 대화 {nxt}" if isinstance(nxt, str) else "") + "의 메시지"
    return Transcript(title, cols, _rows(messages, cols, "message_id", focus))


SPECS: dict[str, TraceSpec] = {
    "persona": TraceSpec({"turns": "turn_no", "profiles": "profile_no"}, _persona_related, _persona_transcript),
    "live_pick": TraceSpec({"live_chat": "msg_id", "character_sheet": "character_id", "viewer_relation": "viewer_id"},
                           _live_related, _live_transcript),
    "retry": TraceSpec({"interaction_events": "event_id", "surface_catalog": "surface_key"}, _retry_related, _retry_transcript),
    "handoff": TraceSpec({"chat_messages": "message_id", "rooms": "room_id", "handoff_phrases": "trigger_phrase",
                          "help_articles": "article_id"}, _handoff_related, _handoff_transcript),
}


# -- matching evidence to rows -------------------------------------------------------------------


def _same(cell, value) -> bool:
    """The cited value is this cell, one element of it (a list) or one entry of it (a map)."""
    if isinstance(cell, (list, tuple)):
        return any(_same(x, value) for x in cell)
    if isinstance(cell, dict):
        return any(_same(x, value) for x in cell.values())
    if cell is None or (isinstance(cell, float) and cell != cell):
        return value is None
    if isinstance(value, bool) or isinstance(cell, bool):
        return bool(cell) == value if isinstance(value, bool) and isinstance(cell, (bool, int)) else False
    if isinstance(value, (int, float)) and isinstance(cell, (int, float)):
        return float(cell) == float(value)
    if hasattr(cell, "item"):
        return _same(cell.item(), value)
    return isinstance(value, str) and trim(str(cell)) == trim(value)


def cited_rows(domain: str, row: dict, tables: dict[str, pd.DataFrame]) -> list[CitedRow]:
    """Each evidence item of `row` with the source file, line and id of the row it cites."""
    spec = SPECS[domain]
    related = spec.related(row, tables)
    origins = ORIGIN_DATASETS.get(domain, {})
    out = []
    for item in row.get("evidence") or []:
        if not isinstance(item, dict):
            continue
        origin = item.get("dataset", item.get("source"))
        dataset = origins.get(origin, origin)
        c = CitedRow(str(dataset), str(item.get("field")), item.get("value"), item.get("agg"))
        if c.agg:
            c.note = f"여러 줄에서 센 값({c.agg})이라 한 줄을 가리키지 않습니다"
        else:
            frame = related.get(dataset)
            if frame is None or frame.empty or c.field not in frame.columns:
                c.note = "인용한 행을 입력에서 찾지 못했습니다"
            else:
                hit = next((r for r in frame.to_dict("records") if _same(r.get(c.field), c.value)), None)
                if hit is None:
                    c.note = "관련 행 가운데 이 값을 가진 행이 없습니다"
                else:
                    c.file, c.line = hit.get("file"), _int(hit.get("line"))
                    c.row_id = hit.get(spec.ids.get(dataset, ""))
        out.append(c)
    return out


def transcript(domain: str, row: dict, tables: dict[str, pd.DataFrame], verdicts: dict[str, str] | None = None) -> Transcript:
    """The conversation around the item, its own row(s) marked; `verdicts` labels rows judged themselves."""
    t = SPECS[domain].transcript(row, tables)
    if verdicts:
        t.verdicts = {r["_id"]: verdicts[r["_id"]] for r in t.rows if r["_id"] in verdicts}
    return t
