"""Settings of the live path, from the environment (seconds unless said otherwise).

- VERDICTS_LIVE_SENSOR_INTERVAL: sensor minimum interval (default 5; the daemon evaluates a
  sensor at most once every 5 s whatever this says).
- VERDICTS_LIVE_GRACE: wait after a window's end before judging it, for stragglers (default 2).
- VERDICTS_LIVE_CLOSE_GAP: no line for this long closes a broadcast (default 120).
- VERDICTS_LIVE_TAGS: the tagger by name: `model` (default; the live default, `kiwi`), `kiwi`,
  `lexicon`, `openai` or `gold` (see `rules.live_pick.tags`).
- VERDICTS_LIVE_SUMMARY: the summary writer: `template` (default) or `openai`.
- VERDICTS_LIVE_SENSORS: `running` to start the sensors with the code location (default stopped).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LiveSettings:
    sensor_interval: int
    grace: float
    close_gap: float
    tags: str
    running: bool
    summaries: str = "template"


def live_settings() -> LiveSettings:
    env = os.environ
    return LiveSettings(
        sensor_interval=int(env.get("VERDICTS_LIVE_SENSOR_INTERVAL", "5")),
        grace=float(env.get("VERDICTS_LIVE_GRACE", "2")),
        close_gap=float(env.get("VERDICTS_LIVE_CLOSE_GAP", "120")),
        tags=env.get("VERDICTS_LIVE_TAGS", "model"),
        running=env.get("VERDICTS_LIVE_SENSORS", "").lower() in ("running", "on", "1", "true"),
        summaries=env.get("VERDICTS_LIVE_SUMMARY", "template"),
    )
