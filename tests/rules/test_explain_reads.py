"""Each domain's builders are handed only the feature columns its `READS` lists: every feature
column its explain module names must be there (a column left out would read as missing, or,
column-wise, fail with a KeyError only on the verdict that reads it)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import rules.common.explain as common_explain
from evals import domains
from rules.common.environment import SAMPLE_DIR

DOMAINS = ("persona", "live_pick")


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_feature_column_the_builders_name_is_read(domain, monkeypatch):
    module = importlib.import_module(f"rules.{domain}.explain")
    seen: list[list[str]] = []
    name = "column_wise" if hasattr(module, "column_wise") else "per_verdict"
    real = getattr(common_explain, name)

    def spy(f, key, *args, **kwargs):
        seen.append(list(f.columns))
        return real(f, key, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    spec = domains.get(domain).spec
    spec.judge(spec.load(SAMPLE_DIR / domain)[1].tables, spec.load_config(), "gold")
    assert seen, "the builders ran"
    source = Path(module.__file__).read_text(encoding="utf-8")
    named = set(re.findall(r"\[[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']\]", source)) | set(re.findall(r"\.get\([\"']([A-Za-z_][A-Za-z0-9_]*)[\"']", source))
    missing = sorted((named & set(seen[0])) - set(module.READS))
    assert not missing, f"{domain}: builders read {missing}, not in READS"
