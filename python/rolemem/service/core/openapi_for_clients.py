"""The OpenAPI document as generated clients (and fuzzers) read it.

- A request field with a default is optional. openapi-typescript (7, default options) types
  every schema property that has a `default` as required, which suits answers (the field is
  always there) but not requests; so the schemas only requests use carry their defaults in
  the description instead. Answers keep theirs.
- A service running without keys declares none (a client or fuzzer would send, and expect
  refusals for, a key nothing checks). With keys, every keyed operation but the reads all
  players share (gate.SHARED_READS) declares the 403 of a key with a players glob (another
  player named, or none); with a rate limit, every keyed operation the 429 with its
  Retry-After and RateLimit-* headers, and its 2xx answers the RateLimit-* headers.
- Times are the game's clock, naive: `format: date-time` (RFC 3339, an offset required)
  would say the opposite, so they are strings of the pattern the service checks
  (schemas.common.NAIVE_TIME).
- "Exactly one of" is a `oneOf` of whole objects: each branch carries every property of the
  schema (openapi-python-client reads only the branches of a schema that also has
  properties of its own; openapi-typescript reads both alike).
- The designer imports' bodies say what the import takes (openapi_imports).
- A request body holds only what the request guard lets through (text without NUL or lone
  surrogates, 64-bit integers, doubles PostgreSQL holds), said on every string, number and
  free-form value of a request schema (openapi_storable).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI

from ..schemas.common import NAIVE_TIME
from .errors import DESCRIPTIONS
from .gate import SHARED_READS
from .openapi_imports import install as install_imports
from .openapi_storable import COMPONENT_REF, STORABLE_JSON, storable, storable_json

_ERROR = {"application/json": {"schema": {"$ref": f"{COMPONENT_REF}ErrorBody"}}}
_SECONDS = {"schema": {"type": "integer", "minimum": 0}}
_RATE_HEADERS = {
    "Retry-After": {"description": "Seconds until a request may succeed.", **_SECONDS},
    "RateLimit-Limit": {"description": "Requests the bucket holds.", **_SECONDS},
    "RateLimit-Remaining": {"description": "Requests left now (0).", **_SECONDS},
    "RateLimit-Reset": {"description": "Seconds until the bucket is full.", **_SECONDS},
}
# on an answer that took a token (of the bucket with the fewest requests left)
_BUDGET_HEADERS = {
    "RateLimit-Limit": _RATE_HEADERS["RateLimit-Limit"],
    "RateLimit-Remaining": {"description": "Requests left now.", **_SECONDS},
    "RateLimit-Reset": _RATE_HEADERS["RateLimit-Reset"],
}


def install(app: FastAPI, *, keyed: bool = True, limited: bool = False) -> None:
    """`app.openapi()` answers the shaped document (built once, as FastAPI caches it).
    `keyed`: the service checks a key (else the key scheme is left out); `limited`: a rate
    limit is set (429 declared)."""
    build = app.openapi

    def shaped() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = shaped_document(build(), keyed=keyed, limited=limited)
        return app.openapi_schema

    app.openapi = shaped  # type: ignore[method-assign]


def shaped_document(
    document: dict[str, Any], *, keyed: bool = True, limited: bool = False
) -> dict[str, Any]:
    """`document` with the defaults of request-only schemas moved into their descriptions,
    naive times as their pattern, the gate's refusals declared (403, 429) and (not `keyed`)
    no key scheme."""
    schemas = document.get("components", {}).get("schemas", {})
    _gate_refusals(document, schemas, keyed=keyed, limited=limited)
    install_imports(document, schemas)
    requests, answers = set(), set()
    for operation in _operations(document):
        for content in operation.get("requestBody", {}).get("content", {}).values():
            requests |= _reached(content.get("schema", {}), schemas)
        for response in operation.get("responses", {}).values():
            for content in response.get("content", {}).values():
                answers |= _reached(content.get("schema", {}), schemas)
    for name in sorted(requests - answers):
        for field in schemas[name].get("properties", {}).values():
            if "default" in field:
                default = json.dumps(field.pop("default"), ensure_ascii=False)
                field["description"] = f"{field.get('description', '')} Default: {default}."
    for name in sorted(requests):
        storable(schemas[name])
        _whole_branches(schemas[name], name, schemas)
    for operation in _operations(document):
        for content in operation.get("requestBody", {}).get("content", {}).values():
            storable(content.get("schema", {}))
    if STORABLE_JSON in json.dumps(document):
        schemas[STORABLE_JSON] = storable_json()
    _naive_times(document)
    for operation in _operations(document):
        _one_role(operation)
    if not keyed:
        document.get("components", {}).pop("securitySchemes", None)
        for operation in _operations(document):
            operation.pop("security", None)
            operation.get("responses", {}).pop("401", None)
    return document


def _gate_refusals(
    document: dict[str, Any], schemas: dict[str, Any], *, keyed: bool, limited: bool
) -> None:
    """The gate's answers on every operation it checks (those that declare the key): with a
    rate, the 429 and the RateLimit-* headers of the answers that took a token; with keys,
    the 403 of a key's players glob (every operation but the reads all players share)."""
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "security" not in operation:
                continue  # open: the probes
            answers = operation.setdefault("responses", {})
            if limited:
                for status, answer in answers.items():
                    if status.startswith("2"):
                        answer.setdefault("headers", {}).update(_BUDGET_HEADERS)
                answers["429"] = {
                    "description": DESCRIPTIONS[429],
                    "headers": _RATE_HEADERS,
                    "content": _ERROR,
                }
            if keyed and "403" not in answers and (method.upper(), path) not in SHARED_READS:
                answers["403"] = {"description": DESCRIPTIONS[403], "content": _ERROR}


