"""Uploads: a domain's dataset files in, judged in the background, the board of that upload out.

Each upload gets its own folder `<home>/uploads/<domain>/<hex>/`; files are stored only under the
domain's dataset names (`<dataset>.jsonl`, and `golden.jsonl`), whatever the browser called them,
so nothing is written outside that folder. Limits: the whole upload's bytes and each file's lines.
Judging goes through the same gates and quarantine as the command line; a file that cannot be
used (not UTF-8, a column missing from every row, absent) is shown naming the file and column.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from evals import augment
from evals.board import e
from web import messages
from web.admin.page import domain_crumbs, page, url
from web.bodies import too_large
from rules.common.atomic import atomic_open, write_text

STATUS_FILE = "status.json"


def allowed_names(domain: str) -> dict[str, str]:
    """Upload file name → dataset it is stored as."""
    names = {f"{d}.jsonl": d for d in augment.datasets(domain)}
    names["golden.jsonl"] = "golden"
    return names


def _status_path(state, domain: str, upload_id: str) -> Path:
    return state.runs.upload_folder(domain, upload_id) / STATUS_FILE


def status(state, domain: str, upload_id: str) -> dict | None:
    live = state.jobs.get((domain, upload_id))
    if live is not None:
        return live
    path = _status_path(state, domain, upload_id)
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None
    return None


def finished(state, domain: str, upload_id: str) -> bool:
    s = status(state, domain, upload_id)
    return bool(s and s["state"] == "done")


def statuses(state, domain: str) -> list[tuple[str, dict]]:
    return [(u, s) for u in state.runs.uploads(domain) if (s := status(state, domain, u))]


def _set(admin, domain: str, upload_id: str, **fields) -> None:
    current = {**(admin.jobs.get((domain, upload_id)) or {}), **fields}
    admin.jobs[(domain, upload_id)] = current
    path = _status_path(admin, domain, upload_id)
    write_text(path, json.dumps(current, ensure_ascii=False))


def form(request: Request, domain: str, error: str = "") -> str:
    config = request.app.state.config
    names = ", ".join(f"<code>{e(n)}</code>" for n in allowed_names(domain))
    shown = f"<p class='error' role='alert'>{error}</p>" if error else ""
    return (f"<section id='upload'><h2>파일 올리기</h2>{shown}"
            f"<form method='post' action='{e(url(domain, 'upload'))}' enctype='multipart/form-data' class='upload'>"
            f"<p>데이터셋마다 JSON Lines 파일 하나({names}). 골든 라벨은 있으면 자가채점이 채워집니다. "
            f"한 번에 {config.upload_max_bytes // (1024 * 1024)} MB, 파일마다 {config.upload_max_rows:,}줄까지.</p>"
            "<input type='file' name='files' multiple accept='.jsonl,application/x-ndjson,application/json,text/plain' required> "
            "<button type='submit'>올리고 판정하기</button></form></section>")


MULTIPART_SLACK = 64 * 1024
"""Room in an upload's body for the multipart boundaries and part headers around its files."""


def body_limit(config) -> int:
    """The most an upload's body may hold, counted while it streams in (chunked or not)."""
    return config.upload_max_bytes + MULTIPART_SLACK


def _refuse(request: Request, domain: str, message: str, status_code: int) -> Response:
    return page(request, f"{domain} 업로드를 받지 못했습니다", form(request, domain, e(message)),
                domain_crumbs(domain, ("업로드", None)), status=status_code)


async def upload(request: Request) -> Response:
    state = request.app.state.admin
    config = request.app.state.config
    domain = request.path_params["domain"]
    over = f"업로드가 {config.upload_max_bytes // (1024 * 1024)} MB를 넘습니다."
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > body_limit(config):
        return _refuse(request, domain, over, 413)
    try:  # the route's body limit counts the bytes as they stream in, Content-Length or not
        data = await request.form(max_files=20, max_fields=20, max_part_size=config.upload_max_bytes)
    except Exception as exc:  # noqa: BLE001 - a malformed multipart body is the sender's error
        if too_large(exc):
            return _refuse(request, domain, over, 413)
        return _refuse(request, domain, f"업로드를 읽지 못했습니다: {exc}", 400)
    try:
        return await _accept(request, state, config, domain, data)
    finally:  # the parts spool to temporary files: close them whether the upload is taken or refused
        await data.close()


