"""YouTube Live: a live video's chat through pytchat-ng (`LiveChatAsync`), the maintained pytchat fork.

It reads the chat the way the watch page does (the `get_live_chat` continuation feed): no API key
and no quota, unlike the Data API's `liveChatMessages`, whose quota a whole broadcast of polling
would spend. It polls with the httpx client it is given: the feed's client counts every
connection that fails (the library tries the same request again), and with `--endpoint` it sends
every request to that address instead of YouTube's (the tests' local stand-in).

Resume: the library keeps the continuation token of the next page; when it gives up, the feed
starts it again from that token (the first token is made the library's way, `liveparam.getparam`
after reading the channel id from the embed page: see `_first_continuation` for why the feed does it), so what was said meanwhile comes in (a copy of a line already
taken is a duplicate: the item id is YouTube's own, `youtube:<id>`).
Super Chat and Super Sticker amounts come in the viewer's currency and go through the rate table.

Credentials: none.
"""

from __future__ import annotations

import contextlib
import io
from datetime import datetime, timezone
from decimal import Decimal
from typing import Callable
from urllib.parse import urlsplit

import httpx

from live.feeds.line import Donation, Message

PAID = ("superChat", "superSticker")
CHAT = ("textMessage", *PAID)


def pytchat():
    """The library; it prints a greeting on import, which the feed's console does not need."""
    with contextlib.redirect_stdout(io.StringIO()):
        import pytchat as module
    return module


class CountingTransport(httpx.AsyncBaseTransport):
    """Every request through httpx's own transport; a connection that fails is counted, and with
    `endpoint` the scheme, host and port are replaced by the endpoint's (the path and query kept)."""

    def __init__(self, failed: Callable[[], None], endpoint: str | None = None):
        self.inner = httpx.AsyncHTTPTransport(http2=endpoint is None)
        self.failed = failed
        self.endpoint = urlsplit(endpoint) if endpoint else None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.endpoint is not None:
            request.url = request.url.copy_with(scheme=self.endpoint.scheme, host=self.endpoint.hostname,
                                                port=self.endpoint.port)
        try:
            return await self.inner.handle_async_request(request)
        except httpx.TransportError:
            self.failed()
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()


def message_of(chat) -> Message | None:
    """A pytchat chat item; None when it is not a chat line (a membership, a gift announcement)."""
    if chat.type not in CHAT or not chat.id:
        return None
    donation = None
    if chat.type in PAID and chat.amountValue:
        donation = Donation(Decimal(str(chat.amountValue)), currency=chat.currency or None,
                            label="Super Sticker" if chat.type == "superSticker" else "Super Chat")
    sent = datetime.fromtimestamp(chat.timestamp / 1000, tz=timezone.utc)
    return Message("youtube", chat.id, chat.author.channelId, sent, chat.message or "", donation)


class YouTubeSource:
    platform = "youtube"

    def __init__(self, channel: str, credentials: dict[str, str], endpoint: str | None = None):
        self.channel = channel  # a live video's id or URL
        self.endpoint = endpoint
        self.continuation: str | None = None

    async def _first_continuation(self, failed: Callable[[], None]) -> str:
        """The live chat's first page, found as the library finds it (the channel id on the video's embed
        page, then `liveparam`), but with a client of its own: the library would look it up with the
        client it then enters as a context manager, which httpx refuses once a request has gone through it."""
        pytchat()
        from pytchat import util
        from pytchat.paramgen import liveparam

        video = util.extract_video_id(self.channel)
        async with httpx.AsyncClient(transport=CountingTransport(failed, self.endpoint), timeout=15) as lookup:
            channel_id = await util.get_channelid_async(lookup, video)
        return liveparam.getparam(video, channel_id, past_sec=3)

    async def run(self, take: Callable[[Message], None], reconnected: Callable[[], None], skipped: Callable[[], None]) -> None:
        lib = pytchat()
        from pytchat.processors.default.processor import DefaultProcessor

        async def on_chat(data) -> None:
            for item in data.items:
                m = message_of(item)
                if m is None:
                    skipped()
                else:
                    take(m)
            self.continuation = chat.continuation or self.continuation

        if self.continuation is None:
            self.continuation = await self._first_continuation(reconnected)
        client = httpx.AsyncClient(transport=CountingTransport(reconnected, self.endpoint), timeout=15)
        chat = lib.LiveChatAsync(self.channel, processor=DefaultProcessor(), client=client, interruptable=False,
                                 direct_mode=True, callback=on_chat, done_callback=lambda task: None)
        # (its own done-callback ends a buffered reader; in direct mode there is none, so the feed awaits the task)
        chat.continuation = self.continuation  # set before its first fetch: it starts (or goes on) from that page
        try:
            await chat.listen_task  # ends when the library gives up (its error raised here) or the broadcast ends
        finally:
            if not chat.listen_task.done():
                chat.listen_task.cancel()
            await client.aclose()
