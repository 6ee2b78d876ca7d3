"""JSON Schemas of every dataset and verdict file, and the pydantic models used in code.

The JSON files are the contract shared with people and checks outside the project;
`<domain>/models.py` mirrors them for typed use, and a test keeps the two in agreement.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parent


def schema_path(domain: str, name: str) -> Path:
    return SCHEMA_DIR / domain / f"{name}.schema.json"


@lru_cache(maxsize=None)
def load_schema(domain: str, name: str) -> dict:
    path = schema_path(domain, name)
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


@lru_cache(maxsize=None)
def validator(domain: str, name: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(domain, name))


def columns(domain: str, name: str) -> tuple[str, ...]:
    """The column names a dataset's schema declares, in schema order."""
    return tuple(load_schema(domain, name)["properties"])


def required_columns(domain: str, name: str) -> tuple[str, ...]:
    return tuple(load_schema(domain, name).get("required", ()))
