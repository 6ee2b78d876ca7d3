"""Chzzk (NAVER): the chat socket a channel's viewers read, spoken directly (an adapter, no client library).

The maintained client, chzzkpy, pins every one of its dependencies to an exact version (aiohttp,
pydantic, attrs …, older than the project's), so installing it would move the whole project
back; its chat host is also written into the code, so it cannot be pointed at a local server.
This module speaks the same protocol with the `websockets` library the project already uses:

1. `GET {api}/polling/v2/channels/{channel}/live-status` → `content.chatChannelId`;
2. `GET {game}/nng_main/v1/chats/access-token?channelId=…&chatType=STREAMING` → `content.accessToken`;
3. the socket `wss://kr-ss{n}.chat.naver.com/chat` (n from the chat channel id, as the web player picks it):
   `cmd 100` (connect, read-only) → `10100` with the session id; chat arrives as `93101`, donations as
   `93102`; the server's ping (`0`) is answered with a pong (`10000`).

Resume: after a reconnect the feed asks for the recent chat (`cmd 5101`, up to `RECENT` lines; `15101`
answers), so lines sent while it was away come in, and those it already had are duplicates.
Chzzk gives a chat line no id of its own: the id is `{chat channel}:{sender}:{msgTime}` (the sender's
hash and the server's millisecond time), which a redelivered or recent-chat copy shares.
Donations are in cheese (1 cheese = 1 won, the rate table's `chzzk_cheese`).

Credentials: none to read a public channel; an age-restricted one needs a signed-in NAVER session,
`CHZZK_NID_AUT` and `CHZZK_NID_SES` (cookie values), sent only to NAVER's hosts.
"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Callable

import httpx
import websockets

from live.feeds.line import Donation, Message, from_millis

API = "https://api.chzzk.naver.com"
GAME = "https://comm-api.game.naver.com"
RECENT = 50
"""Recent lines asked for after a reconnect (the most the web player asks for)."""
IDLE_PING_S = 20.0

PING, PONG, CONNECT, CONNECTED, REQUEST_RECENT, RECENT_CHAT, CHAT, DONATION = 0, 10000, 100, 10100, 5101, 15101, 93101, 93102
TEXT, DONATION_TYPE = 1, 10
"""Message type codes that carry a chat line: text and donation (others: stickers, subscriptions, notices)."""
CREDENTIALS = ("CHZZK_NID_AUT", "CHZZK_NID_SES")


class ChzzkError(RuntimeError):
    pass


def chat_server(chat_channel_id: str) -> str:
    return f"wss://kr-ss{abs(sum(ord(c) for c in chat_channel_id)) % 9 + 1}.chat.naver.com/chat"


def message_of(raw: dict, chat_channel_id: str) -> Message | None:
    """One chat or donation of a `93101`/`93102` body, or of a recent-chat list (`15101`, longer keys); None: not a chat line."""
    kind = raw.get("msgTypeCode", raw.get("messageTypeCode"))
    uid = raw.get("uid", raw.get("userId"))
    body = raw.get("msg", raw.get("content"))
    ms = raw.get("msgTime", raw.get("messageTime"))
    if kind not in (TEXT, DONATION_TYPE) or uid is None or ms is None or not isinstance(body, str):
        return None
    donation = None
    if kind == DONATION_TYPE:
        extras = raw.get("extras")
        if isinstance(extras, str):
            try:
                extras = json.loads(extras)
            except ValueError:
                extras = {}
        amount = (extras or {}).get("payAmount") or 0
        if amount:
            donation = Donation(Decimal(str(amount)), unit="chzzk_cheese", label="치즈")
    return Message("chzzk", f"{chat_channel_id}:{uid}:{ms}", str(uid), from_millis(ms), body, donation)


def messages_of(frame: dict, chat_channel_id: str) -> tuple[list[Message], int] | None:
    """The chat lines of a socket frame and how many of its entries were not chat lines; None: not a chat frame."""
    cmd = frame.get("cmd")
    body = frame.get("bdy")
    if cmd == RECENT_CHAT:
        entries = (body or {}).get("messageList") or []
    elif cmd in (CHAT, DONATION):
        entries = body if isinstance(body, list) else [body]
    else:
        return None
    out = [m for m in (message_of(e, chat_channel_id) for e in entries if isinstance(e, dict)) if m is not None]
    return out, len(entries) - len(out)


class ChzzkSource:
    platform = "chzzk"

    def __init__(self, channel: str, credentials: dict[str, str], endpoint: str | None = None):
        self.channel = channel
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        cookies = {k.removeprefix("CHZZK_"): v for k, v in credentials.items() if k in CREDENTIALS and v}
        self.cookies = cookies if len(cookies) == 2 else {}
        self.connections = 0

    def urls(self, chat_channel_id: str | None = None) -> tuple[str, str, str | None]:
        if self.endpoint:
            ws = "ws" + self.endpoint.removeprefix("http") + "/chat"
            return self.endpoint, self.endpoint, ws
        return API, GAME, chat_server(chat_channel_id) if chat_channel_id else None

    async def _lookup(self) -> tuple[str, str]:
        api, game, _ = self.urls()
        async with httpx.AsyncClient(cookies=self.cookies, timeout=10, headers={"User-Agent": "Mozilla/5.0"}) as http:
            status = (await http.get(f"{api}/polling/v2/channels/{self.channel}/live-status")).json()
            chat_channel_id = ((status or {}).get("content") or {}).get("chatChannelId")
            if not chat_channel_id:
                raise ChzzkError(f"channel {self.channel} has no chat channel (not live, or age-restricted without "
                                 f"{' and '.join(CREDENTIALS)})")
            token = (await http.get(f"{game}/nng_main/v1/chats/access-token",
                                    params={"channelId": chat_channel_id, "chatType": "STREAMING"})).json()
            access = ((token or {}).get("content") or {}).get("accessToken")
            if not access:
                raise ChzzkError(f"no chat access token for channel {self.channel}: {(token or {}).get('message')}")
        return chat_channel_id, access

    async def run(self, take: Callable[[Message], None], reconnected: Callable[[], None], skipped: Callable[[], None]) -> None:
        chat_channel_id, access = await self._lookup()
        resume = self.connections > 0
        self.connections += 1
        url = self.urls(chat_channel_id)[2]
        common = {"ver": "2", "svcid": "game", "cid": chat_channel_id}
        async with websockets.connect(url, ping_interval=None, max_size=None, open_timeout=10) as ws:
            await ws.send(json.dumps({**common, "cmd": CONNECT, "tid": 1,
                                      "bdy": {"uid": None, "devType": 2001, "accTkn": access, "auth": "READ"}}))
            sid = None
            while True:
                try:
                    text = await asyncio.wait_for(ws.recv(), IDLE_PING_S)
                except asyncio.TimeoutError:
                    await ws.send(json.dumps({"ver": "2", "cmd": PING}))
                    continue
                frame = json.loads(text)
                cmd = frame.get("cmd")
                if cmd == CONNECTED:
                    if frame.get("retCode", 0) != 0:
                        raise ChzzkError(f"chat connect refused: {frame.get('retCode')} {frame.get('retMsg')}")
                    sid = (frame.get("bdy") or {}).get("sid")
                    if resume:  # what came while the feed was away: the recent chat, its copies are duplicates
                        await ws.send(json.dumps({**common, "cmd": REQUEST_RECENT, "tid": 2, "sid": sid,
                                                  "bdy": {"recentMessageCount": RECENT}}))
                    continue
                if cmd == PING:
                    await ws.send(json.dumps({"ver": "2", "cmd": PONG}))
                    continue
                got = messages_of(frame, chat_channel_id)
                if got is None:
                    continue
                lines, others = got
                for m in lines:
                    take(m)
                for _ in range(others):
                    skipped()
