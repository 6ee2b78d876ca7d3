"""Wall-clock time in epoch nanoseconds, in one place so tests can move it."""

import time


def now_ns() -> int:
    return time.time_ns()
