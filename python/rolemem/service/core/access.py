"""Every HTTP request's id, access log line and timing (plain ASGI middleware, outermost). The
id is the caller's usable `X-Request-Id`, else a new one, answered and stamped on every log
line of the request. The access line names the route's template, never the path (ids and
player names stay out of the log), and the key's name, never its secret; it is built only
when its logger is on (`rolemem serve` turns it on; the library leaves it off). A HEAD is
served as the GET it asks about, keys and limits alike (RFC 9110 9.3.2; FastAPI's routes take
no HEAD): the server sends the answer's head only, its Content-Length the GET's."""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .logs import ACCESS_LOGGER, request_id

access = logging.getLogger(ACCESS_LOGGER)  # this module's name
_USABLE_ID = re.compile(rb"[\x21-\x7e]{1,128}")
UNMATCHED = "unmatched"  # the route of a request no route takes (bounded metric labels)
# the status counted for a request whose connection ended before it was answered (the server
# answers a malformed body 400 itself; a client that left hears nothing either way)
CLIENT_LEFT = 400
KEY_NAME = "rolemem.key"  # the request's key's name, in its scope state (set by the gate)

Observer = Callable[[str, str, int, float], None]


def route_of(scope: Scope) -> str:
    """The template of the route that took the request (`/saves/{save_id}`), looked up when
    a refusal came before routing (a 413), else `unmatched`."""
    route = scope.get("route")
    if route is None:
        routes = getattr(getattr(scope.get("app"), "router", None), "routes", ())
        matching = (each for each in flat_routes(routes) if each.matches(scope)[0] != Match.NONE)
        route = next(matching, None)
    return str(getattr(route, "path", None) or UNMATCHED)


def flat_routes(routes: Iterable[Any]) -> Iterator[Any]:
    """`routes`, an included router's in its place (FastAPI keeps the router as one entry)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is None:
            yield route
        else:
            yield from flat_routes(included.routes)


class AccessLog:
    def __init__(self, app: ASGIApp, *, observe: Observer) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        given = next((value for name, value in scope["headers"] if name == b"x-request-id"), b"")
        rid = given.decode() if _USABLE_ID.fullmatch(given) else secrets.token_hex(8)
        header = (b"x-request-id", rid.encode())
        status = 500  # if the app fails before it answers, the 500 the server sends
        answered = False

        async def answer(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        async def received() -> Message:
            nonlocal status
            message = await receive()
            if message["type"] == "http.disconnect" and not answered:
                # the body never came whole: the client went away, or sent what the server
                # refused as it arrived (a malformed chunk: the server answered 400 itself),
                # the client's error, never the service's 500
                status = CLIENT_LEFT
            return message

        served = {**scope, "method": "GET"} if scope["method"] == "HEAD" else scope
        token = request_id.set(rid)
        try:
            await self.app(served, received, answer)
        finally:
            seconds = time.perf_counter() - started
            self._record(scope["method"], served, status, seconds)
            request_id.reset(token)

    def _record(self, method: str, scope: Scope, status: int, seconds: float) -> None:
        route = route_of(scope)
        self.observe(method, route, status, seconds)
        if access.isEnabledFor(logging.INFO):
            fields: dict[str, Any] = {
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
            }
            key = scope.get("state", {}).get(KEY_NAME)
            if key is not None:
                fields["key"] = key
            access.info("served", extra={"fields": fields})
