"""deploy/kubernetes/values.yaml, read and checked against the project (no cluster here):
the code location it serves, the run launcher and its package, the run queue's limits, and
the environment the run pods get."""

from __future__ import annotations

import tomllib

import yaml

from orchestration.execution import EXECUTORS
from tests.conftest import ROOT

VALUES = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "values.yaml").read_text(encoding="utf-8"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _deployment() -> dict:
    deployments = VALUES["dagster-user-deployments"]["deployments"]
    assert VALUES["dagster-user-deployments"]["enabled"] and len(deployments) == 1
    return deployments[0]


def test_the_code_location_is_the_projects_module():
    args = _deployment()["dagsterApiGrpcArgs"]
    assert args[args.index("-m") + 1] == PYPROJECT["tool"]["dagster"]["module_name"]


def test_each_run_is_a_kubernetes_job_from_the_same_image_and_runs_its_steps_in_its_pod():
    assert VALUES["runLauncher"]["type"] == "K8sRunLauncher"
    deployment = _deployment()
    assert deployment["includeConfigInLaunchedRuns"]["enabled"] is True
    env = {e["name"]: e["value"] for e in deployment["env"]}
    assert env["VERDICTS_EXECUTOR"] in EXECUTORS and env["VERDICTS_EXECUTOR"] == "in_process"
    assert env["VERDICTS_ENV"] == "prod"
    # The run pods load dagster.yaml, which names dagster-k8s's launcher: the image's k8s extra has it,
    # at the Dagster family's version.
    k8s = PYPROJECT["project"]["optional-dependencies"]["k8s"]
    family = next(d for d in PYPROJECT["project"]["dependencies"] if d.startswith("dagster-postgres=="))
    assert k8s == ["dagster-k8s==" + family.split("==")[1]]
    assert 'ARG EXTRAS' in (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_queue_caps_backfills_below_the_total_and_retries_a_lost_run():
    daemon = VALUES["dagsterDaemon"]
    queue = daemon["runCoordinator"]["config"]["queuedRunCoordinator"]
    assert daemon["runCoordinator"]["type"] == "QueuedRunCoordinator"
    backfill = [t for t in queue["tagConcurrencyLimits"] if t["key"] == "dagster/backfill"]
    assert len(backfill) == 1 and backfill[0]["limit"] < queue["maxConcurrentRuns"]
    assert daemon["runRetries"]["enabled"] and daemon["runRetries"]["maxRetries"] >= 1


def test_no_secret_is_written_in_the_values():
    assert VALUES["postgresql"]["enabled"] is False and VALUES["generatePostgresqlPasswordSecret"] is False
    text = (ROOT / "deploy" / "kubernetes" / "values.yaml").read_text(encoding="utf-8")
    assert "password:" not in text.lower().replace("postgresql-password=", "")
    assert all(s == {"name": "chat-verdicts-env"} for s in _deployment()["envSecrets"])
