"""Memory of `verdicts serve` under an oversize chunked upload and a flood of invented days.

    .venv/bin/python benchmarks/serve_memory.py [--upload-mb 1024] [--days 2000] [--source DIR]

Starts `verdicts serve` on a free loopback port (the sample data as its raw folder, its own home and
SQLite warehouse), waits until the admin pages have judged every run once, then:

1. sends one upload of `--upload-mb` MB to `/admin/live_pick/upload` with chunked transfer encoding
   (no Content-Length), one `live_chat.jsonl` part of `{}` lines, and records the answer's status,
   how many bytes were sent before it came, and the service's resident memory before and at its peak;
2. asks for `--days` board pages of days that are not in the data (`day-2001-01-01` onwards), one
   after the other, and records the statuses and the resident memory before and after.

Resident memory is the service process's `VmRSS` (sampled every 50 ms) and `VmHWM` (its peak) from
`/proc`. `--source DIR` runs another checkout's code (e.g. an export of an older commit) with this
interpreter. Prints one JSON object.

Measured on 7 December 2026 (2-core machine shared with other work, load average 3.5 to 11):

| | before (3fa3053) | after |
|---|---|---|
| 1 GB chunked upload | 413 after all 1,024 MB were read; RSS 294 → 1,321 MB at the peak | 413 after 25 MB were sent (20 MB read, the rest in socket buffers); RSS 303 → 306 MB |
| 2,000 invented days | all 200, each judged and kept: RSS 296 → 522 MB, 579 s | all 404, none judged: RSS 306 → 306 MB, 7.7 s |
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


class Sampler:
    """The highest VmRSS seen while it runs."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid)[0])
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def get(url: str, timeout: float = 600) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def chunked_upload(port: int, megabytes: int) -> dict:
    """One multipart upload sent in chunks; stops sending once the service has answered."""
    boundary = "benchmarkboundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"live_chat.jsonl\"\r\n"
            "Content-Type: application/x-ndjson\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    chunk = b"{}\n" * (MB // 3)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall((f"POST /admin/live_pick/upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Content-Type: multipart/form-data; boundary={boundary}\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    sent, answer = 0, b""
    sock.settimeout(0)
    started = time.monotonic()
    try:
        for piece in [head, *[chunk] * megabytes, tail]:
            try:
                answer += sock.recv(65536)
            except (BlockingIOError, ConnectionResetError):
                pass
            if answer:
                break
            sock.settimeout(60)
            sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sock.settimeout(0)
            sent += len(piece)
        else:
            sock.settimeout(60)
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(600)
    try:
        while b"\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    except (ConnectionResetError, socket.timeout):
        pass
    sock.close()
    status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
    return {"status_line": status, "sent_mb": round(sent / MB, 1), "seconds": round(time.monotonic() - started, 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--upload-mb", type=int, default=1024)
    p.add_argument("--days", type=int, default=2000)
    p.add_argument("--source", type=Path, default=ROOT, help="the checkout whose code is served (default: this one)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="serve_memory_"))
    port = free_port()
    env = {**os.environ, "VERDICTS_HOME": str(tmp / "home"), "WAREHOUSE_URL": f"sqlite:///{tmp / 'warehouse.sqlite'}",
           "VERDICTS_RAW_DIR": str(ROOT / "seeds"), "PYTHONPATH": str(args.source.resolve())}
    env.pop("VERDICTS_LIVE_TOKEN", None)
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "orchestration.cli", "serve", "--port", str(port), "--tags", "lexicon"],
                            cwd=args.source, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    out: dict = {"source": str(args.source)}
    try:
        deadline = time.time() + 120
        while not _up(base):
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit("verdicts serve did not start: " + (tmp / "serve.log").read_text()[-2000:])
            time.sleep(0.3)
        get(base + "/admin")  # every run judged once: what an operator's service holds after opening the index
        time.sleep(2)
        out["rss_after_start_mb"] = round(rss_mb(proc.pid)[0], 1)
        if args.upload_mb:
            before = rss_mb(proc.pid)[0]
            with Sampler(proc.pid) as s:
                told = chunked_upload(port, args.upload_mb)
            out["upload"] = {**told, "mb": args.upload_mb, "rss_before_mb": round(before, 1), "rss_peak_mb": round(s.peak, 1),
                             "rss_after_mb": round(rss_mb(proc.pid)[0], 1)}
        if args.days:
            before = rss_mb(proc.pid)[0]
            statuses: dict[int, int] = {}
            first = dt.date(2001, 1, 1)
            started = time.monotonic()
            with Sampler(proc.pid) as s:
                for i in range(args.days):
                    day = (first + dt.timedelta(days=i)).isoformat()
                    code = get(f"{base}/admin/live_pick/runs/day-{day}/board")
                    statuses[code] = statuses.get(code, 0) + 1
            out["invented_days"] = {"requests": args.days, "statuses": statuses, "seconds": round(time.monotonic() - started, 1),
                                    "rss_before_mb": round(before, 1), "rss_peak_mb": round(s.peak, 1),
                                    "rss_after_mb": round(rss_mb(proc.pid)[0], 1)}
        out["rss_hwm_mb"] = round(rss_mb(proc.pid)[1], 1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


def _up(base: str) -> bool:
    try:
        urllib.request.urlopen(base + "/healthz", timeout=2).read()
        return True
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
