"""Request bodies: bounded while they stream, and JSON read strictly.

Every request body is counted as it arrives and refused with 413 once it passes its limit
(Starlette's body limit: `WebConfig.body_max_bytes` for the whole app, `upload_max_bytes` on the
upload route), so a body sent in chunks without a Content-Length is never held whole first.
`json_body` reads a JSON POST: UTF-8, one JSON value, no `NaN`/`Infinity`, no lone surrogate
(`"\\ud800"` parses in Python but cannot be stored or sent back as UTF-8); anything else is a
`BodyError` with the status and a reason the endpoint answers with.
"""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.requests import Request

TOO_LARGE = 413
"""The status Starlette's body limit raises (as an HTTPException) from the body's stream."""


class BodyError(Exception):
    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


def too_large(exc: BaseException) -> bool:
    """Whether an exception is the body limit's refusal."""
    return isinstance(exc, HTTPException) and exc.status_code == TOO_LARGE


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


async def json_body(request: Request) -> object:
    try:
        raw = await request.body()
    except HTTPException as exc:
        if too_large(exc):
            raise BodyError(TOO_LARGE, "the body is over the size limit") from None
        raise
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(400, f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise BodyError(400, "the body is not JSON: nested too deep") from None
    except ValueError as exc:
        raise BodyError(400, f"the body is not JSON: {exc}") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BodyError(400, "the body holds a lone surrogate (a \\ud800–\\udfff escape without its pair)") from None
    except RecursionError:
        raise BodyError(400, "the body is not JSON: nested too deep") from None
    return value
