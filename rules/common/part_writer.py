"""A verdict file written a part at a time on two cores: the later parts made and encoded in a
forked copy of this process while this one makes the earlier parts, the two joined in order.

Once the rules have run, what is left of a judge is explaining its rows a part at a time and
writing them (36–44% of a 10⁶-row judge), and a part reads nothing but the decided rows. A fork
hands the copy every decided row without pickling or copying any (a page is copied only when one
of the two processes writes to it). The copy writes its parts to a file beside the output and
answers with its row count and tallies; this process then appends that file to its own parts in
the kernel (`os.copy_file_range`).

The file is byte for byte what writing every part here, in order, writes. Everything is done here
instead when a fork cannot help or is not safe: two parts or fewer, one core, a system other than
Linux (no `os.fork` on Windows; macOS's libraries are not safe to fork with threads running),
less memory available than this process holds (the copy dirties the pages it touches: every
page it shares, at worst), or `VERDICTS_JUDGE_PROCESSES=1`. A copy that dies without answering
(killed, out of memory) leaves its parts to this process; an exception raised in it is raised here.

The two processes hold more memory together than one would: their pages are shared until either
writes to one, and a part's rows reach objects all over the heap (live_pick's lines of a window
come from every part of the input), so nearly every page of objects is soon copied once. The C
heap's free pages are handed back before the fork (`heap.release_free_memory`): shared, each would be
copied by whichever process reused it first (at 10⁶ lines, live_pick's two processes held 2.1 GB
together at their peak without this, 1.9 GB with it and the gated tables freed first).
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path
from typing import Callable, Optional

from rules.common.atomic import atomic_open
from rules.common.collector import cycle_collection_paused
from rules.common.heap import release_free_memory
from rules.common.json_columns import write_columns

PROCESSES_ENV = "VERDICTS_JUDGE_PROCESSES"
"""1: write every part in this process; unset: two processes where there are two cores."""

Part = Callable[[], dict]
"""One part: a call that makes its columns (name → values, in output order)."""
Tally = Callable[[dict], dict]
"""What a caller counts of each part's columns: name → Counter, summed over the parts."""


def processes() -> int:
    """How many processes write a file of several parts (1 or 2)."""
    setting = os.environ.get(PROCESSES_ENV, "").strip()
    if setting:
        if setting not in ("1", "2"):
            raise ValueError(f"{PROCESSES_ENV}={setting!r}: expected 1 or 2")
        wanted = int(setting)
    else:
        wanted = 2 if (os.cpu_count() or 1) > 1 else 1
    return wanted if hasattr(os, "fork") and sys.platform.startswith("linux") else 1


def room_for_a_copy(meminfo: str = "/proc/meminfo", statm: str = "/proc/self/statm") -> bool:
    """Whether the machine has more memory available than this process holds resident, so that a
    copy of it dirtying every page it shares would still fit; False where that cannot be read."""
    try:
        with open(meminfo) as fh:
            available = next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:")) * 1024
        with open(statm) as fh:
            resident = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return available > resident


def write_parts(path: str | Path, parts: list[Optional[Part]], tally: Tally | None = None) -> tuple[int, dict]:
    """Write the parts' rows as JSON Lines to `path`, atomically, in the parts' order; returns (rows,
    the tallies summed). Each part is dropped from `parts` once made, so its columns can be freed."""
    totals: dict = {}
    with atomic_open(path, encoding=None) as fh, cycle_collection_paused():
        # This process takes the one part more: the first is made already when a judge hands the
        # parts over (its errors are raised before writing begins), and appending is its work too.
        split = len(parts) // 2 + 1 if processes() > 1 else len(parts)
        child = None
        if split < len(parts):
            release_free_memory()  # free pages shared with the copy would be copied by whichever reuses them first
            if room_for_a_copy():
                child = _Child.start(Path(path), parts, split, tally)
        try:
            n = _write(fh, parts, range(split if child is not None else len(parts)), tally, totals)
            if child is not None:
                n += child.join(fh, parts, tally, totals)
        finally:
            if child is not None:
                child.stop()
    return n, totals


