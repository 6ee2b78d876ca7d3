"""The two sockets: `/ws/ingest` (chat in, acks and quarantine notices back) and
`/ws/windows` (finished windows out, resumable with `after`)."""

from __future__ import annotations

import asyncio
import json

from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from orchestration.web.live.clients import BEHIND
from orchestration.web.live.service import LiveService, Origin, dumps
from orchestration.web.security import origin_ok, token_ok

TOO_BIG = 1009
POLICY = 1008
TRY_LATER = 1013


def split_frame(text: str) -> list[str]:
    """One landing line per chat row: a JSON array gives one per element; anything else
    (an object, or text that is not JSON) is one line, for the gates to judge as it is."""
    try:
        value = json.loads(text)
    except ValueError:
        return [text]
    if isinstance(value, list):
        return [json.dumps(v, ensure_ascii=False) for v in value]
    return [text]


async def refuse(ws: WebSocket, reason: str) -> None:
    """Refuse the handshake with an HTTP 403 saying why (or close with 1008 where the server can't)."""
    try:
        await ws.send_denial_response(PlainTextResponse(reason, status_code=403))
    except RuntimeError:
        await ws.close(code=POLICY, reason=reason)


def service_of(ws: WebSocket) -> LiveService:
    return ws.app.state.live


async def ingest(ws: WebSocket) -> None:
    service = service_of(ws)
    if not token_ok(ws, service.config.token):
        await refuse(ws, "a valid token is required (Authorization: Bearer, X-Verdicts-Token or ?token=)")
        return
    await ws.accept()
    origin = Origin()
    sender = asyncio.create_task(_drain(ws, origin.outbox))
    limit = service.config.max_frame_bytes
    frame_no = 0
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                data = message.get("bytes") or b""
                text = data.decode("utf-8", errors="replace")
            frame_no += 1
            size = len(text.encode("utf-8"))
            if size > limit:
                await ws.close(code=TOO_BIG, reason=f"frame {frame_no} is {size} bytes, over the {limit}-byte limit")
                break
            origin.received += 1
            await service.inbox.put((origin, frame_no, split_frame(text)))
    except WebSocketDisconnect:
        pass
    finally:
        origin.closed = True
        await asyncio.sleep(0)
        sender.cancel()


async def _drain(ws: WebSocket, outbox: asyncio.Queue) -> None:
    try:
        while True:
            await ws.send_text(dumps(await outbox.get()))
    except (WebSocketDisconnect, RuntimeError, asyncio.CancelledError):
        return


async def windows(ws: WebSocket) -> None:
    service = service_of(ws)
    config = service.config
    if not token_ok(ws, config.token):
        await refuse(ws, "a valid token is required (Authorization: Bearer, X-Verdicts-Token or ?token=)")
        return
    if not origin_ok(ws, config.allowed_origins):
        await refuse(ws, f"origin {ws.headers.get('origin')} is not allowed")
        return
    await ws.accept()
    client = service.join()
    receiver = asyncio.create_task(_resume_requests(ws, client))
    try:
        await _send_history(ws, service, client, ws.query_params.get("after"))
        while True:
            get = asyncio.create_task(client.queue.get())
            dropped = asyncio.create_task(client.dropped.wait())
            done, _ = await asyncio.wait({get, dropped, receiver}, return_when=asyncio.FIRST_COMPLETED)
            if get not in done:
                get.cancel()
            dropped.cancel()
            if client.dropped.is_set():
                await ws.close(code=TRY_LATER, reason=BEHIND)
                return
            if receiver in done:
                return  # the console went away
            seq, text = get.result()
            try:
                if seq == "resume":  # everything after the window named, whatever this socket was sent before
                    client.last_seq = (0, 0)
                    await _send_history(ws, service, client, text)
                    continue
                if seq is not None:
                    if seq <= client.last_seq:
                        continue  # already sent from the store
                    client.last_seq = seq
                await ws.send_text(text)
            finally:
                client.queue.task_done()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        receiver.cancel()
        service.hub.leave(client)


async def _send_history(ws: WebSocket, service: LiveService, client, after: str | None) -> None:
    frames = await service.history(after)
    sent = [(s, t, key) for s, t, key in frames if s > client.last_seq]
    for seq, text, _ in sent:
        await ws.send_text(text)
        client.last_seq = seq
    for text in await service.pickups([key for _, _, key in sent if key is not None]):
        await ws.send_text(text)
    windows = sum(1 for (_, late), _, _ in sent if not late)
    await ws.send_text(dumps({"type": "resumed", "after": after, "windows": windows, "late": len(sent) - windows,
                              "through": client.last_seq[0]}))


async def _resume_requests(ws: WebSocket, client) -> None:
    """`{"type": "resume", "after": ...}` from the console: queued so the sender handles it in order."""
    while True:
        try:
            message = json.loads(await ws.receive_text())
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("type") == "resume":
            try:
                client.queue.put_nowait(("resume", message.get("after")))
            except asyncio.QueueFull:
                client.dropped.set()
