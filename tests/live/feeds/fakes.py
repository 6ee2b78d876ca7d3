"""Local stand-ins for Chzzk, YouTube Live and Twitch that speak each platform's protocol on a
loopback port and play a recorded broadcast (`frames/<platform>.json`), re-timed to now.

Each recording is a list of connections: what the platform sends on each (chat lines, a donation,
a redelivered line) and how the connection ends (`drop`: closed with no goodbye; `hold`: kept open
with keep-alives until the test ends). Every server runs in a thread of its own with its own loop.
"""

from __future__ import annotations

import asyncio
import copy
import json
import socket
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from aiohttp import WSMsgType, web

FRAMES = Path(__file__).with_name("frames")
GAP_S = 0.15
"""Between two recorded frames."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recording(platform: str) -> dict:
    return json.loads((FRAMES / f"{platform}.json").read_text(encoding="utf-8"))


class FakeServer:
    """An aiohttp application on 127.0.0.1 in a background thread; `requests` logs what clients asked for."""

    def __init__(self):
        self.port = free_port()
        self.requests: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.runner = None
        self.shift_ms = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def app(self) -> web.Application:
        raise NotImplementedError

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def start():
            self.runner = web.AppRunner(self.app(), handle_signals=False)
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

        self.loop.run_until_complete(start())
        self.started.set()
        self.loop.run_forever()

    def start(self) -> "FakeServer":
        self.thread.start()
        self.started.wait(10)
        return self

    def stop(self) -> None:
        async def down():
            await self.runner.cleanup()

        asyncio.run_coroutine_threadsafe(down(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def now_ms(self, recorded_ms: int) -> int:
        """A recorded time moved so that the recording's first line is now."""
        return int(recorded_ms) + self.shift_ms

    def retime(self, first_recorded_ms: int) -> None:
        self.shift_ms = int(time.time() * 1000) - int(first_recorded_ms)


def drop(ws_or_request) -> None:
    """End the connection the way a network failure does: no close frame, no response."""
    transport = ws_or_request.transport if hasattr(ws_or_request, "transport") else None
    if transport is None and hasattr(ws_or_request, "_req"):
        transport = ws_or_request._req.transport
    transport.abort()


# -- Chzzk ------------------------------------------------------------------------------------------
class FakeChzzk(FakeServer):
    """`/polling/v2/channels/{id}/live-status`, `/nng_main/v1/chats/access-token` and the chat socket `/chat`."""

    CHAT_CHANNEL = "N1abcD"

    def __init__(self, channel: str = "c0ffee0000000000000000000000beef"):
        super().__init__()
        self.channel = channel
        self.script = recording("chzzk")
        self.connections = 0
        self.recent_asked = 0

    def _timed(self, entry: dict) -> dict:
        e = copy.deepcopy(entry)
        for k in ("msgTime", "ctime", "utime", "messageTime", "createTime", "updateTime"):
            if k in e:
                e[k] = self.now_ms(e[k])
        return e

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/polling/v2/channels/{channel}/live-status", self.live_status)
        app.router.add_get("/nng_main/v1/chats/access-token", self.access_token)
        app.router.add_get("/chat", self.chat)
        return app

    async def live_status(self, request):
        self.requests.append(f"live-status {request.match_info['channel']}")
        if request.match_info["channel"] != self.channel:
            return web.json_response({"code": 200, "message": None, "content": None})
        return web.json_response({"code": 200, "message": None, "content": {
            "liveTitle": "방송", "status": "OPEN", "chatChannelId": self.CHAT_CHANNEL, "adult": False}})

    async def access_token(self, request):
        self.requests.append(f"access-token {request.query.get('channelId')}")
        return web.json_response({"code": 200, "message": None, "content": {
            "accessToken": "acc-token-not-secret", "temporaryRestrict": {"temporaryRestrict": False}, "realNameAuth": False,
            "extraToken": "extra"}})

    async def chat(self, request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        plan = self.script["connections"][min(self.connections, len(self.script["connections"]) - 1)]
        if self.connections == 0:
            self.retime(self.script["first_msg_time"])
        self.connections += 1
        hello = json.loads((await ws.receive()).data)
        assert hello["cmd"] == 100 and hello["cid"] == self.CHAT_CHANNEL and hello["bdy"]["auth"] == "READ", hello
        await ws.send_json({"svcid": "game", "ver": "2", "cmd": 10100, "retCode": 0, "retMsg": "SUCCESS",
                            "tid": hello.get("tid"), "cid": self.CHAT_CHANNEL, "bdy": {"uid": None, "sid": f"sid-{self.connections}"}})
        if self.connections > 1:  # a client that resumes asks for the recent chat first
            ask = json.loads((await asyncio.wait_for(ws.receive(), 10)).data)
            assert ask["cmd"] == 5101, ask
            self.recent_asked += 1
            recent = [self._timed(e) for e in plan.get("recent", [])]
            await ws.send_json({"svcid": "game", "ver": "2", "cmd": 15101, "retCode": 0, "tid": ask.get("tid"),
                                "cid": self.CHAT_CHANNEL, "bdy": {"messageList": recent, "userCount": 3, "notice": None}})
        await ws.send_json({"ver": "2", "cmd": 0})  # the server's ping; a client answers with a pong
        for frame in plan["frames"]:
            await asyncio.sleep(GAP_S)
            body = [self._timed(e) for e in frame["bdy"]]
            await ws.send_json({"svcid": "game", "ver": "2", "cmd": frame["cmd"], "tid": None, "cid": self.CHAT_CHANNEL, "bdy": body})
        if plan["then"] == "drop":
            await asyncio.sleep(GAP_S)
            drop(request)
            return ws
        while not ws.closed:  # hold: read pongs, ping now and then
            try:
                msg = await asyncio.wait_for(ws.receive(), 5)
            except asyncio.TimeoutError:
                await ws.send_json({"ver": "2", "cmd": 0})
                continue
            if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSED, WSMsgType.ERROR):
                break
            self.requests.append(f"chat-socket {msg.data}")
        return ws