async def _accept(request: Request, state, config, domain: str, data) -> Response:
    names = allowed_names(domain)
    files = [f for f in data.getlist("files") if hasattr(f, "filename") and f.filename]
    if not files:
        return _refuse(request, domain, "올린 파일이 없습니다.", 400)
    chosen: dict[str, bytes] = {}
    total = 0
    for f in files:
        base = re.split(r"[\\/]", f.filename)[-1]
        if base not in names:
            return _refuse(request, domain, f"{base}: 이 도메인의 파일 이름이 아닙니다 (받는 이름: {', '.join(names)}).", 400)
        content = await f.read()
        total += len(content)
        if total > config.upload_max_bytes:
            return _refuse(request, domain, f"업로드가 {config.upload_max_bytes // (1024 * 1024)} MB를 넘습니다.", 413)
        lines = content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
        if lines > config.upload_max_rows:
            return _refuse(request, domain, f"{base}: {lines:,}줄로 파일마다 {config.upload_max_rows:,}줄 한도를 넘습니다.", 413)
        chosen[names[base]] = content
    upload_id = uuid.uuid4().hex
    folder = state.runs.upload_folder(domain, upload_id)
    root = state.runs.uploads_root.resolve()
    folder.mkdir(parents=True)
    for dataset, content in chosen.items():
        target = (folder / f"{dataset}.jsonl").resolve()
        if root not in target.parents:  # cannot happen with the fixed names; kept as the rule
            return _refuse(request, domain, "저장 위치가 업로드 폴더 밖입니다.", 400)
        with atomic_open(target, encoding=None) as fh:
            fh.write(content)
    _set(state, domain, upload_id, state="queued", stage="대기", files=sorted(f"{d}.jsonl" for d in chosen))
    asyncio.get_running_loop().run_in_executor(state.executor, _judge, state, domain, upload_id)
    return RedirectResponse(url(domain, "uploads", upload_id), status_code=303)


def _judge(state, domain: str, upload_id: str) -> None:
    from rules.common.jsonl import DatasetError

    try:
        state.runs.load(domain, f"up-{upload_id}", lambda stage: _set(state, domain, upload_id, state="running", stage=stage))
    except DatasetError as exc:
        _set(state, domain, upload_id, state="error", stage="오류", dataset=exc.dataset, file=Path(exc.file).name,
             column=exc.column, reason=exc.reason)
    except Exception as exc:  # noqa: BLE001 - shown on the page; the service goes on
        logging.getLogger("verdicts.admin").warning("upload %s/%s could not be judged: %s: %s", domain, upload_id,
                                                    type(exc).__name__, exc)
        _set(state, domain, upload_id, state="error", stage="오류", dataset=None, file=None, column=None,
             reason=f"{type(exc).__name__}: {exc}")
    else:
        _set(state, domain, upload_id, state="done", stage="완료")


def _valid(upload_id: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{32}", upload_id))


async def status_json(request: Request) -> Response:
    domain, upload_id = request.path_params["domain"], request.path_params["upload"]
    s = status(request.app.state.admin, domain, upload_id) if _valid(upload_id) else None
    if s is None:
        return JSONResponse({"state": "unknown"}, status_code=404)
    board = url(domain, "runs", f"up-{upload_id}", "board") if s["state"] == "done" else None
    return JSONResponse({**s, "board": board})


async def upload_page(request: Request) -> Response:
    state = request.app.state.admin
    domain, upload_id = request.path_params["domain"], request.path_params["upload"]
    s = status(state, domain, upload_id) if _valid(upload_id) else None
    crumbs = domain_crumbs(domain, (f"업로드 {upload_id[:8]}", None))
    if s is None:
        return page(request, "그런 업로드가 없습니다", form(request, domain), crumbs, status=404)
    if s["state"] == "done":
        return RedirectResponse(url(domain, "runs", f"up-{upload_id}", "board"), status_code=303)
    files = ", ".join(f"<code>{e(f)}</code>" for f in s.get("files", []))
    if s["state"] == "error":
        where = " · ".join(x for x in (f"파일 <code>{e(s['file'])}</code>" if s.get("file") else "",
                                       f"열 <code>{e(s['column'])}</code>" if s.get("column") else "") if x)
        body = (f"<div class='error' role='alert' id='upload-error'><p><b>이 업로드는 판정하지 못했습니다.</b> {where}</p>"
                f"<p>{e(messages.dataset_error(s.get('reason')))}</p></div><p>올린 파일: {files}. 다른 업로드와 날짜별 판정은 그대로입니다.</p>"
                + form(request, domain))
        return page(request, f"{domain} 업로드 오류", body, crumbs, status=422)
    from web.admin.runs import STAGES

    steps = "".join(f"<li data-stage='{e(x)}'{' class=current' if x == s['stage'] else ''}>{e(x)}</li>" for x in STAGES)
    body = (f"<div id='progress' data-status='{e(url(domain, 'uploads', upload_id, 'status'))}'>"
            f"<p>올린 파일 {files}을 판정하고 있습니다. 지금 단계: <b id='stage'>{e(s['stage'])}</b></p>"
            f"<progress id='bar' max='{len(STAGES)}' value='{STAGES.index(s['stage']) if s['stage'] in STAGES else 0}'></progress>"
            f"<ol class='stages'>{steps}</ol><noscript><p><a href=''>새로 고침</a>으로 진행을 봅니다.</p></noscript></div>")
    return page(request, f"{domain} 업로드 판정 중", body, crumbs)