def _whole_branches(schema: dict[str, Any], name: str, schemas: dict[str, Any]) -> None:
    """`properties` + `oneOf: [partial branches]` as `oneOf: [whole objects]`: the same
    values (P and (B1 xor B2) is (P and B1) xor (P and B2)), each branch's properties the
    schema's, narrowed to the type the branch names. A property holding an object of its
    own becomes a component both branches name (a generator would make it twice)."""
    branches = schema.get("oneOf")
    if not (isinstance(branches, list) and "properties" in schema):
        return
    properties, required = schema.pop("properties"), schema.pop("required", [])
    for field, prop in properties.items():
        if "object" in json.dumps([option.get("type") for option in prop.get("anyOf", [prop])]):
            component = name + "".join(part.title() for part in field.split("_"))
            schemas[component] = prop
            properties[field] = {"$ref": COMPONENT_REF + component}
    extra = schema.pop("additionalProperties", None)
    whole = []
    for branch in branches:
        merged = {
            name: _narrowed(prop, branch.get("properties", {}).get(name))
            for name, prop in properties.items()
        }
        shaped: dict[str, Any] = {
            "type": "object",
            "properties": merged,
            "required": sorted({*required, *branch.get("required", [])}),
        }
        if extra is not None:
            shaped["additionalProperties"] = extra
        whole.append(shaped)
    schema.pop("type", None)
    schema["oneOf"] = whole


def _narrowed(prop: dict[str, Any], branch: dict[str, Any] | None) -> dict[str, Any]:
    """`prop` where the branch says its type: the option of that type (null: none), with
    what else the branch says of it (an `enum`)."""
    if branch is None:
        return prop
    kind = branch.get("type")
    keep = {k: v for k, v in prop.items() if k in ("title", "description", "examples")}
    options = prop.get("anyOf", [prop])
    for option in options:
        types = option.get("type")
        if types == kind or (isinstance(types, list) and kind in types):
            # the branch's type and values (not the bounds the storable pass gave it)
            narrowed = {**option, **keep, "type": kind}
            if "enum" in branch:
                narrowed["enum"] = narrowed["examples"] = list(branch["enum"])
            if kind == "null":
                return {"type": "null", **keep}
            return narrowed
    return {**keep, **branch}


# query parameters of which a request gives at most one (the route refuses both), as one
# object parameter of that name and description
AT_MOST_ONE = {
    ("role_id", "script_role_id"): (
        "role",
        "The character: by role (`role_id`) or by script NPC (`script_role_id`), at most one.",
    )
}


def _one_role(operation: dict[str, Any]) -> None:
    """`role_id` and `script_role_id` in a query as one object parameter (form, exploded: on
    the wire each property is its own query parameter, as before) of at most one property:
    OpenAPI has no other way to relate two parameters."""
    for fields, (name, description) in AT_MOST_ONE.items():
        parameters = operation.get("parameters", [])
        given = {p["name"]: p for p in parameters if p["in"] == "query" and p["name"] in fields}
        if len(given) < len(fields):
            continue
        operation["parameters"] = [p for p in parameters if p not in given.values()]
        operation["parameters"].append(
            {
                "name": name,
                "in": "query",
                "style": "form",
                "explode": True,
                "required": False,
                "description": description,
                "schema": {
                    "type": "object",
                    "properties": {field: _not_null(given[field]["schema"]) for field in fields},
                    "additionalProperties": False,
                    "maxProperties": 1,
                },
            }
        )


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter's schema less its null (a property left out is the null)."""
    keep = {k: v for k, v in schema.items() if k in ("title", "description", "examples")}
    for option in schema.get("anyOf", [schema]):
        if option.get("type") != "null":
            return {**option, **keep}
    return schema


def _naive_times(schema: Any) -> None:
    if isinstance(schema, dict):
        # a game time (every date-time but the service's own clock, ServiceTime)
        if schema.get("format") == "date-time" and not schema.pop("x-utc-offset", False):
            del schema["format"]
            # the pattern's own bounds: 2021-02-21T12:00 to 2021-02-21T12:00:00.000000
            schema.update(pattern=NAIVE_TIME, minLength=16, maxLength=26)
        for value in schema.values():
            _naive_times(value)
    elif isinstance(schema, list):
        for value in schema:
            _naive_times(value)


def _operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in document.get("paths", {}).values():
        for method, operation in path.items():
            if method in ("get", "put", "post", "delete", "patch") and isinstance(operation, dict):
                yield operation


def _reached(schema: Any, schemas: dict[str, Any], seen: set[str] | None = None) -> set[str]:
    """The component schemas `schema` names, directly or through others."""
    seen = set() if seen is None else seen
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(COMPONENT_REF):
            name = ref[len(COMPONENT_REF) :]
            if name not in seen:
                seen.add(name)
                _reached(schemas.get(name, {}), schemas, seen)
        for value in schema.values():
            _reached(value, schemas, seen)
    elif isinstance(schema, list):
        for value in schema:
            _reached(value, schemas, seen)
    return seen
