"""Parts written on two cores (`part_writer.write_parts`): the file is byte for byte the parts
written in order by one process, the tallies are every part's, and every way the forked copy can
fail leaves either the same file or the previous one, with nothing left behind."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.common import part_writer
from rules.common.json_columns import write_jsonl_columns
from rules.common.part_writer import PROCESSES_ENV, processes, write_parts

PARENT = os.getpid()


def _columns(part: int, rows: int) -> dict[str, list]:
    return {
        "id": [f"p{part}-{i}" for i in range(rows)],
        "verdict": ["pick" if (part + i) % 3 else "skip" for i in range(rows)],
        "evidence": [[{"field": "text", "value": f"줄 {part}.{i}"}] for i in range(rows)],
        "score": [None if i % 4 == 0 else i / 7 for i in range(rows)],
    }


def _parts(sizes: list[int]) -> list:
    return [lambda k=k, n=n: _columns(k, n) for k, n in enumerate(sizes)]


def _tally(columns: dict) -> dict:
    return {"verdicts": Counter(columns["verdict"]), "rows": Counter(rows=len(columns["id"]))}


def _expected(tmp_path, sizes: list[int]) -> bytes:
    path = tmp_path / "serial.jsonl"
    write_jsonl_columns(path, (_columns(k, n) for k, n in enumerate(sizes)))
    return path.read_bytes()


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def two(monkeypatch):
    monkeypatch.setenv(PROCESSES_ENV, "2")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 6), min_size=0, max_size=7))
def test_two_processes_write_the_parts_in_order_and_count_every_part(sizes, tmp_path, two):
    folder = tmp_path / f"t{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    out = folder / "verdicts.jsonl"
    parts = _parts(sizes)
    n, totals = write_parts(out, parts, _tally)
    assert out.read_bytes() == _expected(folder, sizes)
    assert n == sum(sizes)
    expected = Counter()
    for k, size in enumerate(sizes):
        expected.update(_columns(k, size)["verdict"])
    assert totals.get("verdicts", Counter()) == expected
    assert totals.get("rows", Counter())["rows"] == sum(sizes)
    assert parts == [None] * len(sizes)  # each part dropped once made
    assert _leftovers(folder) == []


def test_the_later_parts_are_made_in_another_process(tmp_path, two):
    made_by = {}

    def part(k):
        def make():
            made_by[k] = os.getpid()
            return {"k": [k], "pid": [os.getpid()]}
        return make

    out = tmp_path / "v.jsonl"
    write_parts(out, [part(k) for k in range(5)])
    assert made_by == {0: PARENT, 1: PARENT, 2: PARENT}  # parts 3 and 4 were made in the copy, whose dict this is not
    pids = [int(line.split(b'"pid":')[1].rstrip(b"}")) for line in out.read_bytes().splitlines()]
    assert pids[:3] == [PARENT] * 3 and pids[3] == pids[4] != PARENT


def test_two_parts_are_both_made_here(tmp_path, two, monkeypatch):
    def no_fork():  # the first part is made already when a judge hands them over: a copy would gain nothing
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    write_parts(tmp_path / "v.jsonl", _parts([2, 2]))


def test_one_process_when_asked_for_or_without_fork(tmp_path, monkeypatch):
    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setenv(PROCESSES_ENV, "1")
    out = tmp_path / "v.jsonl"
    assert write_parts(out, _parts([2, 3, 1]), _tally)[0] == 6
    assert out.read_bytes() == _expected(tmp_path, [2, 3, 1])
    monkeypatch.delenv(PROCESSES_ENV)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert processes() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert processes() == 2
    monkeypatch.setattr(sys, "platform", "darwin")
    assert processes() == 1
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delattr(os, "fork")
    assert processes() == 1


def _proc_files(tmp_path, available_kb: int, resident_pages: int):
    meminfo, statm = tmp_path / "meminfo", tmp_path / "statm"
    meminfo.write_text(f"MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   {available_kb} kB\n")
    statm.write_text(f"900000 {resident_pages} 1000 10 0 5000 0\n")
    return str(meminfo), str(statm)


def test_a_copy_is_forked_only_with_memory_for_it(tmp_path, two, monkeypatch):
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    assert part_writer.room_for_a_copy(*_proc_files(tmp_path, 400_000 * page_kb + 1, 400_000))
    assert not part_writer.room_for_a_copy(*_proc_files(tmp_path, 400_000 * page_kb, 400_000))
    assert not part_writer.room_for_a_copy(str(tmp_path / "none"), str(tmp_path / "none"))
    assert part_writer.room_for_a_copy() in (True, False)

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(part_writer, "room_for_a_copy", lambda: False)
    out = tmp_path / "v.jsonl"
    assert write_parts(out, _parts([2, 3, 1, 4]), _tally)[0] == 10
    assert out.read_bytes() == _expected(tmp_path, [2, 3, 1, 4])


@pytest.mark.parametrize("setting", ["3", "0", "two"])
def test_a_setting_other_than_1_or_2_is_refused(setting, monkeypatch):
    monkeypatch.setenv(PROCESSES_ENV, setting)
    with pytest.raises(ValueError, match=PROCESSES_ENV):
        processes()


def test_the_command_refuses_a_bad_setting(tmp_path, monkeypatch, capsys):
    from orchestration.cli import main
    from rules.common.environment import SAMPLE_DIR

    monkeypatch.setenv(PROCESSES_ENV, "4")
    code = main(["judge", "retry", "--input", str(SAMPLE_DIR / "retry"), "--out", str(tmp_path / "v.jsonl")])
    assert code != 0 and PROCESSES_ENV in capsys.readouterr().err
    assert not (tmp_path / "v.jsonl").exists()


def test_a_failing_fork_leaves_every_part_to_this_process(tmp_path, two, monkeypatch):
    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    out = tmp_path / "v.jsonl"
    assert write_parts(out, _parts([2, 2, 2]), _tally)[1]["rows"]["rows"] == 6
    assert out.read_bytes() == _expected(tmp_path, [2, 2, 2])
    assert _leftovers(tmp_path) == []


def test_an_exception_in_the_copy_is_raised_here_and_the_old_file_stays(tmp_path, two):
    out = tmp_path / "v.jsonl"
    out.write_bytes(b"before\n")

    def broken():
        raise ValueError("Out of range float values are not JSON compliant: nan")

    with pytest.raises(ValueError, match="Out of range float"):
        write_parts(out, [*_parts([2, 2]), broken])
    assert out.read_bytes() == b"before\n"
    assert _leftovers(tmp_path) == []


def test_an_exception_that_does_not_pickle_comes_back_as_its_traceback(tmp_path, two):
    class Local(Exception):  # a class defined in a function cannot be pickled
        pass

    def broken():
        raise Local("deep inside")

    with pytest.raises(RuntimeError, match="deep inside"):
        write_parts(tmp_path / "v.jsonl", [*_parts([1, 1]), broken])
    assert _leftovers(tmp_path) == []


def test_a_copy_that_dies_leaves_its_parts_to_this_process(tmp_path, two):
    def dies_in_the_copy(k):
        def make():
            if os.getpid() != PARENT:
                os.kill(os.getpid(), signal.SIGKILL)
            return _columns(k, 2)
        return make

    out = tmp_path / "v.jsonl"
    n, totals = write_parts(out, [*_parts([2, 2]), dies_in_the_copy(2), dies_in_the_copy(3)], _tally)
    assert n == 8 and totals["rows"]["rows"] == 8
    assert out.read_bytes() == _expected(tmp_path, [2, 2, 2, 2])
    assert _leftovers(tmp_path) == []


def test_an_answer_cut_short_leaves_the_copy_s_parts_to_this_process(tmp_path, two, monkeypatch):
    class Cut:  # the copy's answer cut off mid-way, as if it died while writing it
        loads = staticmethod(pickle.loads)

        @staticmethod
        def dumps(value):
            return pickle.dumps(value)[:5] if os.getpid() != PARENT else pickle.dumps(value)

    monkeypatch.setattr(part_writer, "pickle", Cut)
    out = tmp_path / "v.jsonl"
    n, totals = write_parts(out, _parts([2, 1, 3, 2, 2]), _tally)
    assert n == 10 and totals["rows"]["rows"] == 10
    assert out.read_bytes() == _expected(tmp_path, [2, 1, 3, 2, 2])
    assert _leftovers(tmp_path) == []


def test_when_this_process_fails_the_copy_is_stopped_and_nothing_is_left(tmp_path, two, monkeypatch):
    started = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)

    def slow_in_the_copy():
        if os.getpid() != PARENT:
            time.sleep(120)  # it must be killed, not waited for
        return _columns(9, 1)

    def broken():
        raise KeyError("here")

    out = tmp_path / "v.jsonl"
    t0 = time.monotonic()
    with pytest.raises(KeyError):
        write_parts(out, [broken, *_parts([1]), slow_in_the_copy])
    assert time.monotonic() - t0 < 60
    assert len(started) == 1
    with pytest.raises(ChildProcessError):  # already waited for: stopped, not left running
        os.waitpid(started[0], os.WNOHANG)
    assert not out.exists() and _leftovers(tmp_path) == []


def test_the_copy_is_appended_without_copy_file_range_too(tmp_path, two, monkeypatch):
    def refused(*args):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", refused)
    out = tmp_path / "v.jsonl"
    write_parts(out, _parts([3, 0, 4, 5]))
    assert out.read_bytes() == _expected(tmp_path, [3, 0, 4, 5])


def test_a_partial_copy_file_range_is_finished(tmp_path, two, monkeypatch):
    real = os.copy_file_range
    calls = []

    def a_little(src, dst, count, *args):
        calls.append(count)
        if len(calls) > 1:
            raise OSError(22, "Invalid argument")
        return real(src, dst, min(count, 10), *args)

    monkeypatch.setattr(os, "copy_file_range", a_little)
    out = tmp_path / "v.jsonl"
    write_parts(out, _parts([3, 4, 5, 6]))
    assert out.read_bytes() == _expected(tmp_path, [3, 4, 5, 6])
    assert len(calls) == 2


@pytest.mark.parametrize("domain", ["persona", "live_pick", "retry", "handoff"])
def test_the_command_writes_and_counts_the_same_on_one_process_or_two(domain, tmp_path, monkeypatch, capsys):
    from orchestration.cli import main
    from rules.common.environment import SAMPLE_DIR
    from rules.handoff import engine as handoff_engine
    from rules.live_pick import engine as live_pick_engine
    from rules.persona import engine as persona_engine
    from rules.retry import engine as retry_engine

    for engine in (live_pick_engine, persona_engine, retry_engine, handoff_engine):
        monkeypatch.setattr(engine, "PART_ROWS", 5)  # a sample's rows in many parts
    told = {}
    for setting in ("1", "2"):
        monkeypatch.setenv(PROCESSES_ENV, setting)
        out = tmp_path / f"v{setting}.jsonl"
        assert main(["judge", domain, "--input", str(SAMPLE_DIR / domain), "--out", str(out)]) == 0
        told[setting] = (out.read_bytes(), capsys.readouterr().err.replace(out.name, "v.jsonl"))
    assert told["1"] == told["2"]
    assert told["1"][0].count(b"\n") > 10


def test_the_heap_is_trimmed_before_a_fork_and_only_then(tmp_path, two, monkeypatch):
    trims = []
    monkeypatch.setattr(part_writer, "release_free_memory", lambda: trims.append(os.getpid()))
    write_parts(tmp_path / "two.jsonl", _parts([2, 2]))
    assert trims == []
    monkeypatch.setattr(part_writer, "room_for_a_copy", lambda: trims.append("asked") or True)
    out = tmp_path / "four.jsonl"
    write_parts(out, _parts([2, 3, 1, 4]), _tally)
    assert trims == [PARENT, "asked"]  # trimmed first, so the memory asked about is what the copy shares
    assert out.read_bytes() == _expected(tmp_path, [2, 3, 1, 4])
