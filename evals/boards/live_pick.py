"""live_pick on the board: one section per broadcast and window, the three picks first."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from evals.board import MAX_PER_WINDOW_REASON, MAX_WINDOWS, Board, BoardSpec, e, item_html, overflow_note, verdict_label
from evals.report import label
from evals.trace import Transcript, TraceSpec, rows_where, shown_rows
from rules.common import timestamps
from rules.live_pick.spec import SPEC
from rules.live_pick.verdicts import PICK



def _window_end(start) -> str:
    stamp = timestamps.parse(start, "UTC")  # naive text keeps its own wall clock whatever the zone
    if stamp is None:
        return "?"
    return timestamps.to_datetime(stamp.ns + 30 * timestamps.NS_PER_SEC, stamp.form, "UTC").strftime("%H:%M:%S")


def _latency(seconds) -> str:
    return "—" if seconds is None else f"{seconds:.2f}초"


WINDOW = ("character_id", "window_start")


def _windows(spec: BoardSpec, board: Board) -> tuple[list[tuple], int, int]:
    """The first `MAX_WINDOWS` windows (by start, then broadcast) as (key, rows, picks, {reason: (rows,
    the first `MAX_PER_WINDOW_REASON`)}, sheet versions), with the number of windows and the rows of
    those left off. A stored day's are counted by the warehouse, which hands over only the rows shown."""
    order, verdict = spec.order, spec.verdict_key

    def rank(m):
        return (m[1].get("rank_in_window") or 0, m[0])

    def reasons(members: list, many: dict[str, int]) -> dict:
        by_reason: dict[str, list] = {}
        for m in members:
            by_reason.setdefault(label(m[1].get(verdict)), []).append(m)
        return {v: (many[v], by_reason[v][:MAX_PER_WINDOW_REASON])
                for v in sorted(by_reason, key=lambda v: order.index(v) if v in order else len(order))}

    if board.stored is not None:
        found, many, hidden = board.stored.windows(WINDOW, verdict, "sheet_version", MAX_WINDOWS, MAX_PER_WINDOW_REASON, PICK)
        out = []
        for key, n, split, shown in found:
            counted: dict[str, int] = {}
            for (v, _), m in split.items():
                if v != PICK:
                    counted[label(v)] = counted.get(label(v), 0) + m
            picks = sorted((m for m in shown if m[1].get(verdict) == PICK), key=rank)
            versions = sorted({s for _, s in split if isinstance(s, int)})
            out.append((key, n, picks, reasons([m for m in shown if m[1].get(verdict) != PICK], counted), versions))
        return out, many, hidden
    windows: dict[tuple, list[tuple[int, dict]]] = {}
    for n, row in enumerate(board.rows):
        windows.setdefault((row.get(WINDOW[0]), row.get(WINDOW[1])), []).append((n, row))
    keys = sorted(windows, key=lambda k: (str(k[1]), str(k[0])))
    out = []
    for key in keys[:MAX_WINDOWS]:
        members = windows[key]
        rest = [m for m in members if m[1].get(verdict) != PICK]
        counted = {}
        for m in rest:
            counted[label(m[1].get(verdict))] = counted.get(label(m[1].get(verdict)), 0) + 1
        versions = sorted({m[1]["sheet_version"] for m in members if isinstance(m[1].get("sheet_version"), int)})
        out.append((key, len(members), sorted((m for m in members if m[1].get(verdict) == PICK), key=rank), reasons(rest, counted), versions))
    return out, len(keys), sum(len(windows[k]) for k in keys[MAX_WINDOWS:])


def items(spec: BoardSpec, board: Board) -> str:
    order = spec.order
    shown, many, hidden = _windows(spec, board)
    out = ["<p class='lead'>방송(character_id)과 30초 구간마다 답변할 질문 세 개를 위에 두고, 나머지는 빠진 사유별로 묶었습니다. "
           "판정 지연은 구간이 닫힌 뒤 판정이 저장되기까지의 시간이며, 라이브 경로가 재기 전에는 — 로 둡니다.</p>"]
    for w, (key, members, picks, by_reason, versions) in enumerate(shown):
        character, start = key
        sheet = f" <span class='n'>설정표 {e(', '.join(f'v{v}' for v in versions))}</span>" if versions else ""
        out.append(f"<section class='window' id='w-{w}'><h2><code>{e(character)}</code> · {e(start)}–{e(_window_end(start))}"
                   f" <span class='n'>{members}줄</span>{sheet} <span class='lat'>판정 지연 {e(_latency(board.latency.get(key)))}</span></h2>")
        out.append(f"<div class='picks'><h3>{verdict_label(PICK, order)} <span class='n'>{len(picks)}</span></h3>")
        out += [item_html(spec, row, n, order) for n, row in picks]
        out.append("" if picks else "<p class='empty'>이 구간에는 답변할 질문이 없습니다.</p>")
        out.append("</div>")
        for v, (n_reason, first) in by_reason.items():
            out.append(f"<div class='reason'><h3>{verdict_label(v, order)} <span class='n'>{n_reason}</span></h3>")
            out += [item_html(spec, row, n, order) for n, row in first]
            out.append(overflow_note(n_reason - MAX_PER_WINDOW_REASON, verdict=v, character_id=character, window_start=start)
                       + "</div>")
        out.append("</section>")
    if many > MAX_WINDOWS:
        out.append(f"<p class='more'>구간은 앞의 {MAX_WINDOWS}개만 실었습니다 (전체 {many}개).</p>" + overflow_note(hidden))
    if not many:
        out.append("<p class='empty'>판정된 채팅이 없습니다.</p>")
    return "".join(out)


# -- the trace: the rows a verdict cites and the conversation around it ----------------------


def related(row, t):
    return {"live_chat": rows_where(t.get("live_chat"), "msg_id", [row.get("msg_id")]),
            "character_sheet": rows_where(t.get("character_sheet"), "character_id", [row.get("character_id")]),
            "viewer_relation": rows_where(t.get("viewer_relation"), "viewer_id", [row.get("viewer_id")])}


def transcript(row, t) -> Transcript:
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
    return Transcript(title, cols, shown_rows(shown, cols, "msg_id", {row.get("msg_id")}))


def _naive(text) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return stamp.replace(tzinfo=None)


BOARD = BoardSpec(
    SPEC.name, "30초 구간마다 답변할 질문 세 개와 빠진 줄의 사유", SPEC.verdict_key, "msg_id", second_id="pick_id",
    items=items, order=SPEC.verdict_order,
    trace=TraceSpec(related, transcript),
)
