"""The donation rate table: platform amounts (cheese, bits, Super Chat currencies) in won.

`donation_rates.yaml` beside this module, validated by pydantic on load with a clear error; a
currency the table does not know leaves the line at 0 won with the reason in its note (the
feed counts it as `unpriced`), never a guessed rate.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from rules.common.config import ConfigError, Strict, load_yaml_config

DEFAULT_PATH = Path(__file__).with_name("donation_rates.yaml")


class Unit(Strict):
    currency: str
    amount: Decimal = Field(gt=0)


class DonationRates(Strict):
    rounding: Literal["half_up", "down"] = "half_up"
    currencies: dict[str, Decimal]
    units: dict[str, Unit] = {}

    @field_validator("currencies")
    @classmethod
    def _positive(cls, v: dict[str, Decimal]) -> dict[str, Decimal]:
        bad = [code for code, won in v.items() if won <= 0 or len(code) != 3 or not code.isupper()]
        if bad:
            raise ValueError(f"currency codes must be three capital letters with a positive rate in won: {bad}")
        if v.get("KRW") != 1:
            raise ValueError("KRW must be 1 (the table is in won)")
        return v

    def unit_won(self, unit: str) -> tuple[str, Decimal]:
        """(currency, amount) of one platform unit, e.g. `twitch_bit` → (USD, 0.01)."""
        u = self.units[unit]
        return u.currency, u.amount

    def to_won(self, currency: str, amount: Decimal) -> int | None:
        """Whole won for `amount` of `currency`; None when the table has no rate for it."""
        rate = self.currencies.get(currency.upper())
        if rate is None:
            return None
        mode = ROUND_HALF_UP if self.rounding == "half_up" else ROUND_DOWN
        return int((Decimal(amount) * rate).quantize(Decimal(1), rounding=mode))


@lru_cache(maxsize=4)
def load_rates(path: str | None = None) -> DonationRates:
    rates = load_yaml_config(path or DEFAULT_PATH, DonationRates)
    missing = sorted({u.currency for u in rates.units.values()} - set(rates.currencies))
    if missing:
        raise ConfigError(f"{path or DEFAULT_PATH}: units priced in currencies with no rate: {missing}")
    return rates
