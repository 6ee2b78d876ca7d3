"""Holding Python's cycle collector while plain containers are made by the hundred thousand."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Hold the cycle collector while a block makes a dict or list per row (or per line read).

    Those containers hold plain values and form no cycles (reference counting frees them), but
    each hundred thousand of them set off collections that walk every live container again:
    about half the time of building a frame's records. The collector's state is restored after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
