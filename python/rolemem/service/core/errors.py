"""One error shape for every non-2xx answer, built here and nowhere else:
`{"error": {"type", "message", "field"?}}`. Handlers never echo the request's values back
(a lone surrogate or a NaN in them would make the error itself unencodable); what an error
quotes of a request (a field's name, an id) is bounded here, once for every error."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ...errors import (
    BusyError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    RolememError,
    field_path,
)
from .access import flat_routes


class ClientGone(BusyError):
    """The client left before the answer: its work was stopped, and the 503 nobody reads is
    the one shape's."""


# the longest message or field an error has: one that would be longer (it quotes a request's
# own text: a key 50,000 characters long, an id) keeps its start and its end around a "…", so
# a client learns where, and a request cannot make its error as large as itself
QUOTED_LENGTH = 500


def _bounded(text: str) -> str:
    if len(text) <= QUOTED_LENGTH:
        return text
    head = (QUOTED_LENGTH - 1) // 2  # and the tail the rest, around the "…"
    return f"{text[:head]}…{text[head + 1 - QUOTED_LENGTH :]}"


class ErrorDetail(BaseModel):
    type: str = Field(description="What kind of error.", examples=["SaveNotFoundError"])
    message: str = Field(
        max_length=QUOTED_LENGTH,
        description="What is wrong and what would be valid; a longer one is cut to its start "
        "and its end around a …",
        examples=["no save with id 7"],
    )
    field: str | None = Field(
        default=None,
        max_length=QUOTED_LENGTH,
        description="The request field it is about (`lines[2].content`, `save_id`), if one; "
        "a longer one is cut to its start and its end around a …",
        examples=["save_id"],
    )


class ErrorBody(BaseModel):
    """Every non-2xx answer."""

    error: ErrorDetail = Field(
        description="What went wrong.",
        examples=[
            {"type": "SaveNotFoundError", "message": "no save with id 7", "field": "save_id"}
        ],
    )


DESCRIPTIONS = {
    400: "A value is refused, or a header given once (X-API-Key, Content-Type, "
    "Content-Length, Idempotency-Key) is given twice: the message says which.",
    401: "Missing or wrong X-API-Key (or designer key).",
    403: "The save has no owner (set one, or start the service with --open-ownerless-saves), "
    "or the key may not act for the player named (its players glob), or a key with a "
    "players glob names no player.",
    404: "No such resource, or not the caller's (another player's save is never revealed).",
    408: "The body did not arrive within --body-timeout of the headers.",
    409: "Conflicts with what is stored (an id taken, an idempotency key reused).",
    413: "The body is larger than the service accepts.",
    415: "The body is not sent as JSON (Content-Type: application/json).",
    422: "A field is missing, of the wrong type, out of range or too long, or the body is not "
    "JSON rolemem can store (or is nested too deep).",
    429: "Over the player's or the key's rate limit: try again after Retry-After seconds.",
    431: "The request head (request line and headers) is over 16 KiB.",
    503: "The work did not fit its time budget or queue, or kept meeting other writes; "
    "nothing changed (but for a maintenance run, whose message says so), try again.",
}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` for a route: each status with the error shape."""
    return {code: {"model": ErrorBody, "description": DESCRIPTIONS[code]} for code in codes}


_SECONDS = {"schema": {"type": "integer", "minimum": 0}}
RATE_HEADERS = {
    "Retry-After": {"description": "Seconds until a request may succeed.", **_SECONDS},
    "RateLimit-Limit": {"description": "Requests the bucket holds.", **_SECONDS},
    "RateLimit-Remaining": {"description": "Requests left now (0).", **_SECONDS},
    "RateLimit-Reset": {"description": "Seconds until the bucket is full.", **_SECONDS},
}
# on an answer that took a token (of the bucket with the fewest requests left)
BUDGET_HEADERS = {
    "RateLimit-Limit": RATE_HEADERS["RateLimit-Limit"],
    "RateLimit-Remaining": {"description": "Requests left now.", **_SECONDS},
    "RateLimit-Reset": RATE_HEADERS["RateLimit-Reset"],
}


# what any request may be answered before its route (the gate's repeated header, guard.py's
# body checks, connections.py's head limit)
EVERY_ROUTE = responses(400, 408, 413, 422, 431)


def gate_responses(*, keyed: bool, limited: bool, shared: bool) -> dict[int | str, Any]:
    """`responses=` for the routers of a route group: the gate's answers (gate.py); a read
    every player shares (`shared`) has no 403 of the players glob."""
    answers = responses(401) if keyed else {}
    if keyed and not shared:
        answers |= responses(403)
    if limited:
        answers |= {429: {**responses(429)[429], "headers": RATE_HEADERS}}
    return answers


def error_body(kind: str, message: str, field: str | None = None) -> dict[str, Any]:
    detail: dict[str, Any] = {"type": kind, "message": _bounded(message)}
    if field is not None:
        detail["field"] = _bounded(field)
    return {"error": detail}


def error_response(status: int, kind: str, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content=error_body(kind, message, field))


def invalid(location: tuple[Any, ...], message: str) -> RequestValidationError:
    """The 422 of a value a route refuses itself (not its model), at `location`."""
    return RequestValidationError([{"type": "value_error", "loc": location, "msg": message}])


class UnsupportedMediaType(RolememError):
    """A body sent as another Content-Type than the route reads (field: Content-Type)."""


# an error's status: that of the first kind it is, else 400 (a missing or wrong key is the
# gate's 401, before any route runs)
_STATUSES = (
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (UnsupportedMediaType, 415),
    (BusyError, 503),
)


def install(app: FastAPI) -> None:
    """The handlers that turn every failure into the one shape."""

    @app.exception_handler(RolememError)
    async def rolemem_error(request: Request, exc: RolememError) -> JSONResponse:
        status = next((status for kind, status in _STATUSES if isinstance(exc, kind)), 400)
        return error_response(status, type(exc).__name__, str(exc), exc.field)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        field = field_path(first.get("loc", ()))
        # a validator's own words without pydantic's "Value error, " before them
        message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
        if first.get("type") == "json_invalid":
            field, message = None, "the body is not valid JSON"
        elif first.get("type") == "missing":
            message = "is required" if field else "the body is required (a JSON object)"
        return error_response(
            422, "ValidationError", f"{field}: {message}" if field else message, field
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "NotFound", 405: "MethodNotAllowed", 401: "Unauthorized"}
        response = error_response(
            exc.status_code, kinds.get(exc.status_code, "HTTPError"), str(exc.detail)
        )
        if exc.headers:
            response.headers.update(exc.headers)
        if exc.status_code == 405:
            response.headers["Allow"] = allowed_methods(request)
        return response


def allowed_methods(request: Request) -> str:
    """The methods of every route the path names, where Starlette lists only the first
    route's: GET and DELETE share /saves/{id} as two routes. A fixed path (POST
    /official/events) names only its own routes, never a template it also matches
    (GET /official/{agent_id}). HEAD where GET is: it is served as GET (access.AccessLog)."""
    path = request.url.path
    matching = [
        route
        for route in flat_routes(request.app.routes)
        if getattr(route, "methods", None) and route.path_regex.fullmatch(path)
    ]
    fixed = [route for route in matching if not route.param_convertors]
    methods = {method for route in fixed or matching for method in route.methods}
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))
