"""Every registered domain's assets: the shared daily chain, or a domain's own module where it has
more (persona's cross-day assets, live_pick's sheet history, handoff's day window)."""

from __future__ import annotations

from dagster import AssetsDefinition

from assets import handoff, live_pick, persona
from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from evals import domains

OWN_MODULES = {m.CHAIN.domain: m.assets for m in (persona, live_pick, handoff)}


def domain_assets() -> list[AssetsDefinition]:
    """In registry order; a domain without a module here gets the shared chain of its registry entry."""
    return [a for name in domains.names() for a in OWN_MODULES.get(name) or build_assets(chain_for(domains.get(name)))]
