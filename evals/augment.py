"""The three layers seed 001 puts on each domain's page, all from the same JSON Schema:
① an inline sample, ② `seed.json` (schema and sample rows of every dataset), ③ the augmentation
prompt that asks for more rows with the hard cases mixed in on purpose (wording in augment.yaml)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from rules.common.bounded_json import parse_line
from rules.common.korean import josa
from schemas import load_schema, row_checker

SAMPLE_ROWS = 5
"""Rows per dataset in the inline sample and seed.json: the first ones of the sample file that pass the schema."""


@lru_cache(maxsize=1)
def _wording() -> dict:
    return yaml.safe_load((resources.files("evals") / "augment.yaml").read_text(encoding="utf-8"))


def datasets(domain: str) -> list[str]:
    return list(_wording()[domain])


def sample_rows(domain: str, dataset: str, folder: Path, limit: int = SAMPLE_ROWS) -> list[dict]:
    """The first `limit` rows of `folder/<dataset>.jsonl` that pass the dataset's schema."""
    path = Path(folder) / f"{dataset}.jsonl"
    if not path.is_file():
        return []
    check = row_checker(domain, dataset)
    out = []
    with path.open(encoding="utf-8") as f:
        for text in f:
            obj, _ = parse_line(text)
            if isinstance(obj, dict) and check(obj) is None:
                out.append(obj)
                if len(out) >= limit:
                    break
    return out


def seed_json(domain: str, folder: Path) -> dict:
    return {
        "domain": domain,
        "note": "합성 샘플입니다. 각 데이터셋의 JSON Schema 와 그 스키마를 통과한 앞쪽 행을 담았습니다.",
        "datasets": {d: {"schema": load_schema(domain, d), "rows": sample_rows(domain, d, folder)} for d in datasets(domain)},
    }


def prompt(domain: str, dataset: str) -> str:
    """The seed's augmentation prompt for one dataset, the schema written out in full."""
    w = _wording()[domain][dataset]
    schema = json.dumps(load_schema(domain, dataset), ensure_ascii=False, separators=(",", ":"))
    cases = ", ".join(f"({i}) {c}" for i, c in enumerate(w["hard_cases"], start=1))
    lead = f"{w['lead']} " if w.get("lead") else ""
    extra = f" {w['extra']}" if w.get("extra") else ""
    return (f"아래 JSON Schema 에 맞는 {josa(w['what'], '을/를')} 더 만들어 주세요. {schema} {lead}쉬운 데이터만 만들지 말 것 — "
            f"다음 하드 케이스를 의도적으로 섞어라: {cases}. 생성한 행은 반드시 위 스키마를 통과해야 하며, "
            f"형식을 깨뜨리는 시도는 별도로 3건만 표시해 두세요.{extra}")