# -- YouTube -----------------------------------------------------------------------------------------
class FakeYouTube(FakeServer):
    """`/embed/{video}` (the channel id on the embed page) and the `get_live_chat` continuation feed."""

    CHANNEL_ID = "UCfakechannel00000000000"

    def __init__(self, video: str = "abcdefghijk"):
        super().__init__()
        self.video = video
        self.script = recording("youtube")
        self.polls: list[str | None] = []
        self.dropped: set[int] = set()
        self.failed: set[int] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/embed/{video}", self.embed)
        app.router.add_post("/youtubei/v1/live_chat/get_live_chat", self.live_chat)
        return app

    async def embed(self, request):
        self.requests.append(f"embed {request.match_info['video']}")
        page = '<script>var ytcfg = {"PLAYER_VARS": "{\\"channelId\\":\\"' + self.CHANNEL_ID + '\\",\\"videoId\\":\\"' + self.video + '\\"}"};</script>'
        return web.Response(text=page, content_type="text/html")

    def _item(self, item: dict) -> dict:
        item = copy.deepcopy(item)
        renderer = next(iter(item.values()))
        renderer["timestampUsec"] = str(self.now_ms(int(renderer["timestampUsec"]) // 1000) * 1000 + int(renderer["timestampUsec"]) % 1000)
        return {"addChatItemAction": {"item": item, "clientId": "x"}}

    async def live_chat(self, request):
        body = await request.json()
        token = body.get("continuation")
        if not self.polls:
            self.retime(self.script["first_timestamp_usec"] // 1000)
        self.polls.append(token)
        n = int(token[1:]) if isinstance(token, str) and token.startswith("c") and token[1:].isdigit() else 0
        pages = self.script["pages"]
        page = pages[n] if n < len(pages) else {"actions": []}
        if page.get("before") == "drop" and n not in self.dropped:  # the library asks again with the same token
            self.dropped.add(n)
            drop(request)
            return web.Response()
        if page.get("before") == "fail" and n not in self.failed:  # the library gives up; the feed resumes from c{n}
            self.failed.add(n)
            return web.json_response({"responseContext": {"errors": {"error": [{"code": "UNAVAILABLE"}]}}})
        nxt = f"c{min(n + 1, len(pages))}"
        return web.json_response({
            "responseContext": {"visitorData": "fake-visitor"},
            "continuationContents": {"liveChatContinuation": {
                "continuations": [{"invalidationContinuationData": {"continuation": nxt, "timeoutMs": 300}}],
                "actions": [self._item(i) for i in page["actions"]]}}})


# -- Twitch ------------------------------------------------------------------------------------------
class FakeTwitch(FakeServer):
    """The id service (`/oauth2/token`, `/oauth2/validate`), Helix (`/helix/users`, `/helix/eventsub/subscriptions`)
    and the EventSub socket (`/ws`)."""

    APP_TOKEN, USER_TOKEN = "app-token-not-secret", "user-token-not-secret"
    READER_ID, BROADCASTER_ID = "1001", "2002"

    def __init__(self, login: str = "fakestreamer"):
        super().__init__()
        self.login = login
        self.script = recording("twitch")
        self.sessions: dict[str, asyncio.Event] = {}
        self.connections = 0
        self.subscriptions: list[dict] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/oauth2/token", self.token)
        app.router.add_get("/oauth2/validate", self.validate)
        app.router.add_get("/helix/users", self.users)
        app.router.add_post("/helix/eventsub/subscriptions", self.subscribe)
        app.router.add_get("/ws", self.socket)
        return app

    async def token(self, request):
        self.requests.append("token")
        return web.json_response({"access_token": self.APP_TOKEN, "expires_in": 5_000_000, "token_type": "bearer"})

    async def validate(self, request):
        token = request.headers.get("Authorization", "").removeprefix("OAuth ").removeprefix("Bearer ").strip()  # twitchio sends Bearer
        self.requests.append("validate")
        if token == self.APP_TOKEN:
            return web.json_response({"client_id": "fake-client", "scopes": [], "expires_in": 5_000_000})
        if token == self.USER_TOKEN:
            return web.json_response({"client_id": "fake-client", "login": "feedreader", "scopes": ["user:read:chat"],
                                      "user_id": self.READER_ID, "expires_in": 14_000})
        return web.json_response({"status": 401, "message": "invalid access token"}, status=401)

    async def users(self, request):
        self.requests.append(f"users {request.query.get('login')}")
        if request.query.get("login") != self.login:
            return web.json_response({"data": []})
        return web.json_response({"data": [{
            "id": self.BROADCASTER_ID, "login": self.login, "display_name": self.login, "type": "", "broadcaster_type": "",
            "description": "", "profile_image_url": "https://example.invalid/p.png", "offline_image_url": "",
            "view_count": 0, "created_at": "2020-01-01T00:00:00Z"}]})

    async def subscribe(self, request):
        body = await request.json()
        self.subscriptions.append(body)
        session = body["transport"]["session_id"]
        assert body["type"] == "channel.chat.message" and body["condition"] == {
            "broadcaster_user_id": self.BROADCASTER_ID, "user_id": self.READER_ID}, body
        if session in self.sessions:
            self.sessions[session].set()
        sub = {"id": f"sub-{len(self.subscriptions)}", "status": "enabled", "type": body["type"], "version": body["version"],
               "condition": body["condition"], "transport": {"method": "websocket", "session_id": session},
               "created_at": _iso(time.time() * 1000), "cost": 0}
        return web.json_response({"data": [sub], "total": 1, "total_cost": 0, "max_total_cost": 10}, status=202)

    def _notification(self, note: dict, session: str) -> dict:
        note = copy.deepcopy(note)
        at = _iso(self.now_ms(note.pop("at_ms")))
        event = note["event"]
        event.setdefault("broadcaster_user_id", self.BROADCASTER_ID)
        event.setdefault("broadcaster_user_login", self.login)
        event.setdefault("broadcaster_user_name", self.login)
        return {"metadata": {"message_id": note["delivery_id"], "message_type": "notification", "message_timestamp": at,
                             "subscription_type": "channel.chat.message", "subscription_version": "1"},
                "payload": {"subscription": {"id": "sub", "status": "enabled", "type": "channel.chat.message", "version": "1",
                                             "condition": {"broadcaster_user_id": self.BROADCASTER_ID, "user_id": self.READER_ID},
                                             "transport": {"method": "websocket", "session_id": session},
                                             "created_at": at, "cost": 0},
                            "event": event}}

    async def socket(self, request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        plan = self.script["connections"][min(self.connections, len(self.script["connections"]) - 1)]
        if self.connections == 0:
            self.retime(self.script["first_timestamp_ms"])
        self.connections += 1
        session = f"session-{self.connections}"
        subscribed = self.sessions[session] = asyncio.Event()
        await ws.send_json({"metadata": {"message_id": f"welcome-{self.connections}", "message_type": "session_welcome",
                                         "message_timestamp": _iso(time.time() * 1000)},
                            "payload": {"session": {"id": session, "status": "connected", "connected_at": _iso(time.time() * 1000),
                                                    "keepalive_timeout_seconds": 10, "reconnect_url": None, "recovery_url": None}}})
        await asyncio.wait_for(subscribed.wait(), 20)
        for note in plan["notifications"]:
            await asyncio.sleep(GAP_S)
            await ws.send_json(self._notification(note, session))
        if plan["then"] == "drop":
            await asyncio.sleep(GAP_S)
            drop(request)
            return ws
        while not ws.closed:
            try:
                await asyncio.wait_for(ws.receive(), 5)
            except asyncio.TimeoutError:
                await ws.send_json({"metadata": {"message_id": f"keepalive-{time.time()}", "message_type": "session_keepalive",
                                                 "message_timestamp": _iso(time.time() * 1000)}, "payload": {}})
                continue
        return ws


def _iso(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


FAKES = {"chzzk": FakeChzzk, "youtube": FakeYouTube, "twitch": FakeTwitch}
