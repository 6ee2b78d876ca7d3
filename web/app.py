"""Assembles the web front: every area's routes under one Starlette application.

Areas (each a module with `routes(config) -> list` and, when it keeps state, `lifespan(config)`):
the live console (`web.live`), the admin pages (`web.admin`) and the
sheet tuning suggestions (`web.suggestions`); `/` and the 404 page (`index`) lead to them. What every request crosses first is the
app's own: the security headers (`security`), the body limits (`bodies`), the Host and Origin checks
(`boundary`) and the session cookie (`security.RememberToken`).
"""

from __future__ import annotations

import contextlib

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from web import admin, index, live, suggestions
from web.boundary import Boundary
from web.config import WebConfig
from web.security import RememberToken, SecurityHeaders


AREAS = (live, admin, suggestions)


class ServedApp(Starlette):
    """Starlette with the security headers outside its error handler, so a 500 carries them too."""

    def build_middleware_stack(self):
        return SecurityHeaders(super().build_middleware_stack())


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

    routes = [Route("/healthz", healthz), Route("/", index.index)]
    for area in areas:
        routes += area.routes(config)
    # Every body is counted as it streams in (Starlette's limit; the upload route sets its own), then the
    # Host/Origin boundary, then the session cookie for a page opened with ?token=.
    middleware = [Middleware(Boundary, config=config), Middleware(RememberToken, token=config.token)]
    app = ServedApp(routes=routes, middleware=middleware, lifespan=lifespan, max_body_size=config.body_max_bytes,
                    exception_handlers={404: index.not_found})
    app.state.config = config
    return app
