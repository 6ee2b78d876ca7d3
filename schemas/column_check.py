"""Which rows surely pass a dataset's JSON Schema, decided a column at a time.

The input schemas are flat: per property a type (or several), a range, an enum of codes, a list of
texts. `ColumnCheck.passing` checks those over a whole column at once (pandas' type inference and
NumPy, in C) and answers, per row, whether the row surely passes. It never answers yes for a row the
schema rejects; it may answer no for a row the schema accepts (an integer written 5.0, a keyword it
does not read), and such rows, like every rejected row, are checked again row by row by `row_checker`,
which stays the authority and words the reason. A schema with a keyword it does not know at the top
is answered no for every row.
"""

from __future__ import annotations

import math
from itertools import chain

import numpy as np
import pandas as pd

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})
"""Keywords that say nothing about validity."""

_TOP = frozenset({"type", "properties", "required"}) | _ANNOTATIONS
_PROPERTY = frozenset({"type", "minimum", "maximum", "enum", "items"}) | _ANNOTATIONS

_PYTHON = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
           "object": (dict,), "null": ()}
"""Python types a parsed JSON value of each schema type has (bool is not an integer to JSON Schema;
an integral float such as 5.0 is, and is left to the row check)."""

_INFERRED = {"string": {str}, "integer": {int}, "boolean": {bool}, "floating": {float},
             "mixed-integer-float": {int, float}, "empty": set()}
"""Python types every value has, by what `infer_dtype` says of a column without missing values."""


def _annotation(key: str) -> bool:
    return key in _ANNOTATIONS or key.startswith("x-")


class _Property:
    """One property's constraints, as far as a column check reads them."""

    def __init__(self, name: str, spec: dict, required: bool):
        self.name, self.required = name, required
        kinds = spec.get("type")
        kinds = list(_PYTHON) if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
        self.known = isinstance(spec, dict) and all(k in _PROPERTY or _annotation(k) for k in spec) and all(
            k in _PYTHON for k in kinds)
        self.nullable = "null" in kinds
        self.types = tuple({t for k in kinds if k in _PYTHON for t in _PYTHON[k]})
        self.minimum, self.maximum = spec.get("minimum"), spec.get("maximum")
        enum = spec.get("enum")
        # enum members compared by Python equality: sound for text (True == 1 in Python, not in JSON Schema)
        self.enum = None if enum is None else frozenset(e for e in enum if isinstance(e, str))
        if enum is not None and not all(e is None or isinstance(e, str) for e in enum):
            self.known = False
        if enum is not None and None not in enum:
            self.nullable = False
        items = spec.get("items")
        self.items = None if items is None else _item_types(items)
        if items is not None and self.items is None:
            self.known = False
        for bound in (self.minimum, self.maximum):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound)):
                self.known = False

    def passing(self, column: np.ndarray, missing: np.ndarray) -> np.ndarray:
        """Per row, whether this property's value surely passes: `column` is an object array in which
        NaN marks an absent field, `missing` where it is None or NaN (`pd.isna`)."""
        ok = np.ones(len(column), dtype=bool)
        gaps = np.flatnonzero(missing)
        if len(gaps):
            null = np.equal(column[gaps], None)
            if self.required:
                ok[gaps[~null]] = False
            if not self.nullable:
                ok[gaps[null]] = False
        if len(gaps) == len(column):
            return ok
        present = np.flatnonzero(~missing) if len(gaps) else slice(None)
        if not self.known:
            ok[present] = False
            return ok
        values = column[present]
        kind = pd.api.types.infer_dtype(values, skipna=False)
        inferred = _INFERRED.get(kind)
        if inferred is not None and inferred <= set(self.types):
            good = np.ones(len(values), dtype=bool)
        else:
            types = self.types
            good = np.fromiter((type(v) in types for v in values.tolist()), dtype=bool, count=len(values))
        if self.minimum is not None or self.maximum is not None:
            good &= self._in_range(values, kind)
        if self.enum is not None:
            members = self.enum
            good &= np.fromiter((type(v) is str and v in members for v in values.tolist()), dtype=bool, count=len(values))
        if self.items is not None:
            good &= _items_pass(values, self.items)
        ok[present] &= good
        return ok

    def _in_range(self, values: np.ndarray, kind: str) -> np.ndarray:
        """Numbers within [minimum, maximum], exactly; values that are not numbers are left to the type."""
        low, high = self.minimum, self.maximum
        if kind == "integer":
            try:
                numbers = values.astype(np.int64)
            except OverflowError:
                numbers = None
            if numbers is not None:  # integers against integral bounds: exact in int64
                fits = np.ones(len(values), dtype=bool)
                if low is not None:
                    fits &= numbers >= _clip(math.ceil(low))
                if high is not None:
                    fits &= numbers <= _clip(math.floor(high))
                return fits
        numeric = [(type(v) is int or type(v) is float) for v in values.tolist()]
        return np.fromiter(((not is_number) or ((low is None or v >= low) and (high is None or v <= high))
                            for v, is_number in zip(values.tolist(), numeric)), dtype=bool, count=len(values))


def _clip(bound: int) -> int:
    """An integral bound as an int64 comparison keeps it (int64 values lie within)."""
    return max(min(bound, 2**63 - 1), -(2**63))


def _item_types(items) -> tuple | None:
    """Python types of a list's elements when `items` is a plain type; None for anything richer."""
    if not isinstance(items, dict) or any(not (k == "type" or _annotation(k)) for k in items):
        return None
    kinds = items.get("type")
    kinds = list(_PYTHON) if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)
    if not all(k in _PYTHON for k in kinds):
        return None
    return tuple({t for k in kinds for t in _PYTHON[k]}) + ((type(None),) if "null" in kinds else ())


def _items_pass(values: np.ndarray, types: tuple) -> np.ndarray:
    """Per value, whether it is not a list or every element has one of `types`: one type inference
    over all elements, a look at each list only when some element is of another type."""
    lists = [v if type(v) is list else () for v in values.tolist()]
    flat = np.empty(sum(map(len, lists)), dtype=object)
    flat[:] = list(chain.from_iterable(lists))
    inferred = _INFERRED.get(pd.api.types.infer_dtype(flat, skipna=False))
    if inferred is not None and inferred <= set(types):
        return np.ones(len(values), dtype=bool)
    return np.fromiter((all(type(x) in types for x in v) for v in lists), dtype=bool, count=len(values))


class ColumnCheck:
    """A dataset schema's column-wise check (see the module's docstring)."""

    def __init__(self, schema: dict):
        props = schema.get("properties", {})
        self.names: tuple[str, ...] = tuple(props)
        required = set(schema.get("required", ()))
        self.known = (schema.get("type") == "object" and all(k in _TOP or _annotation(k) for k in schema)
                      and required <= set(props) and all(isinstance(s, dict) for s in props.values()))
        self._properties = [_Property(name, spec, name in required) for name, spec in props.items()] if self.known else []

    def passing(self, cells: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """Per row, whether the row surely passes; `cells` is the rows' values, one column per name in
        `names` (as `pd.DataFrame(objects, columns=names, dtype=object)` holds them: NaN where absent),
        `missing` is `pd.isna(cells)` when the caller has it. The rows must be JSON objects."""
        missing = pd.isna(cells) if missing is None else missing
        ok = np.full(len(cells), self.known, dtype=bool)
        for j, prop in enumerate(self._properties):
            ok &= prop.passing(cells[:, j], missing[:, j])
        return ok
