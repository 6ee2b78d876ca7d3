"""A character's broadcast as the console shows it: which windows are the current broadcast (after
the last close and the last start), the characters' names, and starting and closing a broadcast
from the page (`POST /live/start`, `POST /live/close`), which do what `verdicts live-start` and
`verdicts live-close` do (`live.on_air.start_broadcast`; `live.judge.close_broadcast`: answered
lines written back to the viewer state, the broadcast's sheet tuning suggestions made)."""

from __future__ import annotations

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import JSONResponse

from live import on_air
from rules.common.timestamps import wall_clock
from web import messages
from web.messages import action_body, refused


def where_current(engine: sa.Engine) -> dict:
    """`closed_through`: character_id → the instant (ms) up to which its windows belong to earlier
    broadcasts (its last close, or the window before its last start); `on_air`: the characters whose
    broadcast was started and not closed since, with when (ms) and the viewer relations in force."""
    with engine.connect() as conn:
        cut, started = on_air.current_from(conn), on_air.on_air(conn)
    return {"closed_through": {c: w // 1_000_000 for c, w in cut.items()},
            "on_air": {c: {"started_ms": s["started_ns"] // 1_000_000, "first_window_ms": s["first_window_ns"] // 1_000_000,
                           "viewers": s["viewers"]} for c, s in started.items()}}


def names(refs) -> dict[str, str]:
    """character_id → character_name of the sheets in force (none before the first line)."""
    if refs is None or "character_name" not in refs.file_sheet:
        return {}
    return {str(c): str(n) for c, n in zip(refs.file_sheet["character_id"], refs.file_sheet["character_name"])
            if isinstance(n, str) and n}


def close_message(done: dict) -> str:
    """What closing did, in Korean for the page."""
    if not done["closed"]:
        off = " 방송을 끝냈습니다." if done.get("ended") else ""
        return f"{done['character_id']}: {messages.state('nothing_to_close')}.{off}"
    thin = " (방송이 짧아 제안할 만큼 모이지 않았습니다)" if done.get("thin") else ""
    return (f"{done['character_id']} 방송 {done['broadcast_id']}을 닫았습니다. 답한 줄 {done['answered']:,}개를 시청자 기록에 "
            f"썼고, 설정표 조정 제안 {len(done['suggestions']):,}개를 만들었습니다{thin}.")


def close_lines(done: dict) -> list[str]:
    """What closing did, in English for the command line (`verdicts live-close` prints these to stdout)."""
    out = [f"{done['character_id']}: {'closed' if done['closed'] else 'nothing judged since the last close'}, "
           f"{done['answered']} answered lines written back" + ("; off air" if done.get("ended") else "")]
    if done["closed"]:
        out.append(f"broadcast {done['broadcast_id']}: {len(done['suggestions'])} sheet tuning suggestions"
                   + (" (too thin to suggest)" if done["thin"] else "")
                   + f"; see `verdicts suggest live_pick --broadcast {done['broadcast_id']}`")
    return out


def start_message(done: dict, tz: str) -> str:
    """What starting did (or why it waits), in Korean for the page."""
    c, air = done["character_id"], done.get("on_air")
    if not done["started"]:
        p = done["previous"]
        open_ = (f"{c} 방송이 {_clock(air['started_ns'], tz)}부터 방송 중입니다" if air else f"{c}의 이전 방송이 아직 닫히지 않았습니다")
        return (f"{open_} (판정한 구간 {p['windows']:,}개, {_clock(p['first_window_ns'], tz)}부터). "
                "닫아야 새 방송을 시작할 수 있습니다.")
    if done.get("already"):
        return f"{c}는 {_clock(done['started_ns'], tz)}부터 이미 방송 중입니다. 새로 기록한 것은 없습니다."
    closed = close_message(done["closed"]) + " " if done.get("closed") else ""
    return (f"{closed}{c} 방송을 {_clock(done['started_ns'], tz)}에 시작했습니다. 시청자 기록 "
            f"{done['viewers']:,}명으로 판정하고, {_clock(done['first_window_ns'], tz)} 구간부터 이 방송으로 셉니다.")


def start_lines(done: dict, tz: str) -> list[str]:
    """What starting did, in English for the command line (`verdicts live-start` prints these to stdout)."""
    c, air = done["character_id"], done.get("on_air")
    if not done["started"]:
        p = done["previous"]
        open_ = f"on air since {_clock(air['started_ns'], tz)}" if air else "the previous broadcast is still open"
        return [f"{c}: not started: {open_} ({p['windows']} judged windows since "
                f"{_clock(p['first_window_ns'], tz)}); close it with --close-previous or `verdicts live-close {c}`"]
    if done.get("already"):
        return [f"{c}: on air already since {_clock(done['started_ns'], tz)}, nothing judged since; nothing written"]
    out = close_lines(done["closed"]) if done.get("closed") else []
    return out + [f"{c}: on air since {_clock(done['started_ns'], tz)}, windows from {_clock(done['first_window_ns'], tz)}, "
                  f"judged with {done['viewers']} viewer relations"]


def _clock(ns: int, tz: str) -> str:
    return wall_clock(ns, tz, seconds=True)


def _action(config, act):
    """A console action on one character (`{"character_id", ...}`): `act(live, character_id, body)` gives
    what it did and its status, or None when no sheet names the character."""
    async def endpoint(request: Request):
        body, refusal = await action_body(request, config.token)
        if refusal is not None:
            return refusal
        character = body.get("character_id") if isinstance(body, dict) else None
        if not isinstance(character, str) or not character.strip():
            return refused("character_required", 400)
        done = await act(request.app.state.live, character.strip(), body)
        if done is None:
            return refused("unknown_character", 404)
        return JSONResponse(done[0], status_code=done[1])

    return endpoint


def start(config, tz: str):
    """`POST /live/start {"character_id", "close_previous"}`: put that character's broadcast on air
    (the page asks first, and asks again before closing a broadcast still open: 409 until then)."""
    async def act(live, character: str, body: dict):
        by = body.get("by") if isinstance(body.get("by"), str) and len(body["by"]) <= 200 else None
        done = await live.start_broadcast(character, body.get("close_previous") is True, by)
        return None if done is None else ({**done, "message": start_message(done, tz)}, 200 if done["started"] else 409)

    return _action(config, act)


def close(config):
    """`POST /live/close {"character_id"}`: close that character's broadcast (the page asks first)."""
    async def act(live, character: str, body: dict):
        done = await live.close_broadcast(character)
        return None if done is None else ({**done, "message": close_message(done)}, 200)

    return _action(config, act)
