"""A character's broadcast as the console shows it: which windows are the current broadcast (after
the last close), the characters' names, and closing a broadcast from the page (`POST /live/close`),
which does what `verdicts live-close` does (`live.judge.close_broadcast`: answered
lines written back to the viewer state, the broadcast's sheet tuning suggestions made)."""

from __future__ import annotations

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import JSONResponse

from live import store
from web import messages
from web.messages import action_body, refused


def closed_through(engine: sa.Engine) -> dict[str, int]:
    """character_id → the start (ms) of the last window of its closed broadcasts: windows up to it
    belong to earlier broadcasts."""
    b = store.broadcasts
    with engine.connect() as conn:
        rows = conn.execute(sa.select(b.c.character_id, sa.func.max(b.c.last_window_ns)).group_by(b.c.character_id)).all()
    return {c: int(w) // 1_000_000 for c, w in rows if w is not None}


def names(refs) -> dict[str, str]:
    """character_id → character_name of the sheets in force (none before the first line)."""
    if refs is None or "character_name" not in refs.file_sheet:
        return {}
    return {str(c): str(n) for c, n in zip(refs.file_sheet["character_id"], refs.file_sheet["character_name"])
            if isinstance(n, str) and n}


def close_message(done: dict) -> str:
    """What closing did, in Korean for the page."""
    if not done["closed"]:
        return f"{done['character_id']}: {messages.state('nothing_to_close')}."
    thin = " (방송이 짧아 제안할 만큼 모이지 않았습니다)" if done.get("thin") else ""
    return (f"{done['character_id']} 방송 {done['broadcast_id']}을 닫았습니다. 답한 줄 {done['answered']:,}개를 시청자 기록에 "
            f"썼고, 설정표 조정 제안 {len(done['suggestions']):,}개를 만들었습니다{thin}.")


def close_lines(done: dict) -> list[str]:
    """What closing did, in English for the command line (`verdicts live-close` prints these to stdout)."""
    out = [f"{done['character_id']}: {'closed' if done['closed'] else 'nothing judged since the last close'}, "
           f"{done['answered']} answered lines written back"]
    if done["closed"]:
        out.append(f"broadcast {done['broadcast_id']}: {len(done['suggestions'])} sheet tuning suggestions"
                   + (" (too thin to suggest)" if done["thin"] else "")
                   + f"; see `verdicts suggest live_pick --broadcast {done['broadcast_id']}`")
    return out


def close(config):
    """`POST /live/close {"character_id"}`: close that character's broadcast (the page asks first)."""
    async def endpoint(request: Request):
        body, refusal = await action_body(request, config.token)
        if refusal is not None:
            return refusal
        character = body.get("character_id") if isinstance(body, dict) else None
        if not isinstance(character, str) or not character.strip():
            return refused("character_required", 400)
        done = await request.app.state.live.close_broadcast(character.strip())
        if done is None:
            return refused("unknown_character", 404)
        return JSONResponse({**done, "message": close_message(done)})

    return endpoint
