"""JSON Schemas of every dataset and verdict file, and the pydantic models used in code.

The JSON files are the contract shared with people and checks outside the project;
`<domain>/models.py` mirrors them for typed use, and a test keeps the two in agreement.

Decisions every input schema states: ids and codes compare case-sensitively after trimming
Unicode whitespace and leading/trailing format characters (zero-width space, zero-width joiner,
BOM), so "CH-001\u200b" is the id "CH-001"; integers with no natural bound are capped at 2^53 − 1;
`x-reference: true` marks a reference table, which must have at least one valid row.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from typing import Callable

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

SCHEMA_DIR = Path(__file__).resolve().parent
SCHEMA_ROOTS: dict[str, Path] = {}
"""Schema folders of domains registered from outside this package (a plug-in's, a test's)."""


def schema_path(domain: str, name: str) -> Path:
    return SCHEMA_ROOTS.get(domain, SCHEMA_DIR / domain) / f"{name}.schema.json"


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


_KINDS = {"integer": "integer", "number": "float", "boolean": "boolean", "array": "json", "object": "json", "string": "text"}


def column_kinds(domain: str, name: str) -> dict[str, str]:
    """Storage kind of each column (integer, float, boolean, json, text) from its JSON type."""
    out = {}
    for col, spec in load_schema(domain, name)["properties"].items():
        types = spec.get("type", "string")
        types = [t for t in (types if isinstance(types, list) else [types]) if t != "null"]
        kinds = {_KINDS.get(t, "text") for t in types}
        out[col] = kinds.pop() if len(kinds) == 1 else ("json" if "json" in kinds else "text")
    return out


def is_reference(domain: str, name: str) -> bool:
    """Whether a dataset is a reference table (`x-reference` in its schema): rows the rules look up
    (profiles, sheets, catalogs, phrases, …) rather than events they judge. One with no valid row
    is a data-quality failure, never a table that was meant to be empty."""
    return bool(load_schema(domain, name).get("x-reference"))


def required_columns(domain: str, name: str) -> tuple[str, ...]:
    return tuple(load_schema(domain, name).get("required", ()))


@lru_cache(maxsize=None)
def row_checker(domain: str, name: str) -> Callable[[object], str | None]:
    """A fast per-row check: None when the row is valid, else the first problem, located.

    The schema is compiled by jsonschema-rs for speed; a row it rejects, or holds a value it has
    no JSON form for (a NumPy integer, a key that is not text), is examined again with jsonschema,
    which stays the authority and gives the readable message.
    """
    fast = jsonschema_rs.validator_for(load_schema(domain, name))
    slow = validator(domain, name)

    def check(row: object) -> str | None:
        try:
            if fast.is_valid(row):
                return None
        except ValueError:
            pass
        error = best_match(slow.iter_errors(row))
        if error is None:
            return None
        where = ".".join(str(p) for p in error.absolute_path) or "(row)"
        return f"{where}: {error.message}"

    return check
