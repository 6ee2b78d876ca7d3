"""`verdicts serve` is loud when it is open: it refuses a non-loopback address without a token unless
told `--allow-open`, and warns on stderr whenever it runs without a token."""

from __future__ import annotations

import subprocess

import pytest

from orchestration.commands.running import exposure
from orchestration.commands.usage import UsageError
from web.config import WebConfig
from tests.live.console import BIN, Service


def test_a_network_address_without_a_token_is_refused_before_anything_is_bound(tmp_path):
    env = {"PATH": str(BIN), "VERDICTS_HOME": str(tmp_path), "WAREHOUSE_URL": f"sqlite:///{tmp_path / 'w.sqlite'}"}
    # 192.0.2.1 is a documentation address: nothing on this machine could bind it anyway
    done = subprocess.run([str(BIN / "verdicts"), "serve", "--host", "192.0.2.1", "--port", "1"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "without a token" in done.stderr and "--allow-open" in done.stderr and "VERDICTS_LIVE_TOKEN" in done.stderr


def test_what_the_operator_is_told_for_each_exposure():
    assert exposure(WebConfig(host="127.0.0.1", token="t")) == []
    (local,) = exposure(WebConfig(host="127.0.0.1", token=None))
    assert local.startswith("warning: serving without a token") and "anyone on this machine" in local
    with pytest.raises(UsageError, match="--allow-open"):
        exposure(WebConfig(host="0.0.0.0", token=None))
    loud, note = exposure(WebConfig(host="0.0.0.0", token=None), allow_open=True)
    assert "ANYONE WHO CAN REACH 0.0.0.0:8765" in loud and "--allow-host" in note
    (note,) = exposure(WebConfig(host="0.0.0.0", token="t", allowed_hosts=("console.lan",)))
    assert "console.lan, localhost" in note


def test_serving_without_a_token_says_so_on_stderr(tmp_path):
    service = Service(tmp_path).start()
    try:
        assert "warning: serving without a token (VERDICTS_LIVE_TOKEN is not set)" in service.log.read_text()
    finally:
        service.stop()
    quiet = Service(tmp_path / "with", token="t")
    (tmp_path / "with").mkdir()
    quiet.start()
    try:
        assert "serving without a token" not in quiet.log.read_text()
    finally:
        quiet.stop()
