"""One platform chat message, as each platform module reads it, and the `live_chat` line made from it.

Every platform gives the same few facts: its own message id, the sender's id, when the message
was sent, the text, and a donation (an amount in some currency or platform unit) or none. The
line keeps them platform-qualified (`chzzk:…`, `youtube:…`, `twitch:…`), so ids from two
platforms never meet and a redelivered message has the same `msg_id` as the first copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

from live.feeds.question import is_question
from live.feeds.rates import DonationRates

PLATFORMS = ("chzzk", "youtube", "twitch")


@dataclass(frozen=True)
class Donation:
    amount: Decimal
    """In `currency`, or in platform units (`unit`: e.g. 100 bits)."""
    currency: str | None = None
    unit: str | None = None
    """A key of the rate table's `units` (`chzzk_cheese`, `twitch_bit`) when the amount is not money."""
    label: str = ""
    """What the platform calls it, for the note: "치즈", "Super Chat", "bits"."""


@dataclass(frozen=True)
class Message:
    platform: str
    message_id: str
    viewer_id: str
    sent_at: datetime
    """Aware; from the platform's own timestamp (UTC or any zone)."""
    body: str
    donation: Donation | None = None

    @property
    def msg_id(self) -> str:
        return f"{self.platform}:{self.message_id}"


NO_RATE = "no rate for"
"""Begins the reason in the note of a donation the rate table cannot price (the feed counts these)."""


def to_won(donation: Donation, rates: DonationRates) -> tuple[int, str]:
    """Whole won and the note that keeps the original amount; 0 won with the reason when unpriced."""
    if donation.unit:
        currency, per_unit = rates.unit_won(donation.unit)
        amount = donation.amount * per_unit
        original = f"{donation.amount:f} {donation.label or donation.unit}"
    else:
        currency, amount = (donation.currency or "").upper(), donation.amount
        original = f"{donation.label + ' ' if donation.label else ''}{donation.amount:f} {currency}".strip()
    won = rates.to_won(currency, amount) if currency else None
    if won is None:
        return 0, f"{original}: {NO_RATE} {currency or 'an unnamed currency'} in the donation rate table, counted as 0원"
    if currency == "KRW" and not donation.unit:
        return won, original
    return won, f"{original} = {won:,}원 ({currency} {rates.currencies[currency]:f}원)"


def live_chat_line(message: Message, character_id: str, rates: DonationRates, tz: str) -> dict:
    """The `live_chat` row: sent_at in `tz` with its offset, the body as written, tags left to the tagger."""
    when = message.sent_at if message.sent_at.tzinfo else message.sent_at.replace(tzinfo=timezone.utc)
    won, note = (0, None) if message.donation is None else to_won(message.donation, rates)
    return {
        "msg_id": message.msg_id,
        "character_id": character_id,
        "viewer_id": f"{message.platform}:{message.viewer_id}",
        "sent_at": when.astimezone(ZoneInfo(tz)).isoformat(timespec="milliseconds"),
        "body": message.body,
        "topic_tags": None,
        "donation_amount": won,
        "is_question": is_question(message.body),
        "note": note,
    }


def unpriced(line: dict) -> bool:
    return bool(line["note"]) and f": {NO_RATE} " in line["note"]


def line_text(line: dict) -> str:
    return json.dumps(line, ensure_ascii=False)


def from_millis(ms: int | str) -> datetime:
    return datetime.fromtimestamp(int(ms) / 1000, tz=timezone.utc)
