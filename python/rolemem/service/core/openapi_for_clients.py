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

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI

from ..schemas.component import COMPONENT_REF
from .errors import DESCRIPTIONS
from .gate import SHARED_READS

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
    """`document` with the gate's refusals declared (403, 429) and (not `keyed`) no key
    scheme."""
    schemas = document.get("components", {}).get("schemas", {})
    _exact_integers(document)
    _gate_refusals(document, schemas, keyed=keyed, limited=limited)
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


def _exact_integers(schema: Any) -> None:
    """The 64-bit bounds of integers (schemas.storable.INT64) as the integers they are:
    FastAPI validates the document through its OpenAPI model, whose bounds are floats, and
    2**63 - 1 has no float (a bound written as 9.223372036854776e+18 reads, as a decimal,
    past 64 bits)."""
    if isinstance(schema, dict):
        if schema.get("minimum") == -(2**63):
            schema["minimum"] = -(2**63)
        if schema.get("exclusiveMaximum") == 2**63:
            del schema["exclusiveMaximum"]
            schema["maximum"] = 2**63 - 1
        for value in schema.values():
            _exact_integers(value)
    elif isinstance(schema, list):
        for value in schema:
            _exact_integers(value)


def _operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in document.get("paths", {}).values():
        for method, operation in path.items():
            if method in ("get", "put", "post", "delete", "patch") and isinstance(operation, dict):
                yield operation
