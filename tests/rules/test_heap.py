"""The C heap's free pages handed back (`heap.release_free_memory`)."""

from __future__ import annotations

import os

import pytest

from rules.common import heap


def _resident_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(heap._trim() is None or not os.path.exists("/proc/self/statm"),
                    reason="needs glibc's malloc_trim and /proc (Linux)")
def test_free_chunks_in_the_middle_of_the_heap_are_returned():
    # 100 kB blocks come from the heap itself (below glibc's mmap threshold); keeping every tenth
    # leaves the freed ones between live blocks, where free() alone never returns them.
    blocks = [bytearray(b"x" * 100_000) for _ in range(2_000)]
    kept = blocks[::10]
    del blocks
    before = _resident_mb()
    assert heap.release_free_memory()
    assert before - _resident_mb() > 100
    assert len(kept) == 200


def test_nothing_is_done_without_glibc(monkeypatch):
    monkeypatch.setattr(heap, "_trim", lambda: None)
    assert heap.release_free_memory() is False
