"""Settings of the web front, decided once when the service starts."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from live.settings import live_settings
from rules.common import environment

TOKEN_ENV = "VERDICTS_LIVE_TOKEN"
HOSTS_ENV = "VERDICTS_ALLOWED_HOSTS"
ORIGINS_ENV = "VERDICTS_ALLOWED_ORIGINS"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""Host names every service answers to: this machine's own."""


def _listed(name: str) -> tuple[str, ...]:
    """A comma-separated environment variable as a tuple of its non-empty items."""
    return tuple(x.strip() for x in os.environ.get(name, "").split(",") if x.strip())


def host_name(value: str) -> str:
    """The name part of a Host header or address (`[::1]:8765` → `::1`), lower-cased, one trailing dot dropped."""
    value = value.strip().lower()
    if value.startswith("["):
        value = value[1:].split("]", 1)[0]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value[:-1] if value.endswith(".") else value


def is_loopback(host: str) -> bool:
    host = host_name(host)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: whatever it resolves to
        return False


@dataclass(frozen=True)
class WebConfig:
    input_dir: Path = field(default_factory=lambda: environment.SAMPLE_DIR / "live_pick")
    host: str = "127.0.0.1"
    port: int = 8765
    tags: str = "model"
    grace_ms: int = 200
    clock: str = "wall"
    """When windows close: `wall` (the machine's clock) or `event` (the recording's own time: the
    latest `sent_at` landed, `web.live.event_clock`), for replays at their recorded pace."""
    summaries: str = field(default_factory=lambda: live_settings().summaries)
    """live_pick summary writer of the live console: `template` or `openai` (default: VERDICTS_LIVE_SUMMARY)."""
    token: str | None = field(default_factory=lambda: os.environ.get(TOKEN_ENV) or None)
    warehouse_url: str = field(default_factory=environment.warehouse_url)
    home: Path = field(default_factory=environment.verdicts_home)
    raw_dir: Path = field(default_factory=environment.raw_dir)
    """Admin pages: one folder per domain, judged per day (the sample data by default)."""
    upload_max_bytes: int = 20 * 1024 * 1024
    """Admin pages: the most one upload (all its files) may hold."""
    upload_max_rows: int = 200_000
    """Admin pages: the most lines one uploaded file may hold."""
    run_cache_runs: int = 64
    """Admin pages: judged runs kept in memory at most (the least recently opened go first)."""
    run_cache_bytes: int = 256 * 2**20
    """Admin pages: the most the judged runs kept in memory are estimated to hold (`runs.footprint`)."""
    body_max_bytes: int = 64 * 1024
    """The most a request body other than an upload may hold (JSON posts, forms): counted while it
    streams in, refused with 413 at the limit (an upload's limit is `upload_max_bytes`)."""
    admin_warm: bool = True
    """Admin pages: judge every run in the background at start, so the index opens from memory."""
    rules_config: Path | None = None
    """live_pick rules configuration (window length, picks per window); default rules/live_pick/config.yaml."""
    max_frame_bytes: int = 64 * 1024
    """An ingest frame larger than this is refused by the WebSocket protocol layer before it is read
    whole: the socket closes with 1009."""
    max_frame_lines: int = 1000
    """An array frame of more elements is one line, quarantined (`too_many_lines`): a 64 KiB frame of
    real chat lines holds a few hundred."""
    notice_limit: int = 100
    """Quarantine notices waiting for one ingest connection; past it they are counted and told as one."""
    window_ahead_s: float = 600
    """A line whose window ends more than this after it arrived is quarantined (`window_out_of_range`)."""
    late_horizon_s: float = 600
    """A line whose window ended more than this before it arrived is quarantined (`window_out_of_range`);
    within it, a line of a window already pushed is late (judged in a follow-up)."""
    client_queue: int = 512
    """Frames waiting for one console client; a client that falls further behind is dropped (it resumes with `after_seq`)."""
    max_consoles: int = 100
    """Console sockets served at once; one more is refused (503)."""
    allowed_hosts: tuple[str, ...] = field(default_factory=lambda: _listed(HOSTS_ENV))
    """Host names (besides this machine's loopback names and the address it is bound to) that requests
    may be addressed to; any other Host header is refused (421), which is what stops DNS rebinding."""
    allowed_origins: tuple[str, ...] = field(default_factory=lambda: _listed(ORIGINS_ENV))
    """Origins (scheme://host:port) allowed on the sockets and on state-changing requests besides the
    service's own; `null` (sandboxed frames, files) only when listed."""
    history_windows: int = 120
    """Windows a console gets on first connect (without `after_seq` or `after`), with what followed them."""
    history_bytes: int = 64 * 2**20
    """The most a console is sent on first connect (the newest frames within it)."""
    resume_frames: int = 5000
    """The most frames a console that resumes is sent; further behind, it is told `too_old` and sent the newest."""
    history_readers: int = 2
    """Console history and the store's figures are read by this many threads at most, beside the worker."""
    retention_bytes: int = 2 * 2**30
    """The frames sent are kept in the store up to this many bytes (the oldest go first): a console can
    resume from any of them byte for byte."""
    judge_helper: bool = field(default_factory=lambda: (os.cpu_count() or 1) > 1)
    """Judge three in four of the windows that end together in a helper process, on another core
    (`web.live.judge_helper`); on by default where there is more than one core."""

    @property
    def loopback(self) -> bool:
        """Whether the service is bound to this machine only."""
        return is_loopback(self.host)

    @property
    def served_hosts(self) -> frozenset[str]:
        """The host names a request's Host header may carry: loopback, the bound address when it is one
        address (not every interface), and `allowed_hosts`."""
        bound = host_name(self.host)
        own = () if bound in ("0.0.0.0", "::", "") else (bound,)
        return frozenset(host_name(h) for h in (*LOOPBACK_NAMES, *own, *self.allowed_hosts))

    @property
    def compress_frames(self) -> bool:
        """Whether sockets offer compressed frames (permessage-deflate): not on a loopback address,
        where every console is on this machine. Deflating a 3 MB window frame costs the event loop
        about 20 ms per console, which a console on this machine gets back in nothing; across a
        network the frame shrinks about fortyfold."""
        return not self.loopback
