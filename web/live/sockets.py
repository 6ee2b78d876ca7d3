"""The two sockets: `/ws/ingest` (chat in; acks, quarantine notices and errors back) and
`/ws/windows` (frames out, numbered; resumable with `after_seq` or `after`)."""

from __future__ import annotations

import asyncio
import json
import re

from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from web.live.clients import BEHIND
from web.live.frames import lines_of
from web.live.outbox import Outbox
from web.live.intake import Origin
from web.live.publishing import dumps
from web.live.service import LiveService
from web.security import token_ok

TOO_BIG = 1009
POLICY = 1008
NOT_STORED = 1011
TRY_LATER = 1013


async def refuse(ws: WebSocket, reason: str, status: int = 403) -> None:
    """Refuse the handshake with an HTTP status saying why (or close with 1008 where the server can't)."""
    try:
        await ws.send_denial_response(PlainTextResponse(reason, status_code=status))
    except RuntimeError:
        await ws.close(code=POLICY, reason=reason)


def service_of(ws: WebSocket) -> LiveService:
    return ws.app.state.live


SENDER = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""A client's own id (`?sender=`): it names the client's frames in the store."""


async def ingest(ws: WebSocket) -> None:
    """Chat in. Each frame is one line, or one per element of a JSON array (`frames.lines_of`); the
    sender is told `ack` through frame N once frame N and every one before it are stored, the lines
    quarantined (`quarantined`), and `error` for a frame that could not be stored (then the socket
    closes: the client connects again and sends the unacknowledged frames). A client that names
    itself (`?sender=ID&next=N`, N the number of its next frame) numbers its frames across
    reconnections: a frame it sends again that was stored already is acknowledged, not stored twice."""
    service = service_of(ws)
    config = service.config
    if not token_ok(ws, config.token):
        await refuse(ws, "a valid token is required (Authorization: Bearer, X-Verdicts-Token, ?token= or the session cookie)")
        return
    sender = ws.query_params.get("sender")
    if sender is not None and not SENDER.fullmatch(sender):
        await refuse(ws, "sender must be 1 to 128 of A-Z a-z 0-9 . _ : -")
        return
    try:
        first = int(ws.query_params.get("next", "1"))
    except ValueError:
        first = 0
    if not 1 <= first <= 2**62:
        await refuse(ws, "next must be a frame number from 1")
        return
    await ws.accept()
    origin = Origin(outbox=Outbox(config.notice_limit), sender=sender)
    teller = asyncio.create_task(_tell(ws, origin.outbox))
    frame_no = first - 1
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            frame_no += 1
            size = len(message["text"].encode("utf-8")) if message.get("text") is not None else len(message.get("bytes") or b"")
            if size > config.max_frame_bytes:  # where the server took it whole (the protocol layer refuses it first)
                await ws.close(code=TOO_BIG, reason=f"frame {frame_no} is {size} bytes, over the {config.max_frame_bytes}-byte limit")
                break
            origin.received += 1
            await service.inbox.put((origin, frame_no, lines_of(message, config.max_frame_lines)))
            if origin.failed:
                break
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        origin.closed = True
        if origin.failed or teller.done():
            await asyncio.gather(teller, return_exceptions=True)
        else:
            await asyncio.sleep(0)
            teller.cancel()


async def _tell(ws: WebSocket, outbox) -> None:
    """The sender's side of an ingest socket: what its outbox holds, in order; after an error, close."""
    try:
        while True:
            await outbox.wait()
            for message in outbox.take():
                await ws.send_text(dumps(message))
                if message["type"] == "error":
                    await ws.close(code=NOT_STORED, reason=f"frame {message['frame']} was not stored; send it again")
                    return
    except (WebSocketDisconnect, RuntimeError, asyncio.CancelledError):
        return


async def windows(ws: WebSocket) -> None:
    """Windows out. A console is sent history first (`LiveService.history`: after `after_seq` of
    `epoch`, after the window `after`, or the newest), then `resumed` with the number it holds, then
    every frame as it goes out, each once, in number order; `tick` frames carry the newest number."""
    service = service_of(ws)
    config = service.config
    if not token_ok(ws, config.token):
        await refuse(ws, "a valid token is required (Authorization: Bearer, X-Verdicts-Token, ?token= or the session cookie)")
        return
    client = service.join()
    if client is None:
        await refuse(ws, f"{config.max_consoles} consoles are connected already", status=503)
        return
    try:
        await ws.accept()
    except Exception:
        service.leave(client)
        raise
    receiver = asyncio.create_task(_resume_requests(ws, client))
    try:
        await _send_history(ws, service, client, dict(ws.query_params))
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
                if seq == "resume":  # what it asks for, whatever this socket was sent before
                    await _send_history(ws, service, client, text)
                    continue
                if seq is not None:
                    if seq <= client.last_seq:
                        continue  # sent as history already
                    client.last_seq = seq
                await ws.send_text(text)
            finally:
                client.queue.task_done()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        receiver.cancel()
        service.leave(client)


def _number(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    return None


async def _send_history(ws: WebSocket, service: LiveService, client, asked: dict) -> None:
    through = service.history_through()
    after_seq = _number(asked.get("after_seq")) if asked.get("after_seq") is not None else None
    if asked.get("after_seq") is not None and after_seq is None:
        after_seq = -1  # not a frame number: too old
    epoch = _number(asked.get("epoch"))
    after = asked.get("after") if isinstance(asked.get("after"), str) else None
    frames, told = await service.history(through, after_seq, epoch, after)
    mine = service.epoch
    if "too_old" in told:
        await ws.send_text(dumps({"type": "too_old", "epoch": mine, "through": through, "reason": told["too_old"]}))
    for data in frames:
        await ws.send_text(data.decode())
    client.last_seq = max(client.last_seq, through)
    windows = sum(1 for d in frames if d.startswith(b'{"type":"window"'))
    await ws.send_text(dumps({"type": "resumed", "epoch": mine, "through": through, "frames": len(frames),
                              "windows": windows, "mode": told["mode"]}))


async def _resume_requests(ws: WebSocket, client) -> None:
    """`{"type": "resume", "after_seq": N, "epoch": E}` (or `"after": KEY`) from the console: queued
    so the sender handles it in order."""
    while True:
        try:
            message = json.loads(await ws.receive_text())
        except (ValueError, RecursionError):
            continue
        if isinstance(message, dict) and message.get("type") == "resume":
            try:
                client.queue.put_nowait(("resume", message))
            except asyncio.QueueFull:
                client.dropped.set()
