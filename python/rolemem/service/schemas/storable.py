"""What the request guard stores (guard.check_json refuses the rest anywhere in a body, keys
included), said in every request model's JSON Schema (common.Request runs `storable` on it):

- text without NUL (PostgreSQL's text holds none): a pattern on every string and free-form
  object key that Python's re, Rust's regex (jsonschema-rs: schemathesis) and ECMA-262 read
  alike. No pattern says "no lone surrogate" (no UTF-8 store holds one; RFC 8259 8.2 and
  I-JSON make it no JSON string): a regex engine over UTF-8 cannot name one (and drops a
  pattern it cannot compile), and a class of the allowed characters compiles but costs
  schemathesis minutes an operation to draw from;
- an integer fits in 64 bits; a number is 0 or a normal double (PostgreSQL's double);
- a free-form value (`true`, `{}`) is any JSON of those: the StorableJson type.

A walk, not a type per field: the rule is the guard's, for every field of every request, and
pydantic has no per-direction string type to hang it on."""

from __future__ import annotations

import sys
from typing import Annotated, Any

from .component import COMPONENT_REF, Component

# no NUL; VISIBLE: and not blank, by every whitespace rule that judges it: ECMA's \s
# (\ufeff too), Unicode's White_Space (Rust's \s, pydantic's) and Python's str.isspace
STORABLE = "^[^\\u0000]*$"
VISIBLE = "^[^\\u0000]*[^\\s\\u001c-\\u001f\\u0085\\ufeff\\u0000][^\\u0000]*$"

# (below 2**63, not at most 2**63 - 1: FastAPI's OpenAPI model holds bounds as floats, and
# 2**63 - 1 as a float is 2**63; 2**63 and -(2**63) are exact)
INT64 = {"minimum": -(2**63), "exclusiveMaximum": 2**63}
_DOUBLE_MIN, _DOUBLE_MAX = sys.float_info.min, sys.float_info.max
# a double PostgreSQL holds: 0, or normal (no subnormal); integers among them as they are
_DOUBLE: list[dict[str, Any]] = [
    {"minimum": _DOUBLE_MIN, "maximum": _DOUBLE_MAX},
    {"minimum": -_DOUBLE_MAX, "maximum": -_DOUBLE_MIN},
    {"const": 0},
]
STORABLE_REF = {"$ref": COMPONENT_REF + "StorableJson"}


def _storable_json(_: dict[str, Any]) -> dict[str, Any]:
    """Any JSON value the guard lets through."""
    scalars: list[dict[str, Any]] = [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "string", "pattern": STORABLE},
        {"type": "integer", **INT64},
        {"type": "number", "anyOf": [dict(part) for part in _DOUBLE]},
    ]
    objects = {
        "type": "object",
        "propertyNames": {"pattern": STORABLE},
        "additionalProperties": STORABLE_REF,
    }
    # an array's items, not the component again: TypeScript (openapi-typescript's types)
    # refuses an array of the type being defined; objects (recursive) and arrays in them do
    items = {
        "anyOf": [*scalars, objects, {"type": "array", "items": {"anyOf": [*scalars, objects]}}]
    }
    return {
        "description": "Any JSON rolemem can store: text without NUL (or lone surrogates), "
        "integers that fit in 64 bits, numbers PostgreSQL's double holds (0, or normal).",
        "anyOf": [*scalars, {"type": "array", "items": items}, objects],
    }


# a free-form value of a request (validated as Any: the guard has checked it)
StorableJson = Annotated[Any, Component("StorableJson", _storable_json)]


def storable(schema: Any) -> Any:
    """`schema` (in place) as the guard stores it, by the rules above; not through $refs:
    each component is shaped once."""
    if isinstance(schema, dict):
        _nullable_as_type(schema)
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        if "string" in types and not ("enum" in schema or "const" in schema):
            pattern = schema.get("pattern")
            if pattern is None:
                schema["pattern"] = STORABLE
            elif pattern == "\\S":
                schema["pattern"] = VISIBLE
        if "integer" in types:
            schema.setdefault("minimum", INT64["minimum"])
            if "maximum" not in schema:
                schema.setdefault("exclusiveMaximum", INT64["exclusiveMaximum"])
        elif "number" in types and "anyOf" not in schema:
            schema["anyOf"] = [dict(part) for part in _DOUBLE]
        if schema.get("additionalProperties") is True:  # a free-form value
            schema["additionalProperties"] = STORABLE_REF
        if "object" in types and schema.get("additionalProperties") not in (None, False):
            schema.setdefault("propertyNames", {}).setdefault("pattern", STORABLE)
        for key, value in list(schema.items()):
            if key in ("properties", "$defs"):
                for field in value.values():
                    storable(field)
            elif key not in ("examples", "example", "default", "propertyNames"):
                storable(value)
    elif isinstance(schema, list):
        for value in schema:
            storable(value)
    return schema


def _nullable_as_type(schema: dict[str, Any]) -> None:
    """`anyOf: [{type: string, ...}, {type: null}]` (pydantic's optional field) as one schema
    of `type: [string, null]`: the same values, and fuzzers then keep its pattern."""
    options = schema.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and {"type": "null"} in options):
        return
    (other,) = [option for option in options if option != {"type": "null"}]
    if other.get("type") != "string" or "$ref" in other:
        return
    del schema["anyOf"]
    schema.update({**other, "type": ["string", "null"]})
