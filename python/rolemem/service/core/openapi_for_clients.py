"""The two things the OpenAPI document says that no declaration can, written after FastAPI
builds it:

- The RateLimit-* headers of a rate-limited operation's 2xx answer: a route group's
  `responses=` (errors.gate_responses) applies to every route of it alike, and cannot name
  each route's own success status (200, 201 or 202) without declaring the others too.
- The exact 64-bit bounds of a request's integers (schemas.storable.INT64): FastAPI's
  OpenAPI model keeps bounds as floats, where 2**63 - 1 has no float and -(2**63), read as
  a decimal, is past 64 bits, so a client taking the bound at its word sends what the
  service refuses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from .errors import BUDGET_HEADERS


def install(app: FastAPI) -> None:
    """`app.openapi()` answers the finished document (built once, as FastAPI caches it)."""
    build = app.openapi

    def finished() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = finish(build())
        return app.openapi_schema

    app.openapi = finished  # type: ignore[method-assign]


def finish(document: dict[str, Any]) -> dict[str, Any]:
    """`document`, finished (see the module docstring)."""
    for item in document.get("paths", {}).values():
        for operation in item.values():
            answers = operation.get("responses", {}) if isinstance(operation, dict) else {}
            if "429" in answers:
                for status, answer in answers.items():
                    if status.startswith("2"):
                        answer.setdefault("headers", {}).update(BUDGET_HEADERS)
    _exact_integers(document)
    return document


def _exact_integers(schema: Any) -> None:
    """INT64's bounds (storable writes the two that are exact as floats) as integers."""
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
