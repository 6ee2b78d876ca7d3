"""Twitch: a channel's chat through twitchio 3 (EventSub over WebSocket, `channel.chat.message`).

The client logs in with the application's id and secret (an app token), takes the user token the
feed reads chat as (scope `user:read:chat`), looks the channel up by its login name and
subscribes its EventSub socket to the channel's chat. twitchio holds the socket: after a drop it
connects again (its own backoff, with jitter) and subscribes again, and a `session_reconnect` from
Twitch is followed to the new address; each new session after the first counts as a reconnect.
If the socket stays closed (`SOCKET_GIVE_UP_S` without a new session), the feed starts the client
again, after its own pause. With `--endpoint` the library's Helix, id and EventSub addresses
(`twitchio.http.Route.BASE`, `Route.ID_BASE`, `twitchio.eventsub.websockets.WSS`) point there instead.

EventSub delivers at least once: a redelivered notification keeps the chat message's
`message_id`, so its line has the same `msg_id` (`twitch:<message_id>`) and is a duplicate. Twitch
keeps nothing for a socket that was away: lines sent while the feed was disconnected are not
delivered again (docs/feeds.md says so). Cheers are bits, priced by the rate table's `twitch_bit`.

Credentials (environment or `--credentials FILE`): `TWITCH_CLIENT_ID`, `TWITCH_CLIENT_SECRET`,
`TWITCH_USER_TOKEN` and `TWITCH_REFRESH_TOKEN` (the user token's refresh token, which twitchio uses
when the token expires). twitchio neither loads nor saves tokens to a file here.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from decimal import Decimal
from typing import Callable

from live.feeds.line import Donation, Message

CREDENTIALS = ("TWITCH_CLIENT_ID", "TWITCH_CLIENT_SECRET", "TWITCH_USER_TOKEN", "TWITCH_REFRESH_TOKEN")
SOCKET_GIVE_UP_S = 30.0
"""A closed EventSub socket with no new session after this long: the feed starts the client again."""


class TwitchError(RuntimeError):
    pass


def point_at(endpoint: str | None) -> None:
    """Send the library's requests to `endpoint` (scheme://host:port) instead of Twitch's hosts."""
    if not endpoint:
        return
    from twitchio import http as tio_http
    from twitchio.eventsub import websockets as tio_ws

    base = endpoint.rstrip("/")
    tio_http.Route.BASE = f"{base}/helix/"
    tio_http.Route.ID_BASE = f"{base}/"
    tio_ws.WSS = "ws" + base.removeprefix("http") + "/ws"


def message_of(payload) -> Message:
    """A twitchio `ChatMessage` (channel.chat.message)."""
    bits = payload.cheer.bits if payload.cheer is not None else 0
    donation = Donation(Decimal(bits), unit="twitch_bit", label="bits") if bits else None
    sent = payload.timestamp or datetime.now(timezone.utc)  # the notification's message_timestamp
    return Message("twitch", payload.id, payload.chatter.id, sent, payload.text, donation)


class TwitchSource:
    platform = "twitch"

    def __init__(self, channel: str, credentials: dict[str, str], endpoint: str | None = None):
        missing = [k for k in CREDENTIALS if not credentials.get(k)]
        if missing:
            raise TwitchError(f"twitch needs {', '.join(missing)} (environment or --credentials FILE; see docs/feeds.md)")
        self.channel = channel.lower()
        self.credentials = credentials
        self.endpoint = endpoint

    async def run(self, take: Callable[[Message], None], reconnected: Callable[[], None], skipped: Callable[[], None]) -> None:
        import twitchio
        from twitchio import eventsub

        point_at(self.endpoint)
        sessions = 0
        gone = asyncio.Event()
        closed_at_session: list[int] = []

        class FeedClient(twitchio.Client):
            async def event_message(self, payload) -> None:
                take(message_of(payload))

            async def event_websocket_welcome(self, payload) -> None:
                nonlocal sessions
                sessions += 1
                if sessions > 1:
                    reconnected()

            async def event_websocket_closed(self, payload) -> None:
                closed_at_session.append(sessions)
                await asyncio.sleep(SOCKET_GIVE_UP_S)
                if sessions == closed_at_session[-1]:  # no new session since: twitchio has not got back
                    gone.set()

        c = self.credentials
        client = FeedClient(client_id=c["TWITCH_CLIENT_ID"], client_secret=c["TWITCH_CLIENT_SECRET"])
        try:
            await client.login(load_tokens=False, save_tokens=False)
            validated = await client.add_token(c["TWITCH_USER_TOKEN"], c["TWITCH_REFRESH_TOKEN"])
            users = await client.fetch_users(logins=[self.channel])
            if not users:
                raise TwitchError(f"no Twitch channel named {self.channel}")
            await client.subscribe_websocket(
                eventsub.ChatMessageSubscription(broadcaster_user_id=users[0].id, user_id=validated.user_id),
                token_for=validated.user_id)
            await gone.wait()
        finally:
            await client.close()
