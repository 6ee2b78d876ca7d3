"""The live console: chat in over `/ws/ingest`, finished windows out over `/ws/windows`, the page at `/live`.

- `service`: the long-running judge (worker thread, wall-clock windows, start-up recovery);
  `judge_helper` and `ready`: the helper process that judges part of the windows, and what it hands back;
- `windows`: the window buffer over the `rules/live_pick` engine; `records`: its warehouse tables;
- `clients`: bounded per-console queues; `sockets`: the two WebSocket endpoints;
- `page` and `static/`: the operator's page, its script and style; `texts`: what the viewers wrote, in
  the frames; `broadcasts`: the current broadcast, starting and closing it from the page; `warnings`: settings
  that would change every verdict, said loudly;
- `feeds`: the counts the chat feeds (`verdicts listen`) report, shown on `/live/status` and the console.
"""

from __future__ import annotations

import contextlib

from starlette.routing import Route, WebSocketRoute


def routes(config) -> list:
    from web.live import broadcasts, feeds, page, sockets
    from rules.live_pick.config import load_config

    rules = load_config(str(config.rules_config) if config.rules_config else None)
    return [
        WebSocketRoute("/ws/ingest", sockets.ingest),
        WebSocketRoute("/ws/windows", sockets.windows),
        Route("/live", page.page(config, rules.window_seconds, rules.timezone)),
        Route("/live/static/{name}", page.static_file),
        Route("/live/pickup", page.pick_up(config), methods=["POST"]),
        Route("/live/status", page.status(config)),
        Route("/live/start", broadcasts.start(config, rules.timezone), methods=["POST"]),
        Route("/live/close", broadcasts.close(config), methods=["POST"]),
        Route("/live/feeds", feeds.receive(config), methods=["POST"]),
    ]


@contextlib.asynccontextmanager
async def lifespan(app, config):
    from web.live.service import LiveService

    service = LiveService(config)
    await service.start()
    app.state.live = service
    try:
        yield
    finally:
        await service.stop()
