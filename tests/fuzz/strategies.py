"""Hypothesis strategies for hostile input, derived from each dataset's JSON Schema.

A generated line is built as a tree of values and `Raw` literals (text written into the line as
is: `1e400`, `"\\ud800"`, an integer wider than 64 bits), so the line holds exactly the bytes a
hostile producer would send. Valid rows draw their strings from the values the domain's sample
uses for the same column, so generated rows join the sample's (a chat line names a character
that has a sheet) and reach the rules instead of stopping at the first look-up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from schemas import load_schema


@dataclass(frozen=True)
class Raw:
    """JSON text written into the line as is."""

    text: str


def dumps(value) -> str:
    """One JSON line from a tree of values and `Raw` literals (keys may be `Raw` too)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps(k) if isinstance(k, Raw) else json.dumps(k, ensure_ascii=False)}: {dumps(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


# -- hostile values ------------------------------------------------------------------------------

ODD_TEXT = [
    "", " ", "\u3000", "\u200b", "\ufeff", "\u200d", "\u202e", "\u2028", "\u0085", "\x00", "\t\n", "e\u0301",
    "😀", "👩‍👩‍👧", "<script>alert(1)</script>", "'\"\\", "%s%n", "null", "NaN", "a" * 300,
]
LONE_SURROGATES = [Raw('"\\ud800"'), Raw('"x\\udfffy"'), Raw('"\\uDBFF"')]
EXTREME_NUMBERS = [
    Raw("0"), Raw("-1"), Raw("-0.0"), Raw("1.0"), Raw("1e400"), Raw("-1e400"), Raw("1e-400"), Raw("5e-324"),
    Raw("1e30"), Raw(str(2**63 - 1)), Raw(str(2**63)), Raw(str(-(2**63) - 1)), Raw("9" * 40), Raw(str(2**53 + 1)),
    Raw("1.7976931348623157e308"), Raw("120.5"), Raw("121"), Raw("900"), Raw("901"), Raw("6"),
]
WRONG_TYPES = [None, True, False, "x", "1", 1, 1.5, [], ["x"], {}, {"a": 1}]
TIMESTAMPS = [
    "2026-09-08T20:05:01", "2026-09-08T20:05:31+09:00", "2026-09-08T11:05:01Z", "2026-09-08T11:05:01z",
    "2026-09-30T11:55:00.123456789+09:00", "2026-09-21T09:00:05.1234567891", "2026-09-08T20:05:01+09:00:30",
    "2026-09-08T20:05:01-14:00", "2026-09-08T20:05:01+23:59", "2026-09-08 20:05:01", "20260908T200501",
    "2026-09-08", "2026-W37-2T10:00:00", "0001-01-01T00:00:00", "1677-09-21T00:12:43", "1829-12-31T23:59:59Z",
    "1830-01-01T00:00:00Z", "2109-12-31T23:59:59Z", "2110-01-01T00:00:00Z", "2262-04-12T00:00:00",
    "9999-12-31T23:59:59-14:00", "2026-02-30T10:00:00", "2026-09-08T24:00:00", "어제 밤", " 2026-10-01T10:00:00 ",
]
PADS = ["\u200b", "\ufeff", "\u200d", " ", "\u3000", "\t"]
MALFORMED_LINES = [
    b"{", b'{"a": 1', b"[1, 2]", b'"text"', b"42", b"NaN", b"{}", b'{"a": NaN}', b'{"a": Infinity}',
    b"[" * 5000 + b"]" * 5000, b'{"a": 1} trailing', b"\xef\xbb\xbf{}", b'{"a": "\xed\x95"}', b"\xff\xfe{}",
    b'{"a": "\\x41"}', b'{"a": 1, "a": 2}', b'{"a": 1e400, "b": NaN}', b'{"a": 99999999999999999999} x',
]


def is_time_field(name: str, spec: dict) -> bool:
    return name.endswith("_at") or "ISO-8601" in spec.get("description", "")


def types_of(spec: dict) -> list[str]:
    t = spec.get("type", "string")
    return t if isinstance(t, list) else [t]


# -- values from a schema ------------------------------------------------------------------------


def value_for(name: str, spec: dict, pools: dict[str, list]) -> st.SearchStrategy:
    """A value the schema accepts for this column, often one the sample uses."""
    options = []
    for t in types_of(spec):
        if "enum" in spec:
            options.append(st.sampled_from([v for v in spec["enum"] if v is None or t != "null"]))
        elif t == "null":
            options.append(st.none())
        elif t == "string" and is_time_field(name, spec):
            options.append(st.sampled_from(TIMESTAMPS[:5]) | st.sampled_from(pools.get(name) or TIMESTAMPS[:1]))
        elif t == "string":
            pool = [v for v in pools.get(name, []) if isinstance(v, str)]
            options.append(st.sampled_from(pool) if pool else st.text(max_size=12))
            options.append(st.text(alphabet=st.characters(codec="utf-8"), max_size=8))
        elif t == "integer":
            lo, hi = spec.get("minimum", -(10**6)), spec.get("maximum", 10**6)
            options.append(st.integers(lo, min(hi, lo + 10**6)))
        elif t == "number":
            lo, hi = spec.get("minimum", -(10**3)), spec.get("maximum", 10**3)
            options.append(st.floats(lo, hi, allow_nan=False, allow_infinity=False) | st.integers(int(lo), int(hi)))
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "array":
            item = spec.get("items", {})
            pool = [x for v in pools.get(name, []) if isinstance(v, list) for x in v]
            inner = st.sampled_from(pool) if pool else value_for(name + "[]", item, pools)
            options.append(st.lists(inner, max_size=4))
        elif t == "object":
            extra = spec.get("additionalProperties", {})
            keys = [k for v in pools.get(name, []) if isinstance(v, dict) for k in v] or ["k"]
            options.append(st.dictionaries(st.sampled_from(keys), value_for(name + "{}", extra, pools), max_size=4))
    return st.one_of(options)


def hostile_for(name: str, spec: dict) -> st.SearchStrategy:
    """A value meant to break the gates behind this column."""
    options = [st.sampled_from(WRONG_TYPES), st.sampled_from(EXTREME_NUMBERS), st.sampled_from(LONE_SURROGATES),
               st.sampled_from(ODD_TEXT)]
    if is_time_field(name, spec) or "string" in types_of(spec):
        options.append(st.sampled_from(TIMESTAMPS))
    if "object" in types_of(spec):
        options.append(st.just({"x": Raw("1e400")}) | st.just({Raw('"\\ud800"'): 1}) | st.just({"x": Raw("9" * 30)}))
    if "array" in types_of(spec):
        options.append(st.just([Raw('"\\ud800"')]) | st.just([None]) | st.just([1]))
    return st.one_of(options)


@st.composite
def row(draw, domain: str, dataset: str, pools: dict[str, list], id_field: str, ids: list[str]):
    """A row of the dataset: valid per its schema, then maybe made hostile in one or two ways."""
    schema = load_schema(domain, dataset)
    props = schema["properties"]
    required = set(schema.get("required", ()))
    obj: dict = {}
    for name, spec in props.items():
        if name in required or draw(st.booleans()):
            obj[name] = draw(value_for(name, spec, pools))
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["hostile", "hostile", "missing", "extra", "padded_id", "duplicate_id"]))
        name = draw(st.sampled_from(sorted(props)))
        if kind == "hostile":
            obj[name] = draw(hostile_for(name, props[name]))
        elif kind == "missing":
            obj.pop(name, None)
        elif kind == "extra":
            obj[draw(st.sampled_from(["extra", "note2", "_obj", "file", "line", "text"]))] = draw(hostile_for(name, props[name]))
        elif kind == "padded_id" and isinstance(obj.get(id_field), str):
            obj[id_field] = draw(st.sampled_from(PADS)) + obj[id_field] + draw(st.sampled_from(PADS))
        elif kind == "duplicate_id" and ids:
            obj[id_field] = draw(st.sampled_from(ids))
    return dumps(obj).encode("utf-8")


@st.composite
def dataset_lines(draw, domain: str, dataset: str, sample: list[bytes], id_field: str):
    """A file's lines: some of the sample's, generated rows and malformed lines, in any order."""
    parsed = [json.loads(b) for b in sample if _is_json(b)]
    pools: dict[str, list] = {}
    for obj in parsed:
        for k, v in obj.items():
            pools.setdefault(k, []).append(v)
    ids = [v for v in pools.get(id_field, []) if isinstance(v, str)]
    keep = draw(st.integers(0 if not load_schema(domain, dataset).get("x-reference") else 1, len(sample)))
    lines = list(sample[:keep])
    generated = st.one_of(row(domain, dataset, pools, id_field, ids), row(domain, dataset, pools, id_field, ids),
                          st.sampled_from(MALFORMED_LINES))
    lines += draw(st.lists(generated, max_size=5))
    return draw(st.permutations(lines)) if draw(st.booleans()) else lines


def _is_json(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def write_dataset(folder: Path, dataset: str, lines: list[bytes], crlf: bool = False) -> None:
    end = b"\r\n" if crlf else b"\n"
    (folder / f"{dataset}.jsonl").write_bytes(end.join(lines) + (end if lines else b""))
