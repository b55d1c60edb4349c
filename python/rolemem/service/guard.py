"""What every request passes before a route sees it (plain ASGI middleware):

- a body larger than `max_body_bytes` is refused with 413, decided from Content-Length before
  any of it is read (or as soon as a chunked body passes the limit); the rest of the body is
  discarded unread, never stored, so the client can read the answer;
- a JSON body must be strict JSON that rolemem can store: no NaN or infinity, integers that fit
  in 64 bits, text without lone surrogates (which no UTF-8 store can hold) or NUL characters
  (which PostgreSQL's text cannot). Anything else is a 422 naming the field, before any
  route, validator or error handler touches the value.
"""

from __future__ import annotations

import json
import logging
import math
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..engines.duckdb_connect import is_storable_text
from .core.access import route_of
from .errors import error_response

log = logging.getLogger(__name__)

_DRAIN_SECONDS = 5.0  # how long a refused body is discarded before the connection is closed


class Invalid(ValueError):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


class _NotANumber:
    """Where the JSON said NaN, Infinity or a number too large for a double: found by the walk,
    so the error can name the field."""

    def __init__(self, text: str) -> None:
        self.text = text


def _finite(text: str) -> float | _NotANumber:
    value = float(text)
    return value if math.isfinite(value) else _NotANumber(text)


def _path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def check_json(body: bytes) -> Any:
    """The body as strict JSON rolemem can store, or Invalid naming the field."""
    try:
        document = json.loads(body, parse_constant=_NotANumber, parse_float=_finite)
    except RecursionError:
        raise Invalid(None, "the JSON nests too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise Invalid(None, "the body is not valid JSON (UTF-8)") from None
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:  # iterative: the depth json.loads accepted may exceed Python's recursion
        path, value = stack.pop()
        if isinstance(value, str):
            if not is_storable_text(value):
                raise Invalid(
                    path or None,
                    "is not text rolemem can store (a lone surrogate or a NUL character)",
                )
        elif isinstance(value, _NotANumber):
            raise Invalid(
                path or None, f"{value.text} is not a finite number (NaN and infinity are refused)"
            )
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                raise Invalid(path or None, "must fit in 64 bits")
        elif isinstance(value, dict):
            for key, item in value.items():
                if not is_storable_text(key):
                    raise Invalid(path or None, "has a key that is not valid Unicode text")
                stack.append((_path(path, key), item))
        elif isinstance(value, list):
            stack.extend((_path(path, index), item) for index, item in enumerate(value))
    return document


class RequestGuard:
    """Size limit and strict JSON for every HTTP request (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await self._answer(scope, receive, send, 400, "a Content-Length is not a number")
                return
            if size > self.max_body_bytes:
                await self._too_large(scope, receive, send, headers)
                return
        chunks: list[bytes] = []
        received = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went away before sending its request: nothing to do
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.max_body_bytes:
                await self._too_large(scope, receive, send, headers)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if body and (content_type == b"application/json" or content_type.endswith(b"+json")):
            try:
                check_json(body)
            except Invalid as exc:
                response = error_response(422, "ValidationError", _said(exc), exc.field)
                await response(scope, receive, send)
                return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later calls see the client disconnect

        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replay, watched)
        except Exception as exc:
            # a bug, not the caller's fault: one log line (the traceback at debug level), the
            # error shape kept
            log.error(  # the route's template: the path may name a player
                "%s %s failed: %s: %s", scope["method"], route_of(scope), type(exc).__name__, exc
            )
            log.debug("traceback", exc_info=exc)
            if not started:
                response = error_response(500, "InternalError", "the service failed; see its log")
                await response(scope, receive, send)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]
    ) -> None:
        message = f"the body is larger than the service accepts ({self.max_body_bytes} bytes)"
        await self._answer(
            scope,
            receive,
            send,
            413,
            message,
            # a client waiting for 100-continue has not sent the body: do not invite it
            drain=headers.get(b"expect", b"").lower() != b"100-continue",
        )

    @staticmethod
    async def _answer(
        scope: Scope, receive: Receive, send: Send, status: int, text: str, *, drain: bool = True
    ) -> None:
        if drain:  # discard the rest unread, so the client gets to read the answer
            deadline = time.monotonic() + _DRAIN_SECONDS
            more = True
            while more and time.monotonic() < deadline:
                message = await receive()
                more = message["type"] == "http.request" and message.get("more_body", False)
        kind = "PayloadTooLarge" if status == 413 else "BadRequest"
        response = error_response(status, kind, text)
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


def _said(exc: Invalid) -> str:
    return f"{exc.field}: {exc}" if exc.field else str(exc)
