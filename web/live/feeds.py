"""What the chat feeds sending to this service report (`verdicts listen`): each feed POSTs its
counts to `/live/feeds` every second; `/live/status` lists the latest report of each, with its age,
and the console shows them. Kept in memory only: a feed reports again within a second of a restart."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse

from web.messages import action_body


COUNTS = ("received", "sent", "acknowledged", "quarantined", "duplicates", "reconnects", "skipped", "unpriced")
TEXTS = ("feed", "platform", "channel", "character_id")
STALE_S = 10.0
"""A feed not heard from for this long is shown as gone."""
MAX_FEEDS = 64


def board(app) -> dict[tuple[str, str], tuple[dict, float]]:
    if not hasattr(app.state, "feed_board"):
        app.state.feed_board = {}
    return app.state.feed_board


def report_of(body) -> dict | str:
    """The report kept, or what is wrong with it."""
    if not isinstance(body, dict):
        return "expected a JSON object"
    out = {}
    for k in TEXTS:
        v = body.get(k)
        if not isinstance(v, str) or not v or len(v) > 200:
            return f"{k} must be a string of 1–200 characters"
        out[k] = v
    for k in COUNTS:
        v = body.get(k, 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return f"{k} must be a whole number ≥ 0"
        out[k] = v
    out["connected"] = body.get("connected") is True
    return out


def snapshot(app, now: float | None = None) -> list[dict]:
    now = time.monotonic() if now is None else now
    out = []
    for report, at in board(app).values():
        age = now - at
        out.append({**report, "age_s": round(age, 1), "live": age < STALE_S})
    return sorted(out, key=lambda r: (r["feed"], r["character_id"]))


def receive(config):
    async def endpoint(request: Request):
        body, refusal = await action_body(request, config.token)
        if refusal is not None:
            return refusal
        report = report_of(body)
        if isinstance(report, str):
            return JSONResponse({"error": report}, status_code=400)
        feeds = board(request.app)
        key = (report["feed"], report["character_id"])  # one channel may feed two characters' consoles
        if key not in feeds and len(feeds) >= MAX_FEEDS:  # forget the longest silent
            del feeds[min(feeds, key=lambda k: feeds[k][1])]
        feeds[key] = (report, time.monotonic())
        return JSONResponse({"ok": True})

    return endpoint
