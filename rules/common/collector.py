"""Holding Python's cycle collector while plain containers are made by the hundred thousand."""

from __future__ import annotations

import functools
import gc
import inspect
from contextlib import contextmanager
from typing import Callable, Iterator


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


def collector_held(fn: Callable) -> Callable:
    """`fn` (a function, or a generator function, kept one) run with the collector held as
    `cycle_collection_paused` holds it; the signature is `fn`'s, for frameworks that read it."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def held_generator(*args, **kwargs):
            with cycle_collection_paused():
                yield from fn(*args, **kwargs)

        return held_generator

    @functools.wraps(fn)
    def held(*args, **kwargs):
        with cycle_collection_paused():
            return fn(*args, **kwargs)

    return held
