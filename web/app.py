"""Assembles the web front: every area's routes under one Starlette application.

Areas (each a module with `routes(config) -> list` and, when it keeps state, `lifespan(config)`):
the live console (`web.live`), the admin pages (`web.admin`) and the
sheet tuning suggestions (`web.suggestions`).
"""

from __future__ import annotations

import contextlib

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from web import admin, live, suggestions
from web.config import WebConfig
from web.security import SecurityHeaders


AREAS = (live, admin, suggestions)


def create_app(config: WebConfig | None = None) -> Starlette:
    config = config or WebConfig()
    areas = AREAS

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with contextlib.AsyncExitStack() as stack:
            for area in areas:
                if hasattr(area, "lifespan"):
                    await stack.enter_async_context(area.lifespan(app, config))
            yield

    async def healthz(request):
        return PlainTextResponse("ok")

    routes = [Route("/healthz", healthz)]
    for area in areas:
        routes += area.routes(config)
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)], lifespan=lifespan)
    app.state.config = config
    return app
