"""handoff on the board: the aggregates as a header (labelled with the days they cover), and the
verdicts as columns with the held rooms as one more column (seed 003: 판정 보류 열)."""

from __future__ import annotations

import pandas as pd

from evals.board import MAX_ITEMS_PER_GROUP, REPORT_FILE, Board, BoardSpec, column_items, e, inline_md, md_table_rows, overflow_note, reason_label, verdict_label
from evals.handoff import AGGREGATES, UNKNOWN_ROOM, is_aggregates
from evals.trace import Transcript, TraceSpec, rows_where, shown_rows
from rules.handoff import verdicts as V
from rules.handoff.spec import SPEC


def items(spec: BoardSpec, board: Board) -> str:
    """One column per verdict, then the held rooms as one more column."""
    held: dict[str, list[dict]] = {}
    for x in board.report.excluded:
        if x.get("id") != UNKNOWN_ROOM:  # a row of no known room holds no room back; the header lists it
            held.setdefault(str(x.get("id")), []).append(x)
    rows = "".join(
        f"<details class='held-room' data-id='{e(room)}'><summary>{verdict_label(V.HELD, ())} <code class='id'>{e(room)}</code>"
        f" <span class='sum'>빠진 줄 {len(xs)}개 때문에 이 대화만 판정에서 뺐습니다.</span></summary><div class='body'><ul>"
        + "".join(f"<li>{reason_label(x.get('code'))}<code>{e(x.get('code'))}</code> {e(x.get('reason'))}</li>" for x in xs) + "</ul></div></details>"
        for room, xs in list(held.items())[:MAX_ITEMS_PER_GROUP])
    rows += overflow_note(len(held) - MAX_ITEMS_PER_GROUP, elsewhere=REPORT_FILE)
    column = (f"<details class='group column held' id='g-held' data-group-verdict='{e(V.HELD)}' open><summary><h2>{verdict_label(V.HELD, ())} "
              f"<span class='n'>{len(held)}건</span></h2></summary>{rows or '<p class=empty>없음</p>'}</details>")
    return column_items(spec, board, column)


def _aggregates(board: Board) -> tuple[str, str] | None:
    return next(((h, b) for h, b in board.report.extra_sections if is_aggregates(h)), None)


def _dropped(board: Board) -> str:
    """Seed 003: the rows left out, and why, on top of the board (their rooms are in the held column)."""
    rows = board.report.excluded
    if not rows:
        return ""
    items = "".join(f"<li><code>{e(x.get('id'))}</code> {reason_label(x.get('code'))}<code>{e(x.get('code'))}</code> {e(x.get('reason'))}</li>"
                    for x in rows[:MAX_ITEMS_PER_GROUP])
    return (f"<section class='dropped' aria-label='판정에서 뺀 줄'><h2>판정에서 뺀 줄 {len(rows)}개</h2><ul>{items}</ul>"
            f"{overflow_note(len(rows) - MAX_ITEMS_PER_GROUP, elsewhere=REPORT_FILE)}</section>")


def header(board: Board) -> str:
    found = _aggregates(board)
    if not found:
        return _dropped(board)
    heading, body = found
    rows = md_table_rows(body)[1:]
    tiles = "".join(
        f"<div class='tile{' sub' if name.startswith('·') else ''}'><span>{inline_md(name)}</span><b>{inline_md(n)}</b></div>"
        for name, n, *_ in rows
    )
    return (f"<section class='aggregates' aria-label='{e(heading)}'><h2>{e(heading)}</h2><div class='tiles'>{tiles}</div></section>"
            + _dropped(board))


# -- the trace: the rows a verdict cites and the conversation around it ----------------------


def _rooms(row) -> list:
    return [row.get("room_id"), row.get("next_room_id")]


def related(row, t):
    return {"chat_messages": rows_where(t.get("chat_messages"), "room_id", _rooms(row)),
            "rooms": rows_where(t.get("rooms"), "room_id", _rooms(row)),
            "handoff_phrases": t.get("handoff_phrases", pd.DataFrame()),
            "help_articles": t.get("help_articles", pd.DataFrame())}


def transcript(row, t) -> Transcript:
    messages = rows_where(t.get("chat_messages"), "room_id", _rooms(row)).sort_values(["sent_at_ns", "message_id"])
    cols = ["message_id", "room_id", "sender", "sent_at", "text", "cited_article_id"]
    focus = {row.get("first_trigger_message_id"), *(row.get("uncited_message_ids") or [])} - {None}
    nxt = row.get("next_room_id")
    title = f"대화 {row.get('room_id')}" + (f"와 다음 대화 {nxt}" if isinstance(nxt, str) else "") + "의 메시지"
    return Transcript(title, cols, shown_rows(messages, cols, "message_id", focus))


BOARD = BoardSpec(
    SPEC.name, "AI가 상담원에게 넘겼어야 할 문의", SPEC.verdict_key, "room_id",
    excluded_heading="판정 보류", excluded_chip="판정 보류로 뺀 줄", header=header, own_sections=(AGGREGATES, f"하루 {AGGREGATES}"),
    items=items, order=SPEC.verdict_order, wide=True,
    trace=TraceSpec(related, transcript),
)
