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

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from schemas.column_check import ColumnCheck

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


class RowChecker:
    """A fast per-row check: `checker(row)` is None when the row is valid, else the first problem,
    located. `columns` answers the same question for many rows at once, for the rows that surely pass
    (`ColumnCheck`); the others are asked one at a time.

    The schema is compiled by jsonschema-rs for speed; a row it rejects, or holds a value it has
    no JSON form for (a NumPy integer, a key that is not text), is examined again with jsonschema,
    which stays the authority and gives the readable message.
    """

    def __init__(self, domain: str, name: str):
        self.schema = schema = load_schema(domain, name)
        self._fast = jsonschema_rs.validator_for(schema)
        self._slow = validator(domain, name)
        self.columns = ColumnCheck(schema)

    def __call__(self, row: object) -> str | None:
        try:
            if self._fast.is_valid(row):
                return None
        except ValueError:
            pass
        error = best_match(self._slow.iter_errors(row))
        if error is None:
            return None
        where = ".".join(str(p) for p in error.absolute_path) or "(row)"
        return f"{where}: {error.message}"


@lru_cache(maxsize=None)
def row_checker(domain: str, name: str) -> RowChecker:
    """The `RowChecker` of a dataset (one per dataset, compiled once)."""
    return RowChecker(domain, name)
