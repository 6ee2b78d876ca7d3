"""Shared fixtures: paths, and PostgreSQL databases that must exist in CI."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PG_ADMIN_URL = os.environ.get("VERDICTS_TEST_PG_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")


def modules_after_judging(domain: str, out: Path) -> list[str]:
    """The modules a fresh interpreter holds after `verdicts judge DOMAIN` on the domain's sample,
    which must succeed: for tests of what a command leaves unimported."""
    code = (
        "import json, sys\n"
        "from orchestration.cli import main\n"
        f"code = main(['judge', {domain!r}, '--input', {str(SEEDS / domain)!r}, '--out', {str(out)!r}])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    exit_code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert exit_code == 0
    return modules


@pytest.fixture
def postgres_url(make_postgres_url):
    """A throw-away PostgreSQL database, dropped afterwards.

    In CI (CI set) an unreachable server fails the test; elsewhere it skips with the reason.
    """
    return make_postgres_url()


@pytest.fixture
def make_postgres_url():
    """Call it for each throw-away PostgreSQL database a test needs; all are dropped afterwards."""
    with postgres_databases() as make:
        yield make


@pytest.fixture(scope="module")
def module_postgres_url():
    """One throw-away PostgreSQL database for a whole test module (a server the module's tests share)."""
    with postgres_databases() as make:
        yield make()


@contextlib.contextmanager
def postgres_databases():
    """`make()` gives the URL of a new empty database; every one is dropped on leaving.

    In CI (CI set) an unreachable server fails the test; elsewhere it skips with the reason."""
    import sqlalchemy as sa

    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any connection failure means the same here
        admin.dispose()
        message = f"PostgreSQL not reachable at {PG_ADMIN_URL}: {exc.__class__.__name__}"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI must have it)")
        pytest.skip(message)
    names: list[str] = []

    def make() -> str:
        name = f"verdicts_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        names.append(name)
        return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"

    try:
        yield make
    finally:
        from assets.resources.warehouse import _engine

        _engine.cache_clear()
        with admin.connect() as conn:
            for name in names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def broker_url():
    """The Celery broker (RabbitMQ on loopback, or VERDICTS_CELERY_BROKER).

    In CI (CI set) an unreachable broker fails the test; elsewhere it skips with the reason.
    """
    from kombu import Connection

    from orchestration.execution import celery_settings

    url = celery_settings().broker
    try:
        with Connection(url, connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:  # noqa: BLE001 - any connection failure means the same here
        message = f"Celery broker not reachable at {url.rsplit('@', 1)[-1]}: {exc.__class__.__name__}"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI must have it)")
        pytest.skip(message)
    return url


def stop(proc, grace_s: float = 60) -> None:
    """Stop a server a test started, by its own PID: SIGTERM, then SIGKILL if it has not gone
    within `grace_s` (a loaded machine can slow a clean shutdown well past its usual second)."""
    import subprocess

    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
