"""POST /suggestions/apply and /suggestions/reject: JSON in, JSON out.

Cross-site requests are refused three ways: the body must be `application/json` (a form on
another site cannot send that without a CORS preflight, which is never answered), a browser's
`Origin` must be this service (`web.boundary`, for every state-changing request), and
the token is checked when one is configured.
"""

from __future__ import annotations

import time
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from live import sheets
from web.bodies import BodyError, json_body
from web.messages import refused
from web.security import token_ok

STATUS_OF = {"unknown": 404, "stale": 409, "rejected": 409, "applied": 409, "no_reason": 400}


async def _body(request: Request, config) -> dict | JSONResponse:
    if not token_ok(request, config.token):
        return refused("token_required", 403, "a valid token is required")
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return JSONResponse({"error": "send application/json"}, status_code=415)
    try:
        body = await json_body(request)
    except BodyError as exc:
        return JSONResponse({"error": exc.reason}, status_code=exc.status)
    if not isinstance(body, dict) or not isinstance(body.get("suggestion_id"), str) or not body["suggestion_id"].strip():
        return JSONResponse({"error": "suggestion_id is required"}, status_code=400)
    return body


def _by(body: dict) -> str | None:
    by = body.get("by")
    return by.strip()[:80] or None if isinstance(by, str) else None


def apply(config):
    from web.suggestions.page import engine_of

    async def endpoint(request: Request):
        body = await _body(request, config)
        if isinstance(body, JSONResponse):
            return body
        try:
            done = await run_in_threadpool(sheets.apply_suggestion, engine_of(config), body["suggestion_id"].strip(),
                                           time.time_ns(), _by(body))
        except sheets.SuggestionError as exc:
            return JSONResponse({"error": str(exc), "kind": exc.kind}, status_code=STATUS_OF.get(exc.kind, 409))
        return JSONResponse({"suggestion_id": done.suggestion_id, "character_id": done.character_id, "version": done.version,
                             "changed": done.changed, "message": done.message})

    return endpoint


def reject(config):
    from web.suggestions.page import engine_of

    async def endpoint(request: Request):
        body = await _body(request, config)
        if isinstance(body, JSONResponse):
            return body
        reason = body.get("reason") if isinstance(body.get("reason"), str) else ""
        try:
            s = await run_in_threadpool(sheets.reject_suggestion, engine_of(config), body["suggestion_id"].strip(), reason[:500],
                                        time.time_ns(), _by(body))
        except sheets.SuggestionError as exc:
            return JSONResponse({"error": str(exc), "kind": exc.kind}, status_code=STATUS_OF.get(exc.kind, 409))
        return JSONResponse({"suggestion_id": s["suggestion_id"], "status": "rejected", "reason": s["reason"],
                             "changed": s["changed"], "message": f"{s['suggestion_id']} rejected: {s['reason']}"})

    return endpoint
