"""Settings of the web front, decided once when the service starts."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from live.settings import live_settings
from rules.common import environment

TOKEN_ENV = "VERDICTS_LIVE_TOKEN"


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
    allowed_origins: tuple[str, ...] = ()
    """Origins (scheme://host:port) allowed on the console socket besides the service's own."""
    history_windows: int = 30
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
    def compress_frames(self) -> bool:
        """Whether sockets offer compressed frames (permessage-deflate): not on a loopback address,
        where every console is on this machine. Deflating a 3 MB window frame costs the event loop
        about 20 ms per console, which a console on this machine gets back in nothing; across a
        network the frame shrinks about fortyfold."""
        host = self.host.strip("[]")
        if host == "localhost":
            return False
        try:
            return not ipaddress.ip_address(host).is_loopback
        except ValueError:  # a host name: whatever it resolves to
            return True
