"""The admin pages: domains and days, boards and reports, items, uploads, manual checks, diffs.

Pages live under `/admin`; `routes(config)` lists them and `lifespan` holds the worker that
judges uploads in the background. Modules: `runs` (judged runs), `pages` (index, domain page,
board, report), `item` (an item with its sources and transcript), `item_list` (a run's items page by page), `uploads`, `review` (manual
checks), `diff` (two runs), `page` (access and the page shell); CSS and script in `static/`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from web import messages

from web.config import WebConfig

STATIC = Path(__file__).resolve().parent / "static"
STATIC_TYPES = {"admin.css": "text/css", "admin.js": "text/javascript"}


@dataclass
class AdminState:
    config: WebConfig
    runs: object
    engine: object
    executor: ThreadPoolExecutor
    jobs: dict = field(default_factory=dict)
    """(domain, upload id) → the status of an upload judged since the service started."""


def state_of(app) -> AdminState:
    state = getattr(app.state, "admin", None)
    if state is None:
        from assets.resources.warehouse import _engine
        from web.admin.runs import Runs

        config = app.state.config
        state = AdminState(config, Runs(config), _engine(config.warehouse_url), ThreadPoolExecutor(1, thread_name_prefix="admin-judge"))
        app.state.admin = state
    return state


@contextlib.asynccontextmanager
async def lifespan(app, config: WebConfig):
    state = state_of(app)
    # Judge every run once in the background, so the index answers from memory when it is opened;
    # one run at a time, never while the live console is finishing windows (it shares the interpreter).
    if config.admin_warm:
        live = getattr(app.state, "live", None)
        threading.Thread(target=_warm, args=(state, live.quiet if live is not None else None),
                         name="admin-warm", daemon=True).start()
    try:
        yield
    finally:
        state.executor.shutdown(wait=False, cancel_futures=True)


def _warm(state: AdminState, quiet=None, wait_s: float = 0.25) -> None:
    """Judge every run once; before each, wait while `quiet()` says the time is taken."""
    from evals import domains

    for domain in domains.names():
        for key in state.runs.keys(domain):
            while quiet is not None and not quiet():
                time.sleep(wait_s)
            try:
                state.runs.load(domain, key)
            except Exception:  # noqa: BLE001 - the page that opens this run shows why
                continue


def _guarded(handler, domain_scoped: bool = True):
    from evals import domains
    from web.admin.page import allowed, refused

    async def endpoint(request: Request) -> Response:
        if not allowed(request):
            return refused()
        state_of(request.app)
        if domain_scoped and request.path_params.get("domain") not in domains.names():
            raise HTTPException(404, "no such domain")
        from rules.common.jsonl import DatasetError

        try:
            return await handler(request)
        except KeyError as exc:
            raise HTTPException(404, f"not found: {exc}") from None
        except DatasetError as exc:
            return _unusable(request, exc)

    return endpoint


def _unusable(request: Request, exc) -> Response:
    """A run whose input cannot be judged: the file and column named, the rest of the site usable."""
    from evals.board import e
    from web.admin.page import domain_crumbs, page

    domain = request.path_params.get("domain", "")
    where = f"파일 <code>{e(Path(exc.file).name)}</code>" + (f" · 열 <code>{e(exc.column)}</code>" if exc.column else "")
    body = f"<div class='error' role='alert'><p><b>이 실행의 입력을 판정하지 못했습니다.</b> {where}</p><p>{e(messages.dataset_error(exc.reason))}</p></div>"
    return page(request, f"{domain} 입력 오류", body, domain_crumbs(domain, ("오류", None)), status=422)


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC_TYPES:
        raise HTTPException(404)
    return FileResponse(STATIC / name, media_type=STATIC_TYPES[name], headers={"cache-control": "no-cache"})


def routes(config: WebConfig) -> list:
    from web.admin import diff, item, item_list, pages, review, uploads

    g = _guarded
    return [
        Route("/admin/static/{name}", _static),
        Route("/admin", g(pages.index, domain_scoped=False)),
        Route("/admin/{domain}", g(pages.domain_page)),
        Route("/admin/{domain}/seed.json", g(pages.seed_file)),
        Route("/admin/{domain}/upload", g(uploads.upload), methods=["POST"], max_body_size=uploads.body_limit(config)),
        Route("/admin/{domain}/uploads/{upload}", g(uploads.upload_page)),
        Route("/admin/{domain}/uploads/{upload}/status", g(uploads.status_json)),
        Route("/admin/{domain}/diff", g(diff.diff_page)),
        Route("/admin/{domain}/runs/{run}/board", g(pages.board_page)),
        Route("/admin/{domain}/runs/{run}/report", g(pages.report_page)),
        Route("/admin/{domain}/runs/{run}/items", g(item_list.items_page)),
        Route("/admin/{domain}/runs/{run}/items/{item}", g(item.item_page)),
        Route("/admin/{domain}/runs/{run}/review/{check}", g(review.review_page)),
        Route("/admin/{domain}/runs/{run}/review/{check}", g(review.decide), methods=["POST"]),
        Route("/admin/{domain}/runs/{run}/review/{check}/decisions.{format}", g(review.export)),
    ]
