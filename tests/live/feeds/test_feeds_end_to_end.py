"""Each platform's recorded broadcast, played by a local stand-in that speaks the platform's protocol,
read by `verdicts listen` (the real client library where one is used) and fed into a real `verdicts
serve`: it ends in windows on the console with every line accounted for — sent = acknowledged =
judged + quarantined + late (on the console and in the store's own figures), the redelivered lines
counted apart as duplicates — and the feed's counts on `/live/status`. No network: every address is on this machine."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import websockets

from tests.live.console import BIN, Service
from tests.live.feeds.fakes import FAKES, recording

pytestmark = pytest.mark.slow
TOKEN = "feed-test-token"
SECRETS = {"TWITCH_CLIENT_ID": "fake-client", "TWITCH_CLIENT_SECRET": "twitch-client-secret-4f1d",
           "TWITCH_USER_TOKEN": "user-token-not-secret", "TWITCH_REFRESH_TOKEN": "twitch-refresh-secret-9c2e",
           "CHZZK_NID_AUT": "nid-aut-secret-77aa", "CHZZK_NID_SES": "nid-ses-secret-88bb"}
WINDOW_S = 5


def status(service: Service) -> dict:
    request = urllib.request.Request(service.http + "/live/status", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=5) as r:
        return json.loads(r.read())


def accounted(frames: list[dict]) -> tuple[set, list, list, list]:
    """msg_ids judged in windows, quarantined in windows, judged late (each listed as often as it came)."""
    judged = [r["msg_id"] for f in frames if f["type"] == "window" for r in f["verdicts"]]
    quarantined = [q["msg_id"] for f in frames if f["type"] == "window" for q in f["quarantined"]]
    late = [r["msg_id"] for f in frames if f["type"] == "late" for r in f["verdicts"]]
    return set(judged) | set(quarantined) | set(late), judged, quarantined, late


async def broadcast(service: Service, command: list[str], env: dict, log: Path, expect: dict) -> tuple[list[dict], dict, int]:
    """Start the feed with a console already watching; wait until the feed's lines are all acknowledged
    and all in windows (or late); stop the feed. Returns the console's frames, the last status and the feed's exit code."""
    frames: list[dict] = []
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with websockets.connect(service.ws + "/ws/windows", additional_headers=headers, max_size=None) as console:
        with log.open("w") as out:
            feed = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            last = {}
            while time.monotonic() < deadline:
                try:
                    frames.append(json.loads(await asyncio.wait_for(console.recv(), 0.5)))
                except asyncio.TimeoutError:
                    pass
                st = await asyncio.to_thread(status, service)
                feeds = st["feeds"]
                last = feeds[0] if feeds else {}
                ids, judged, quarantined, late = accounted(frames)
                # the store's figures are read at most once a second (`policy.TALLY_EVERY_S`): wait for
                # them to catch up with the console too, or fail at the deadline
                stored = st.get("broadcasts", {}).get("CH-0007", {})
                if (last.get("acknowledged") == expect["lines"] and last.get("received") == expect["received"]
                        and len(judged) + len(quarantined) + len(late) >= expect["lines"]
                        and stored.get("received") == expect["lines"] and stored.get("pending") == 0):
                    break
                assert feed.poll() is None, log.read_text()
            else:
                raise AssertionError(f"not every line came through: feed {last}, frames {frames[-3:]}\n{log.read_text()[-3000:]}")
        finally:
            feed.send_signal(signal.SIGTERM)
            code = feed.wait(60)
    return frames, await asyncio.to_thread(status, service), code


@pytest.mark.parametrize("platform", ["chzzk", "youtube", "twitch"])
def test_a_platform_broadcast_ends_in_windows_with_every_line_accounted_for(tmp_path, platform):
    expect = recording(platform)["expect"]
    service = Service(tmp_path, token=TOKEN, window_seconds=WINDOW_S).start()
    fake = FAKES[platform]().start()
    try:
        channel = {"chzzk": getattr(fake, "channel", ""), "youtube": getattr(fake, "video", ""), "twitch": getattr(fake, "login", "")}[platform]
        credentials = tmp_path / "feed.env"  # the file path of the credentials; the environment holds none of them
        credentials.write_text("".join(f"{k}={v}\n" for k, v in SECRETS.items()), encoding="utf-8")
        env = {k: v for k, v in service.env.items() if not k.startswith(("TWITCH_", "CHZZK_", "YOUTUBE_"))}
        command = [str(BIN / "verdicts"), "listen", platform, channel, "--character", "CH-0007",
                   "--to", service.ws + "/ws/ingest", "--endpoint", fake.url, "--credentials", str(credentials)]
        log = tmp_path / "listen.log"
        frames, st, code = asyncio.run(broadcast(service, command, env, log, expect))
    finally:
        fake.stop()
        service.stop()

    feed = st["feeds"][0]
    ids, judged, quarantined, late = accounted(frames)
    # every line sent was acknowledged, and every acknowledged line is in a window, quarantined or late — once
    assert feed["sent"] == feed["acknowledged"] == expect["lines"] == len(judged) + len(quarantined) + len(late), (feed, frames)
    assert len(ids) == expect["lines"] and all(i.startswith(f"{platform}:") for i in ids), ids
    # redeliveries are counted apart and never judged twice; the dropped connection was made again
    assert feed["received"] == expect["received"] and feed["duplicates"] == expect["duplicates"], feed
    assert feed["received"] == feed["sent"] + feed["duplicates"]
    assert feed["reconnects"] >= expect["reconnects"] and feed["skipped"] == expect["skipped"], feed
    assert feed["unpriced"] == expect.get("unpriced", 0), feed
    assert feed["quarantined"] == len(quarantined) == 0, quarantined
    # the store's own figures for the broadcast agree: nothing pending, no copy reached it
    store = st["broadcasts"]["CH-0007"]
    assert store["received"] == store["judged"] + store["quarantined"] + store["late"] == feed["acknowledged"], store
    assert store["judged"] == len(judged) and store["late"] == len(late) and store["duplicates"] == store["pending"] == 0, store
    assert code == 0, log.read_text()  # stopped with everything acknowledged
    # it resumed where the platform allows
    if platform == "chzzk":
        assert fake.recent_asked == 1  # the recent chat, asked for once, after the one reconnect
    elif platform == "youtube":  # the refused page asked for again from its own token, never from the start
        assert fake.polls.count("c3") == 2 and sum(not (p or "").startswith("c") for p in fake.polls) == 1, fake.polls
    else:
        assert len(fake.subscriptions) == 2  # twitchio subscribed again on the new session
    # the console saw the lines as the platform wrote them: platform-qualified viewers, donations in won
    chat = {line["msg_id"]: line for f in frames if f["type"] == "chat" for line in f["lines"]}
    assert set(chat) == ids
    assert all(line["viewer_id"].startswith(f"{platform}:") for line in chat.values())
    won = sorted(line["donation_amount"] for line in chat.values() if line["donation_amount"])
    assert won == sorted(expect["won"]), won
    # the platform's credentials went to the platform's client only: not to the console, the log or the warehouse
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p.name != "feed.env")
    for secret in SECRETS.values():
        if secret != "fake-client":  # an application id is public
            assert secret.encode() not in stored, f"{secret} leaked"
