"""A finished window as storing it needs it, made where the window was judged (the service's
worker, or its judging helper process): the verdict rows as stored (their JSON texts), the
checks, the audit row and the rows' order. Only this crosses between the processes: the rows
themselves stay where they were judged."""

from __future__ import annotations

from dataclasses import dataclass

from live.judge import window_audit
from web.live import records
from web.live.windows import Key, Window, finish
from rules.live_pick.config import LivePickConfig


@dataclass
class Ready:
    key: Key
    window_start: str
    params: list[dict]
    """`records.verdict_params`: each row's JSON text with its line's tags and landing seq."""
    checks: list[dict]
    """`records.checks_json` of the window's checks."""
    audit: dict
    """The window's audit row (`window_audit`)."""
    msg_order: list[str]
    """The rows' msg_ids, picks first, as pushed."""


def finish_ready(windows: list[Window], config: LivePickConfig, writer, tagger: str, summaries: str) -> list[Ready]:
    """`windows.finish`, each window then made ready to store (`tagger`: its canonical name,
    `summaries`: the summary writer's, as the audit row names them)."""
    out = []
    for window, fin in zip(windows, finish(windows, config, writer)):
        key = window.key
        audit = window_audit(fin.rows, fin.checks, {r["msg_id"]: key for r in fin.rows}, tagger, summaries, [key])[key]
        out.append(Ready(key, fin.window_start, records.verdict_params(key, fin.rows, window.tags_of, window.seq_of),
                         records.checks_json(fin.checks), audit, [r["msg_id"] for r in fin.rows]))
    return out
