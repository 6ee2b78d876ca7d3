"""Great Expectations suites validated in a helper process that warms while a step reads its data.

Importing GX costs 1.6-1.9 s of one core. A normalise step on a large day reads, gates and
stores its raw tables for several seconds before its first suite: `prepare()` at the start of
the step starts a helper process that imports GX meanwhile, on the other core, and the suites
then go to it over a socket (frames of only the columns a suite reads; the `Outcome`s back).
The helper runs the same `quality.run_suite` as this process would, so the outcomes are the
same. When the first suite comes before the helper is warm (a small day), the helper is
stopped and the suites run here, as they would without it; once GX is imported here, no helper
is started again. A helper that cannot start, or dies, also leaves the suites to this process.

The helper is a fresh interpreter (`helper_process.HelperProcess`), not a fork: a forked copy
of a run process makes every page the run then writes a copy-on-write fault. It exits when its
socket closes, so it never outlives the process that started it.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import traceback

import pandas as pd

from assets.common import quality
from assets.common.helper_process import HelperProcess, serve_socket

log = logging.getLogger(__name__)
READY = "ready"


class SuiteError(RuntimeError):
    """A suite raised in the helper; the message holds its traceback."""


class SuiteWorker(HelperProcess):
    def __init__(self) -> None:
        super().__init__(__name__)
        self.warm = False

    def ready(self) -> bool:
        """Whether GX is imported in the helper (without waiting)."""
        try:
            if not self.warm and self.proc.poll() is None and self.conn.poll(0):
                self.warm = self.conn.recv() == READY
        except (OSError, EOFError):  # it died as it was asked
            return False
        return self.warm and self.proc.poll() is None

    def run_suite(self, name: str, frame: pd.DataFrame, expectations: list[tuple[str, dict]]) -> list[quality.Outcome]:
        """`quality.run_suite` in the helper; raises `SuiteError` if it raised there, and
        `OSError`/`EOFError` if the helper is gone."""
        self.conn.send((name, frame[quality.suite_columns(expectations)], expectations))
        status, value = self.conn.recv()
        if status != "ok":
            raise SuiteError(f"suite {name} failed in the validation helper:\n{value}")
        return value


_worker: SuiteWorker | None = None
_lock = threading.Lock()


def _gx_imported() -> bool:
    return "great_expectations" in sys.modules


def prepare() -> None:
    """Start warming a helper, unless GX is imported here already or one is running."""
    global _worker
    with _lock:
        if _worker is not None or _gx_imported():
            return
        try:
            _worker = SuiteWorker()
        except Exception:  # noqa: BLE001 - the helper only saves time: a step never fails for it
            log.warning("could not start the validation helper; suites run in this process", exc_info=True)


def run_suite(name: str, frame: pd.DataFrame, expectations: list[tuple[str, dict]]) -> list[quality.Outcome]:
    """`quality.run_suite`, in the helper when it is warm, else here (the helper is then stopped)."""
    global _worker
    with _lock:
        worker = _worker
        if worker is not None and not worker.ready():
            _worker = None
            worker.stop(kill=True)  # GX is imported here now: the helper is no longer needed
            worker = None
        if worker is not None:
            try:
                return worker.run_suite(name, frame, expectations)
            except SuiteError:
                raise
            except Exception:  # noqa: BLE001 - the helper gone or the frame not sent: the suite runs here
                log.warning("the validation helper failed; suite %s runs in this process", name, exc_info=True)
                _worker = None
                worker.stop(kill=True)
        return quality.run_suite(name, frame, expectations)


@atexit.register
def _stop() -> None:
    if _worker is not None:
        _worker.stop()


def _serve(conn) -> None:
    """The helper: GX imported at once, then one suite per request until the socket closes."""
    try:
        quality.warm()
    except Exception:  # noqa: BLE001 - each suite then reports the failure itself
        log.warning("importing Great Expectations failed", exc_info=True)
    conn.send(READY)
    while True:
        try:
            name, frame, expectations = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = ("ok", quality.run_suite(name, frame, expectations))
        except Exception:  # noqa: BLE001 - handed back to the step, which raises it
            answer = ("error", traceback.format_exc())
        conn.send(answer)


if __name__ == "__main__":
    _serve(serve_socket(sys.argv)[0])
