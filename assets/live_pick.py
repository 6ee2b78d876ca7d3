"""live_pick as Dagster assets: the shared daily chain, judging each window with the character sheet
version in force when it opened (the tagger and summary writer come from config.yaml)."""

import pandas as pd
import sqlalchemy as sa

from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from evals.domains.live_pick import DOMAIN
from rules.live_pick.sheets import VERSIONS_TABLE, with_history


def _sheet_history(tables: dict, warehouse, config, day: str) -> dict:
    """Every stored version of the day's characters' sheets (the day's sheet row is version 1 of a
    character with none stored), so a day is judged with the version in force when each window opened."""
    with warehouse.engine.connect() as conn:
        # Rows as Python objects: nanosecond instants must not pass through float.
        rows = conn.execute(sa.text(f'SELECT * FROM "{VERSIONS_TABLE}"')).mappings().all() if sa.inspect(conn).has_table(VERSIONS_TABLE) else []
    stored = pd.DataFrame([dict(r) for r in rows], dtype=object) if rows else None
    return {**tables, "character_sheet": with_history(tables["character_sheet"], stored)}


CHAIN = chain_for(DOMAIN, history=_sheet_history)

assets = build_assets(CHAIN)
