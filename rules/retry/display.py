"""Overlaps as people read them: decimals rounded half up, for reasons and reports only.

Rules never see these strings. When two different exact values would print the same at the
configured decimals, more decimals are shown until they differ (then the fractions), so a
sentence never says "0.33 is above 0.33".
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import floor


def show(value: Fraction, decimals: int = 2) -> str:
    """0.33, 0.5, 1, 0: rounded half up, trailing zeros dropped."""
    scaled = floor(value * 10**decimals + Fraction(1, 2))
    whole, part = divmod(scaled, 10**decimals)
    if decimals == 0 or part == 0:
        return str(whole)
    return f"{whole}.{str(part).rjust(decimals, '0').rstrip('0')}"


def show_pair(a: Fraction, b: Fraction, decimals: int = 2) -> tuple[str, str]:
    """Both values, printed so that different values never look equal."""
    for d in range(decimals, decimals + 5):
        sa, sb = show(a, d), show(b, d)
        if a == b or sa != sb:
            return sa, sb
    return f"{a.numerator}/{a.denominator}", f"{b.numerator}/{b.denominator}"


def as_fraction(number) -> Fraction | None:
    """A verdict file's number back as the exact fraction it stands for.

    Verdict numbers are the nearest binary numbers to fractions whose denominators stay far
    below 10⁷ (unions of word sets, and twice their products for an even median), and such a
    fraction is the only one with a denominator up to 10⁷ that close to its binary number.
    A value rounded for display (0.33) comes back as that decimal (33/100).
    """
    if number is None or isinstance(number, bool) or not isinstance(number, (int, float)):
        return None
    return _nearest(number)


@lru_cache(maxsize=1 << 16)
def _nearest(number: int | float) -> Fraction:
    """A verdict file repeats its numbers (a surface's baseline on each of its rows): each is worked out once."""
    return Fraction(number).limit_denominator(10**7)
