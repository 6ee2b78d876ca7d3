"""The live service as the tests meet it: `verdicts serve` in its own process on a free loopback
port, stopped by its own PID (or killed with SIGKILL), and helpers that speak its sockets."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import websockets

from tests.conftest import ROOT, SEEDS

BIN = Path(sys.executable).parent
SAMPLE_CHAT = SEEDS / "live_pick" / "live_chat.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SAMPLE_HORIZON = 10 * 365 * 86400.0
"""The sample broadcast was recorded in September 2026: tests that send it as recorded widen the late
horizon to reach it (by default a line of a window closed over 10 minutes before it arrives is quarantined)."""


class Service:
    """`verdicts serve` on its own warehouse; `start()` again after `kill()` restarts it on the same port."""

    def __init__(self, tmp: Path, *args: str, token: str | None = None, window_seconds: int | None = None,
                 late_horizon: float | None = SAMPLE_HORIZON):
        self.tmp = tmp
        self.port = free_port()
        self.args = list(args)
        if late_horizon is not None:
            self.args += ["--late-horizon", str(late_horizon)]
        if window_seconds is not None:
            rules = tmp / "rules.yaml"
            text = (ROOT / "rules" / "live_pick" / "config.yaml").read_text(encoding="utf-8")
            rules.write_text(text.replace("window_seconds: 30", f"window_seconds: {window_seconds}"), encoding="utf-8")
            self.args += ["--config", str(rules)]
        self.env = {**os.environ, "VERDICTS_HOME": str(tmp / "home"), "WAREHOUSE_URL": f"sqlite:///{tmp / 'warehouse.sqlite'}"}
        self.env.pop("VERDICTS_LIVE_TOKEN", None)
        if token:
            self.env["VERDICTS_LIVE_TOKEN"] = token
        self.proc: subprocess.Popen | None = None
        self.log = tmp / "serve.log"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> "Service":
        with self.log.open("a") as out:
            self.proc = subprocess.Popen([str(BIN / "verdicts"), "serve", "--port", str(self.port), "--tags", "model", *self.args],
                                         cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"verdicts serve exited {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.http + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("verdicts serve did not answer /healthz")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def worker_service(tmp_path: Path, name: str, clock, **settings):
    """A live service with no event loop: its worker's steps called one by one on a set clock
    (`settings`: of its `WebConfig`; gold tags unless said)."""
    from web.config import WebConfig
    from web.live.service import LiveService

    service = LiveService(WebConfig(**{"tags": "gold", "warehouse_url": f"sqlite:///{tmp_path / name}", **settings}), clock=clock)
    service.loop = type("Now", (), {"call_soon_threadsafe": staticmethod(lambda fn, *a: fn(*a))})()
    service._recover()
    service.publisher.begin(1)
    return service


def feed(service, texts: list[str]):
    """The worker's step for lines that arrived as one frame of one connection: landed and absorbed
    (no event loop); what absorbing made (`service.Absorbed`)."""
    from web.live.frames import screened
    from web.live.intake import Origin

    _, failed, absorbed = service._ingest([(Origin(), 1, [screened(t) for t in texts])])
    assert not failed
    return absorbed


def lines(*texts: str) -> list:
    """Lines as an ingest frame holds them (`frames.Line`)."""
    from web.live.frames import screened

    return [screened(t) for t in texts]


def sample_lines() -> list[str]:
    return [t for t in SAMPLE_CHAT.read_text(encoding="utf-8").split("\n") if t.strip()]


def as_frames(lines: list[str]) -> list[str]:
    """JSON objects together in one array frame; every other line as a frame of its own."""
    objects, others = [], []
    for t in lines:
        try:
            value = json.loads(t)
        except ValueError:
            others.append(t)
            continue
        (objects if isinstance(value, dict) else others).append(value if isinstance(value, dict) else t)
    return [json.dumps(objects, ensure_ascii=False), *others]


async def ingest(url: str, frames: list[str], headers: dict | None = None, settle: float = 1.0) -> dict:
    """Send frames; collect acks and quarantine notices until every frame is acknowledged."""
    got = {"acked": 0, "quarantined": [], "other": []}
    async with websockets.connect(url + "/ws/ingest", additional_headers=headers or {}, max_size=None) as ws:
        for f in frames:
            await ws.send(f)
        deadline = time.monotonic() + 60
        while got["acked"] < len(frames) and time.monotonic() < deadline:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame["type"] == "ack":
                got["acked"] = frame["through"]
            elif frame["type"] == "quarantined":
                got["quarantined"].append(frame)
            else:
                got["other"].append(frame)
    return got


async def windows(url: str, until, after: str | None = None, timeout: float = 30, headers: dict | None = None,
                  send: list[dict] = ()) -> list[dict]:
    """Frames from /ws/windows (optionally resuming `after`) until `until(frames)` is true."""
    q = f"?after={after}" if after else ""
    frames: list[dict] = []
    async with websockets.connect(url + "/ws/windows" + q, additional_headers=headers or {}, max_size=None) as ws:
        for message in send:
            await ws.send(json.dumps(message, ensure_ascii=False))
        deadline = time.monotonic() + timeout
        while not until(frames):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"only {len([f for f in frames if f['type'] == 'window'])} window frames arrived")
            try:
                frames.append(json.loads(await asyncio.wait_for(ws.recv(), left)))
            except asyncio.TimeoutError:
                continue
    return frames


async def until_resumed(ws) -> list[dict]:
    """What a console socket is sent before `resumed`: the history it asked for."""
    got = []
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if frame["type"] == "resumed":
            return got
        got.append(frame)


def pushed(frames: list[dict]) -> list[dict]:
    """The window and late frames, in the order they came."""
    return [f for f in frames if f["type"] in ("window", "late")]


def window_frames(frames: list[dict]) -> list[dict]:
    return [f for f in frames if f["type"] == "window"]


def key(frame: dict) -> str:
    return f"{frame['character_id']}/{frame['window_start']}"


class InProcess:
    """`verdicts serve`'s application on uvicorn in a thread of this process, on a free loopback port,
    so a test can reach into its service (`service`) or patch its code; `stop()` ends it."""

    def __init__(self, tmp: Path, warehouse_url: str | None = None, window_seconds: int | None = None, **settings):
        from web.config import WebConfig

        if window_seconds is not None:
            rules = tmp / "rules.yaml"
            text = (ROOT / "rules" / "live_pick" / "config.yaml").read_text(encoding="utf-8")
            rules.write_text(text.replace("window_seconds: 30", f"window_seconds: {window_seconds}"), encoding="utf-8")
            settings["rules_config"] = rules
        self.port = free_port()
        self.config = WebConfig(**{"tags": "gold", "warehouse_url": warehouse_url or f"sqlite:///{tmp / 'warehouse.sqlite'}",
                                   "home": tmp / "home", "admin_warm": False, "judge_helper": False, "port": self.port, **settings})
        self.server = None
        self.thread = None

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def service(self):
        return self.app.state.live

    def start(self) -> "InProcess":
        import threading

        import uvicorn

        from web.app import create_app

        self.app = create_app(self.config)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    ws="websockets-sansio", ws_max_size=self.config.max_frame_bytes))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.time() > deadline:
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.05)
        return self

    def status(self) -> dict:
        with urllib.request.urlopen(self.http + "/live/status", timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(timeout=60)


def retimed(lines: list[str], at_ns: int, tz: str = "Asia/Seoul") -> list[str]:
    """Lines with `sent_at` moved to `at_ns` (naive local time), as a replayer re-times to now."""
    from rules.common import timestamps

    out = []
    for t in lines:
        try:
            row = json.loads(t)
        except ValueError:
            out.append(t)
            continue
        if isinstance(row, dict):
            row["sent_at"] = timestamps.format_ns(at_ns, "", tz)
            t = json.dumps(row, ensure_ascii=False)
        out.append(t)
    return out
