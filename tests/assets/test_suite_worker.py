"""The validation helper (`assets.common.suite_worker`): the outcomes of a suite are the same
whether it runs in the helper or here, and every way the helper can fail leaves the suite to
this process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from assets.common import helper_process, suite_worker
from assets.common.quality import run_suite
from assets.common.suite_worker import SuiteError, SuiteWorker
from rules.live_pick.expectations import EXPECTATIONS
from tests.assets.test_quality import _chat

SUITE = ("live_pick.live_chat", EXPECTATIONS["live_chat"])


def _failing_frame():
    frame = _chat(donation_amount=[0, -5, 20], msg_id=["M-1", "M-1", "M-3"])
    frame.index = [10, 11, 12]  # row ids are the index: they must come back as they are
    return frame


def _wait_ready(worker: SuiteWorker, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not worker.ready():
        assert worker.proc.poll() is None, "the helper exited while warming"
        assert time.monotonic() < deadline, "the helper did not warm"
        time.sleep(0.05)


@pytest.fixture
def helper(monkeypatch):
    worker = SuiteWorker()
    monkeypatch.setattr(suite_worker, "_worker", worker)
    yield worker
    worker.stop(kill=True)
    assert worker.proc.poll() is not None


def test_a_warm_helper_gives_the_outcomes_this_process_gives(helper):
    _wait_ready(helper)
    name, expectations = SUITE
    there = suite_worker.run_suite(name, _failing_frame(), expectations)
    here = run_suite(name, _failing_frame(), expectations)
    assert there == here
    assert {tuple(o.unexpected_index) for o in there if not o.success} == {(11,), (10, 11)}
    assert suite_worker._worker is helper  # it served the suite and stays for the next


def test_a_helper_not_warm_yet_is_stopped_and_the_suite_runs_here(helper, monkeypatch):
    monkeypatch.setattr(helper, "ready", lambda: False)
    name, expectations = SUITE
    assert suite_worker.run_suite(name, _failing_frame(), expectations) == run_suite(name, _failing_frame(), expectations)
    assert suite_worker._worker is None
    assert helper.proc.wait(10) is not None  # killed, not left warming


def test_a_helper_that_died_leaves_the_suite_to_this_process(helper):
    _wait_ready(helper)
    helper.proc.kill()
    helper.proc.wait()
    name, expectations = SUITE
    assert suite_worker.run_suite(name, _failing_frame(), expectations) == run_suite(name, _failing_frame(), expectations)
    assert suite_worker._worker is None


def test_a_helper_that_dies_mid_suite_leaves_it_to_this_process(helper, monkeypatch):
    _wait_ready(helper)
    helper.proc.kill()
    helper.proc.wait()
    monkeypatch.setattr(helper, "ready", lambda: True)  # dead only once the suite is sent
    name, expectations = SUITE
    assert suite_worker.run_suite(name, _failing_frame(), expectations) == run_suite(name, _failing_frame(), expectations)
    assert suite_worker._worker is None


def test_a_suite_that_raises_in_the_helper_fails_with_its_name_and_the_helper_serves_on(helper):
    _wait_ready(helper)
    with pytest.raises(SuiteError, match="live_pick.broken") as raised:
        suite_worker.run_suite("live_pick.broken", _chat(), [("expect_no_such_thing", {"column": "msg_id"})])
    assert "Traceback" in str(raised.value)
    name, expectations = SUITE
    assert suite_worker.run_suite(name, _chat(), expectations) == run_suite(name, _chat(), expectations)


def test_no_helper_is_started_once_gx_is_imported_here(monkeypatch):
    import great_expectations  # noqa: F401 - imported here, as after a first suite

    monkeypatch.setattr(suite_worker, "_worker", None)
    suite_worker.prepare()
    assert suite_worker._worker is None


def test_the_helper_exits_with_the_process_that_started_it(tmp_path):
    script = textwrap.dedent("""
        import os, sys
        from assets.common.suite_worker import SuiteWorker
        worker = SuiteWorker()
        print(worker.proc.pid, flush=True)
        os._exit(0)  # no clean-up at all, as a process killed outright
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(") ")[1].startswith("Z"):
                    break  # a zombie: it has exited, its parent's parent reaps it
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the helper {pid} outlived the process that started it")


def test_a_helper_starts_where_sys_stderr_is_no_file(monkeypatch):
    class LoggingProxy:  # what a Celery worker puts in place of sys.stderr: no fileno
        def write(self, text):
            return len(text)

    monkeypatch.setattr(sys, "stderr", LoggingProxy())
    monkeypatch.setattr(suite_worker, "_gx_imported", lambda: False)
    monkeypatch.setattr(suite_worker, "_worker", None)
    suite_worker.prepare()
    worker = suite_worker._worker
    try:
        assert worker is not None and worker.proc.poll() is None
        _wait_ready(worker)
        name, expectations = SUITE
        assert suite_worker.run_suite(name, _failing_frame(), expectations) == run_suite(name, _failing_frame(), expectations)
    finally:
        if worker is not None:
            worker.stop(kill=True)


def test_a_helper_that_cannot_start_never_fails_the_step(monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("no fileno")

    monkeypatch.setattr(helper_process.subprocess, "Popen", broken)
    monkeypatch.setattr(suite_worker, "_gx_imported", lambda: False)
    monkeypatch.setattr(suite_worker, "_worker", None)
    suite_worker.prepare()
    assert suite_worker._worker is None
    name, expectations = SUITE
    assert suite_worker.run_suite(name, _chat(), expectations) == run_suite(name, _chat(), expectations)
