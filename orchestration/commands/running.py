"""The long-running commands: the evaluation runner, the nightly demo, the served app and a Celery worker."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from pathlib import Path

from orchestration.commands.usage import EXIT_OK, UsageError, stored_decisions


def cmd_eval(args) -> int:
    from evals.runner import main_eval

    return main_eval(args, decisions=stored_decisions)


def cmd_demo(args) -> int:
    from orchestration.demo import run_demo

    home = args.dagster_home or (Path(os.environ["DAGSTER_HOME"]) if os.environ.get("DAGSTER_HOME") else None)
    return run_demo(home)


def cmd_serve(args) -> int:
    # The live tagger's analyser takes seconds to load, mostly outside the interpreter lock:
    # loaded beside the rest of start-up, a restart after a crash is back seconds sooner.
    threading.Thread(target=_preload_tagger, args=(args.tags,), name="tagger-preload", daemon=True).start()
    import uvicorn

    from web.app import create_app
    from web.config import WebConfig
    from rules.live_pick.summaries import writer

    settings = {"host": args.host, "port": args.port, "tags": args.tags, "grace_ms": args.grace_ms,
                "late_horizon_s": args.late_horizon, "window_ahead_s": args.window_ahead, "clock": args.clock}
    if args.input:
        settings["input_dir"] = args.input.resolve()
    if args.config:
        settings["rules_config"] = args.config.resolve()
    if args.summary:
        settings["summaries"] = args.summary
    config = WebConfig(**settings)
    config = dataclasses.replace(config, allowed_hosts=config.allowed_hosts + tuple(args.allow_host or ()),
                                 allowed_origins=config.allowed_origins + tuple(args.allow_origin or ()))
    for line in exposure(config, args.allow_open):
        print(line, file=sys.stderr)
    try:  # an unknown writer or a model endpoint without its settings: say so before serving
        writer(config.summaries)
    except ValueError as exc:
        raise UsageError(f"--summary {config.summaries}: {exc}") from None
    # The frame size limit is the protocol layer's: a frame over it is refused from its header, before its
    # payload is buffered (a console's messages are small; a window frame goes the other way).
    announce(config)
    uvicorn.run(create_app(config), host=config.host, port=config.port, log_level="warning", ws="websockets-sansio",
                ws_per_message_deflate=config.compress_frames, ws_max_size=config.max_frame_bytes)
    return EXIT_OK


def announce(config) -> None:
    """Where the service is (its pages and sockets) on stdout, and the service's own warnings and
    errors on stderr, one line each, as they happen."""
    import logging

    host = f"[{config.host}]" if ":" in config.host else config.host
    base = f"http://{host}:{config.port}"
    print(f"verdicts serve: starting on {base} (input {config.input_dir}, tags {config.tags})", flush=True)
    for path, what in (("/", "index"), ("/live", "live console"), ("/admin", "admin pages"), ("/suggestions", "sheet suggestions")):
        print(f"  {what:<17} {base}{path}", flush=True)
    print(f"  {'chat in':<17} ws://{host}:{config.port}/ws/ingest", flush=True)
    logger = logging.getLogger("verdicts")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
def exposure(config, allow_open: bool = False) -> list[str]:
    """What an operator must be told before the service starts: a warning whenever it runs without a
    token, and the host names it answers to when it listens beyond this machine. A non-loopback address
    without a token is refused (UsageError) unless `allow_open`."""
    from web.config import TOKEN_ENV

    where = f"{config.host}:{config.port}"
    lines = []
    if not config.token:
        if not config.loopback and not allow_open:
            raise UsageError(f"--host {config.host} without a token would give everyone who can reach {where} the admin pages, "
                             f"the console, its actions and chat ingest: set {TOKEN_ENV}, or pass --allow-open to serve it open")
        reach = "anyone on this machine" if config.loopback else f"ANYONE WHO CAN REACH {where}"
        lines.append(f"warning: serving without a token ({TOKEN_ENV} is not set): {reach} can read the admin pages and the console, "
                     "record review decisions, apply sheet suggestions and write chat lines; set it to require a token")
    if not config.loopback:
        lines.append(f"note: listening on {where}; requests are answered for the host names "
                     f"{', '.join(sorted(config.served_hosts))} only (add the names clients use with --allow-host NAME)")
    return lines


def _preload_tagger(name: str) -> None:
    from rules.live_pick.names import canonical
    from rules.live_pick.tags import tag_source

    try:
        if canonical(name) == "kiwi":
            tag_source(name)
    except Exception:  # noqa: BLE001 - the service builds it again and reports what is wrong
        pass


def worker_command(name: str, concurrency: int, pool: str, loglevel: str = "INFO") -> list[str]:
    """The Celery worker command line: the queue and broker come from the environment."""
    from orchestration.execution import celery_settings

    return [
        sys.executable, "-m", "celery", "-A", "orchestration.celery_worker", "worker",
        "-Q", celery_settings().queue, "-n", f"{name}@%h", "--pool", pool, "--concurrency", str(concurrency),
        # One step at a time per slot: a step is seconds to minutes, so prefetching only hoards.
        "--prefetch-multiplier=1", "--loglevel", loglevel, "--without-mingle", "--without-gossip",
    ]


def cmd_worker(args) -> int:
    cmd = worker_command(args.name, args.concurrency, args.pool, args.loglevel)
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the worker takes this process's place (and PID)
