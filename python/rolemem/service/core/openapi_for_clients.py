"""The OpenAPI document as generated clients (and fuzzers) read it.

- A request field with a default is optional. openapi-typescript (7, default options) types
  every schema property that has a `default` as required, which suits answers (the field is
  always there) but not requests; so the schemas only requests use carry their defaults in
  the description instead. Answers keep theirs.
- A service running without keys declares none (a client or fuzzer would send, and expect
  refusals for, a key nothing checks). With keys, every operation naming a player declares
  the 403 of a key whose players glob does not match; with a rate limit, every keyed
  operation the 429 with its Retry-After and RateLimit-* headers.
- Times are the game's clock, naive: `format: date-time` (RFC 3339, an offset required)
  would say the opposite, so they are strings of the pattern the service checks
  (schemas.common.NAIVE_TIME).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI

from ..schemas.common import NAIVE_TIME
from .errors import DESCRIPTIONS

_REF = "#/components/schemas/"
_ERROR = {"application/json": {"schema": {"$ref": f"{_REF}ErrorBody"}}}
_SECONDS = {"schema": {"type": "integer", "minimum": 0}}
_RATE_HEADERS = {
    "Retry-After": {"description": "Seconds until a request may succeed.", **_SECONDS},
    "RateLimit-Limit": {"description": "Requests the bucket holds.", **_SECONDS},
    "RateLimit-Remaining": {"description": "Requests left now (0).", **_SECONDS},
    "RateLimit-Reset": {"description": "Seconds until the bucket is full.", **_SECONDS},
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
    _naive_times(document)
    if not keyed:
        document.get("components", {}).pop("securitySchemes", None)
        for operation in _operations(document):
            operation.pop("security", None)
            operation.get("responses", {}).pop("401", None)
    return document


def _gate_refusals(
    document: dict[str, Any], schemas: dict[str, Any], *, keyed: bool, limited: bool
) -> None:
    """The gate's answers on every operation it checks (those that declare the key)."""
    for operation in _operations(document):
        if "security" not in operation:
            continue  # open: the probes
        answers = operation.setdefault("responses", {})
        if limited:
            answers["429"] = {
                "description": DESCRIPTIONS[429],
                "headers": _RATE_HEADERS,
                "content": _ERROR,
            }
        if keyed and "403" not in answers and _names_a_player(operation, schemas):
            answers["403"] = {"description": DESCRIPTIONS[403], "content": _ERROR}


def _names_a_player(operation: dict[str, Any], schemas: dict[str, Any]) -> bool:
    if any(parameter.get("name") == "user_id" for parameter in operation.get("parameters", [])):
        return True
    for content in operation.get("requestBody", {}).get("content", {}).values():
        for name in _reached(content.get("schema", {}), schemas):
            properties = schemas.get(name, {}).get("properties", {})
            if "user_id" in properties:
                return True
    return False


def _naive_times(schema: Any) -> None:
    if isinstance(schema, dict):
        if schema.get("format") == "date-time":
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
        if isinstance(ref, str) and ref.startswith(_REF):
            name = ref[len(_REF) :]
            if name not in seen:
                seen.add(name)
                _reached(schemas.get(name, {}), schemas, seen)
        for value in schema.values():
            _reached(value, schemas, seen)
    elif isinstance(schema, list):
        for value in schema:
            _reached(value, schemas, seen)
    return seen
