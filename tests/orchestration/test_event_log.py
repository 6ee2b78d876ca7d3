"""The embedded default's event log (`orchestration.event_log`): Dagster's SQLite event log with
each file's connection kept open. Held to what Dagster's own storage does: every event readable
by another instance at once, wipe, and a forked process writing through what it inherited."""

from __future__ import annotations

import multiprocessing

import pytest

from dagster import AssetCheckResult, AssetKey, DagsterInstance, asset, asset_check, materialize

from orchestration.event_log import PooledSqliteEventLogStorage
from orchestration.instance import prepare_home


@asset
def counted() -> int:
    return 1


@asset_check(asset=counted)
def counted_is_one() -> AssetCheckResult:
    return AssetCheckResult(passed=True)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A Dagster home with the embedded default's dagster.yaml, set as DAGSTER_HOME (as Dagster's tools need)."""
    path = prepare_home(tmp_path / "home")
    monkeypatch.setenv("DAGSTER_HOME", str(path))
    return path


def _instance(home) -> DagsterInstance:
    return DagsterInstance.from_config(str(home))


def _storage(instance: DagsterInstance) -> PooledSqliteEventLogStorage:
    storage = instance.event_log_storage
    assert isinstance(storage, PooledSqliteEventLogStorage), type(storage)
    return storage


def test_the_local_instance_keeps_each_files_connection(home):
    with _instance(home) as instance:
        result = materialize([counted, counted_is_one], instance=instance)
        assert result.success
        storage = _storage(instance)
        # Dagster went through the overridden `_connect`: the run's and the index's engines are
        # kept, each with its connection back in the pool for the next event.
        assert {result.run_id, "index"} <= set(storage._engines)
        assert all(e.pool.checkedin() == 1 for e in storage._engines.values())

        # Another instance (the webserver, the daemon) reads every event at once.
        with _instance(home) as reader:
            assert len(reader.all_logs(result.run_id)) == len(instance.all_logs(result.run_id))
            assert reader.get_latest_materialization_event(AssetKey("counted")).run_id == result.run_id
            check = reader.event_log_storage.get_latest_asset_check_execution_by_key(
                [counted_is_one.check_key])[counted_is_one.check_key]
            assert check.run_id == result.run_id
            # and writes in turn, seen by the first
            again = materialize([counted], instance=reader)
        assert instance.get_latest_materialization_event(AssetKey("counted")).run_id == again.run_id


def test_engines_are_bounded(home, monkeypatch):
    monkeypatch.setattr("orchestration.event_log.ENGINES_KEPT", 2)
    with _instance(home) as instance:
        runs = [materialize([counted], instance=instance).run_id for _ in range(3)]
        storage = _storage(instance)
        assert len(storage._engines) == 2
        assert all(len(instance.all_logs(r)) > 0 for r in runs)


def test_wipe_closes_the_files_it_deletes(home):
    with _instance(home) as instance:
        first = materialize([counted], instance=instance).run_id
        instance.event_log_storage.wipe()
        assert instance.all_logs(first) == []
        second = materialize([counted], instance=instance).run_id
        with _instance(home) as reader:  # written to the new file, not the deleted one
            assert len(reader.all_logs(second)) == len(instance.all_logs(second)) > 0


def _materialize_in_child(instance: DagsterInstance, pooled, out) -> None:
    storage = _storage(instance)
    # the connections inherited from the parent were let go, not reused
    out.put([storage._engines[s].pool.checkedin() for s in pooled])
    out.put(materialize([counted], instance=instance).run_id)


def test_a_forked_process_opens_its_own_connections(home):
    with _instance(home) as instance:
        materialize([counted], instance=instance)
        storage = _storage(instance)
        pooled = [s for s, e in storage._engines.items() if e.pool.checkedin()]
        assert pooled
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        child = ctx.Process(target=_materialize_in_child, args=(instance, pooled, out))
        child.start()
        inherited, run_id = out.get(timeout=120), out.get(timeout=120)
        child.join(60)
        assert child.exitcode == 0
        assert inherited == [0] * len(pooled)
        # the parent's own connections still work, and see what the child wrote
        assert instance.get_latest_materialization_event(AssetKey("counted")).run_id == run_id
        assert materialize([counted], instance=instance).success


def test_base_dir_may_be_given(tmp_path):
    storage = PooledSqliteEventLogStorage.from_config_value(None, {"base_dir": str(tmp_path / "events")})
    assert (tmp_path / "events" / "index.db").exists()
    storage.dispose()
