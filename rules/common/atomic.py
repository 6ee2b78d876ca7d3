"""Output files written whole or not at all.

Every file a run writes (verdicts, quarantine, reports, boards) is written to a temporary file
beside its target, flushed to disk, then renamed over it: a run that fails half-way, or is
killed, leaves the previous file as it was and no partial one behind.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


@contextmanager
def atomic_open(path: str | Path, encoding: str | None = "utf-8") -> Iterator[IO]:
    """A file opened for writing that replaces `path` only when the block ends without an exception.

    Text with `encoding` (strict: text that cannot be encoded fails the write), bytes with None.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        # Keep the mode of the file replaced (mkstemp makes it private), else the usual one.
        os.fchmod(fd, path.stat().st_mode & 0o7777 if path.exists() else 0o644)
        mode = "w" if encoding else "wb"
        with os.fdopen(fd, mode, encoding=encoding, newline="" if encoding else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _sync_dir(path.parent)


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Replace `path` with `text`, atomically; returns the path."""
    with atomic_open(path, encoding) as fh:
        fh.write(text)
    return Path(path)


def _sync_dir(folder: Path) -> None:
    """Make the rename itself durable (where the platform allows opening a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
