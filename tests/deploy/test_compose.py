"""docker-compose.yml, read and checked piece by piece (there is no Docker engine here):
services, health dependencies, loopback-only publishing, credentials from .env, the broker
and the scalable Celery workers, the daemon's run queue, and every command it runs exists in
the installed project and starts (the code server, a worker, and the replayer into the live
console for real)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, stop

BIN = Path(sys.executable).parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]
ENV_EXAMPLE = dict(
    line.split("=", 1) for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


DAGSTER_SERVICES = ("migrate", "code", "webserver", "daemon", "worker", "web", "replay")


def test_the_services_and_a_one_shot_migration():
    assert set(SERVICES) == {"postgres", "rabbitmq", "migrate", "code", "webserver", "daemon", "worker", "web", "replay"}
    assert SERVICES["postgres"]["image"].startswith("postgres:15")
    assert "pg_isready" in " ".join(SERVICES["postgres"]["healthcheck"]["test"])
    assert SERVICES["rabbitmq"]["image"].startswith("rabbitmq:")
    assert SERVICES["rabbitmq"]["healthcheck"]["test"][:2] == ["CMD", "rabbitmq-diagnostics"]


def test_start_order_waits_for_health():
    assert SERVICES["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("webserver", "daemon"):
        deps = SERVICES[name]["depends_on"]
        assert deps["code"]["condition"] == "service_healthy"
        assert deps["migrate"]["condition"] == "service_completed_successfully"
    assert SERVICES["code"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("code", "worker"):  # runs start in the code server and send steps to the broker
        assert SERVICES[name]["depends_on"]["rabbitmq"]["condition"] == "service_healthy"
    assert SERVICES["worker"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_workers_scale_and_every_dagster_process_sends_steps_to_them():
    worker = SERVICES["worker"]
    # `--scale worker=N` needs a service with no fixed name and no published port.
    assert "container_name" not in worker and not worker.get("ports")
    assert worker["command"][:2] == ["verdicts", "worker"]
    for name in DAGSTER_SERVICES:
        env = SERVICES[name]["environment"]
        assert env["VERDICTS_EXECUTOR"].startswith("${VERDICTS_EXECUTOR:-celery}")
        assert env["VERDICTS_CELERY_BROKER"].startswith("pyamqp://") and "@rabbitmq:5672/" in env["VERDICTS_CELERY_BROKER"]
    assert ENV_EXAMPLE["VERDICTS_EXECUTOR"] == "celery"


def test_the_daemon_queues_runs_and_a_backfill_leaves_room_for_the_live_windows():
    config = yaml.safe_load((ROOT / "dagster.yaml").read_text(encoding="utf-8"))
    coordinator = config["run_coordinator"]
    assert coordinator["class"] == "QueuedRunCoordinator"
    assert coordinator["config"]["max_concurrent_runs"] == {"env": "DAGSTER_MAX_CONCURRENT_RUNS"}
    backfill = [t for t in coordinator["config"]["tag_concurrency_limits"] if t["key"] == "dagster/backfill"]
    assert len(backfill) == 1 and "value" not in backfill[0]  # across every backfill together
    assert backfill[0]["limit"] < int(ENV_EXAMPLE["DAGSTER_MAX_CONCURRENT_RUNS"])
    assert config["run_retries"]["enabled"] is True

    from orchestration.definitions import defs
    from orchestration.execution import LIVE_RUN_TAGS

    for name in ("live_pick_windows", "live_pick_close_broadcast"):
        job = defs.resolve_job_def(name)
        assert {k: job.tags.get(k) for k in LIVE_RUN_TAGS} == LIVE_RUN_TAGS
        assert job.executor_def.name == "in_process"  # live runs never wait for a worker
    assert int(LIVE_RUN_TAGS["dagster/priority"]) > 0


def test_webserver_is_published_on_loopback_only():
    ports = [str(p) for s in SERVICES.values() for p in s.get("ports", [])]
    assert ports and all(p.startswith("127.0.0.1:") for p in ports)
    assert [n for n, s in SERVICES.items() if s.get("ports")] == ["webserver", "web"]


def test_credentials_come_from_the_env_file_only():
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    referenced = set(re.findall(r"\$\{([A-Z_]+)", text))
    assert referenced <= set(ENV_EXAMPLE), referenced - set(ENV_EXAMPLE)
    for service in SERVICES.values():
        for key, value in (service.get("environment") or {}).items():
            if "PASSWORD" in key:
                assert str(value).startswith("${"), (key, value)
    assert "change-me" not in text


def test_instance_config_gets_every_variable_it_reads():
    needed = set(re.findall(r"\{env: ([A-Z_]+)\}", (ROOT / "dagster.yaml").read_text(encoding="utf-8")))
    for name in DAGSTER_SERVICES:
        assert needed <= set(SERVICES[name]["environment"]), (name, needed - set(SERVICES[name]["environment"]))
        mounts = SERVICES[name]["volumes"]
        assert any(m.startswith("./dagster.yaml:/opt/dagster/home/dagster.yaml") for m in mounts)


def test_workspace_points_at_the_code_service():
    workspace = yaml.safe_load((ROOT / "deploy" / "workspace.yaml").read_text(encoding="utf-8"))
    grpc = workspace["load_from"][0]["grpc_server"]
    code_cmd = SERVICES["code"]["command"]
    assert grpc["host"] == "code" and str(grpc["port"]) == code_cmd[code_cmd.index("-p") + 1]


def test_dockerfile_copies_what_exists():
    for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if line.startswith("COPY"):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src


@pytest.mark.parametrize("service", DAGSTER_SERVICES)
def test_each_command_exists_in_the_installed_project(service):
    cmd = SERVICES[service]["command"]
    assert (BIN / cmd[0]).is_file(), cmd[0]
    words = [w for w in cmd[1:] if not w.startswith("-")][:2]
    sub = words if cmd[0] == "dagster" else words[:1] if cmd[0] in ("dagster-daemon", "verdicts") else []
    out = subprocess.run([str(BIN / cmd[0]), *sub, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    health = SERVICES[service].get("healthcheck", {}).get("test", [])
    if health and health[0] == "CMD":
        assert subprocess.run([str(BIN / health[1]), *health[2:4], "--help"], capture_output=True, timeout=120).returncode == 0


def test_code_server_command_serves_the_code_location_and_passes_its_health_check(tmp_path):
    from orchestration.instance import prepare_home

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = SERVICES["code"]["command"]
    cmd = [str(BIN / cmd[0]), *cmd[1:]]
    cmd[cmd.index("-h") + 1], cmd[cmd.index("-p") + 1] = "127.0.0.1", str(port)
    env = {**os.environ, "DAGSTER_HOME": str(prepare_home(tmp_path / "home"))}
    # a session of its own: the code server starts a gRPC child, which must not outlive the test
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline, ok = time.time() + 90, False
        while time.time() < deadline and not ok:
            time.sleep(1)
            ok = subprocess.run([str(BIN / "dagster"), "api", "grpc-health-check", "-p", str(port)],
                                capture_output=True, timeout=30, env=env).returncode == 0
        assert ok, "code server did not become healthy"
    finally:
        stop(server)
        with contextlib.suppress(ProcessLookupError):  # whatever it started, by its process group (its own PID)
            os.killpg(server.pid, signal.SIGKILL)


def test_the_live_console_service_shares_the_warehouse_and_requires_its_token():
    web = SERVICES["web"]
    cmd = web["command"]
    assert cmd[:2] == ["verdicts", "serve"] and cmd[cmd.index("--host") + 1] == "0.0.0.0"
    assert web["ports"] == ["127.0.0.1:${VERDICTS_WEB_PORT:-8765}:" + cmd[cmd.index("--port") + 1]]
    assert web["environment"]["WAREHOUSE_URL"] == SERVICES["daemon"]["environment"]["WAREHOUSE_URL"]
    assert str(web["environment"]["VERDICTS_LIVE_TOKEN"]).startswith("${VERDICTS_LIVE_TOKEN:?")
    assert web["depends_on"]["postgres"]["condition"] == "service_healthy"
    raw_mount = next(m for m in web["volumes"] if m.endswith(":/data/raw:ro"))
    host_dir = raw_mount.split(":-", 1)[1].split("}", 1)[0]
    inside = cmd[cmd.index("--input") + 1].removeprefix("/data/raw/")
    assert (ROOT / host_dir / inside / "character_sheet.jsonl").is_file()
    out = subprocess.run([str(BIN / "verdicts"), "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert all(flag in out.stdout for flag in ("--host", "--port", "--input", "--tags", "--grace-ms"))


@pytest.mark.slow
def test_worker_command_connects_to_the_broker_and_stops_by_its_pid(broker_url, tmp_path):
    import uuid

    from kombu import Connection

    queue = f"verdicts-test-{uuid.uuid4().hex[:10]}"
    cmd = SERVICES["worker"]["command"]
    env = {**os.environ, "VERDICTS_CELERY_BROKER": broker_url, "VERDICTS_CELERY_QUEUE": queue,
           "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path)}
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen([str(BIN / cmd[0]), *cmd[1:], "--concurrency", "1"], cwd=ROOT, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 90
        while time.time() < deadline and " ready." not in log.read_text() and worker.poll() is None:
            time.sleep(0.5)
        text = log.read_text()
        assert " ready." in text, text[-3000:]
        assert queue in text and "execute_plan" in text  # listens on its queue, knows the step task
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        with Connection(broker_url, connect_timeout=5) as conn:
            conn.default_channel.queue_delete(queue)
    assert worker.returncode is not None


def resolved(value: str) -> str:
    """A compose value with its `${NAME:-default}` taken at the default (as with no .env entry)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def test_the_replayer_plays_a_recorded_file_into_the_live_console_as_it_happened(tmp_path):
    from tests.live.console import Service

    replay, web = SERVICES["replay"], SERVICES["web"]
    cmd = [resolved(str(w)) for w in replay["command"]]
    assert cmd[:2] == ["verdicts", "replay"] and cmd[cmd.index("--pace") + 1] == "original"
    to = cmd[cmd.index("--to") + 1]
    web_port = web["command"][web["command"].index("--port") + 1]
    assert to == f"ws://web:{web_port}/ws/ingest"  # the service's name and its port inside the network
    assert replay["depends_on"]["web"]["condition"] == "service_healthy"
    assert replay["environment"]["VERDICTS_LIVE_TOKEN"] == web["environment"]["VERDICTS_LIVE_TOKEN"]
    assert replay["restart"] == "no" and replay["profiles"] == ["replay"] and not replay.get("ports")
    assert resolved(web["environment"]["VERDICTS_LIVE_CLOCK"]) == "event"  # what --pace original needs
    # the default file is in the raw folder the image mounts
    raw_mount = next(m for m in replay["volumes"] if m.endswith(":/data/raw:ro"))
    host_dir = raw_mount.split(":-", 1)[1].split("}", 1)[0]
    chat = ROOT / host_dir / cmd[2].removeprefix("/data/raw/")
    assert chat.is_file()

    # the web service's command and clock, then the replayer's command, on this machine
    inside = web["command"][web["command"].index("--input") + 1].removeprefix("/data/raw/")
    service = Service(tmp_path, "--tags", "gold", "--input", str(ROOT / host_dir / inside), token="compose-token", late_horizon=None)
    service.env["VERDICTS_LIVE_CLOCK"] = resolved(web["environment"]["VERDICTS_LIVE_CLOCK"])
    service.start()
    try:
        cmd[2], cmd[cmd.index("--to") + 1] = str(chat), f"{service.ws}/ws/ingest"
        cmd[cmd.index("--speed") + 1] = "50000"  # VERDICTS_REPLAY_SPEED: the sample's 26 hours in about 2 s
        env = {**os.environ, "VERDICTS_LIVE_TOKEN": "compose-token"}
        out = subprocess.run([str(BIN / cmd[0]), *cmd[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "acknowledged stored (all)" in out.stdout and "late 0" in out.stdout
    finally:
        service.stop()
