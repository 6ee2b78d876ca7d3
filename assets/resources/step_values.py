"""Values the steps of one asset hand each other (a day's plan of parts, each part's check results),
kept in the warehouse: on the Celery executor the steps run on other hosts, which share the warehouse
and not a disk. They are small (no row of the day), pickled as Dagster's own IO managers pickle, and
kept a week so that a failed run can be re-executed from its failure."""

from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone

import sqlalchemy as sa
from dagster import InputContext, IOManager, OutputContext, io_manager

TABLE = "step_values"
KEPT = timedelta(days=7)

_metadata = sa.MetaData()
_table = sa.Table(
    TABLE, _metadata,
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("step_key", sa.Text, nullable=False),
    sa.Column("output", sa.Text, nullable=False),
    sa.Column("mapping_key", sa.Text, nullable=False),
    sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("value", sa.LargeBinary, nullable=False),
    sa.Index("ix_step_values_key", "run_id", "step_key", "output", "mapping_key"),
)


class StepValues(IOManager):
    def __init__(self, engine: sa.Engine):
        self.engine = engine

    def handle_output(self, context: OutputContext, obj) -> None:
        key = self._key(context.run_id, context.step_key, context.name, context.mapping_key)
        now = datetime.now(timezone.utc)
        with self.engine.begin() as conn:
            _metadata.create_all(conn, checkfirst=True)
            conn.execute(_table.delete().where(_table.c.stored_at < now - KEPT))
            conn.execute(_table.delete().where(*self._where(key)))
            conn.execute(_table.insert().values(**dict(zip(("run_id", "step_key", "output", "mapping_key"), key)),
                                                stored_at=now, value=pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)))

    def load_input(self, context: InputContext):
        up = context.upstream_output
        key = self._key(up.run_id, up.step_key, up.name, up.mapping_key)
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(_table.c.value).where(*self._where(key))).scalar_one()
        return pickle.loads(value)

    @staticmethod
    def _key(run_id, step_key, name, mapping_key) -> tuple[str, str, str, str]:
        return run_id, step_key, name, mapping_key or ""

    @staticmethod
    def _where(key):
        return (_table.c.run_id == key[0], _table.c.step_key == key[1], _table.c.output == key[2], _table.c.mapping_key == key[3])


@io_manager(required_resource_keys={"warehouse"})
def step_values(init_context) -> StepValues:
    """The IO manager of the day-in-parts steps (`io_manager_key="step_values"`), on the run's warehouse."""
    return StepValues(init_context.resources.warehouse.engine)