def _write(fh, parts: list, indices, tally: Tally | None, totals: dict) -> int:
    n = 0
    for i in indices:
        columns, parts[i] = parts[i](), None
        if tally is not None:
            _add(totals, tally(columns))
        n += write_columns(fh, columns)
    return n


def _add(totals: dict, counts: dict) -> None:
    for name, counter in counts.items():
        totals.setdefault(name, Counter()).update(counter)


class _Child:
    """The forked copy writing parts[split:] to a file of its own."""

    def __init__(self, pid: int, answers: int, file: str, split: int) -> None:
        self.pid, self.answers, self.file, self.split = pid, answers, file, split
        self.done = False

    @classmethod
    def start(cls, path: Path, parts: list, split: int, tally: Tally | None) -> Optional["_Child"]:
        fd, file = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".later", dir=path.parent)
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:  # no memory or processes to spare: every part is made here
            for end in (fd, read, write):
                os.close(end)
            os.unlink(file)
            return None
        if pid == 0:  # the copy: never returns
            os.close(read)
            _serve(fd, write, parts, split, tally)
        os.close(fd)
        os.close(write)
        return cls(pid, read, file, split)

    def join(self, fh, parts: list, tally: Tally | None, totals: dict) -> int:
        """Wait for the copy and append its parts to `fh`; its rows. A copy that died without
        answering leaves its parts to be made here."""
        with os.fdopen(self.answers, "rb") as answers:
            self.answers = None
            answer = answers.read()
        os.waitpid(self.pid, 0)
        self.done = True
        try:
            kind, value = pickle.loads(answer) if answer else ("died", None)
        except Exception:  # noqa: BLE001 - an answer cut short: it died while answering
            kind, value = "died", None
        if kind == "died":  # its parts are still in `parts`, this process's copy of the list
            return _write(fh, parts, range(self.split, len(parts)), tally, totals)
        if kind == "error":
            raise value
        n, counts = value
        _add(totals, counts)
        fh.flush()
        with open(self.file, "rb") as later:
            _append(later, fh)
        for i in range(self.split, len(parts)):
            parts[i] = None
        return n

    def stop(self) -> None:
        """Kill the copy if it is still at work (this process failed first) and remove its file."""
        if self.answers is not None:
            os.close(self.answers)
        if not self.done:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
        try:
            os.unlink(self.file)
        except FileNotFoundError:
            pass


def _serve(fd: int, answers: int, parts: list, split: int, tally: Tally | None) -> None:
    """In the copy: write parts[split:] to `fd`, answer (rows, tallies) or the exception, and exit
    at once (no exit handlers or buffers of the process it was copied from run twice)."""
    code = 0
    try:
        totals: dict = {}
        with os.fdopen(fd, "wb") as fh:
            n = _write(fh, parts, range(split, len(parts)), tally, totals)
        answer = ("ok", (n, totals))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        code = 1
        try:
            pickle.dumps(exc)
            answer = ("error", exc)
        except Exception:  # noqa: BLE001 - an exception that does not pickle goes as its traceback
            answer = ("error", RuntimeError("".join(traceback.format_exception(exc))))
    try:
        with os.fdopen(answers, "wb") as out:
            out.write(pickle.dumps(answer))
    finally:
        os._exit(code)


def _append(src, dst) -> None:
    """`src`'s bytes after `dst`'s (flushed), copied inside the kernel where it can; nothing is
    written to `dst` after them."""
    size = os.fstat(src.fileno()).st_size
    done = 0
    try:
        while done < size:
            copied = os.copy_file_range(src.fileno(), dst.fileno(), size - done)
            if not copied:
                break
            done += copied
    except (AttributeError, OSError):  # no copy_file_range here, or not between these files
        pass
    if done < size:
        src.seek(done)
        dst.seek(0, os.SEEK_END)
        shutil.copyfileobj(src, dst, 16 << 20)
