"""What every request passes before a route sees it (plain ASGI middleware, behind the gate):
its body within `body_timeout` of its headers (408) and at most `max_body_bytes` (413, from
Content-Length before any of it is read, or as soon as a chunked body passes it); a JSON body
strict JSON that rolemem can store (no NaN or infinity, 64-bit integers, no lone surrogates,
which no UTF-8 store can hold, and no NUL, which PostgreSQL's text cannot), else a 422 naming
the field before any route, validator or error handler touches the value. The parsed body is
left for the route (PARSED_BODY), a large one parsed and validated on the body lane
(body_lane.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...engines.duckdb_connect import is_storable_text
from .access import route_of
from .body_lane import BodyLane
from .errors import error_response
from .settings import ServiceSettings

log = logging.getLogger(__name__)

_DRAIN_SECONDS = 5.0  # how long a refused body is discarded before the connection is closed
# JSON bodies larger than this are parsed and validated on the body lane (body_lane.py);
# smaller ones, on the event loop (16 KiB of numbers parse in ~1 ms)
LANE_BYTES = 16 * 1024
NO_KEY = "missing or wrong X-API-Key header"
# where the gate leaves, in the request's scope state, the check of a parsed JSON body's
# players: a callable taking the document (None: no JSON body), answering a refusal or None
BODY_CHECK = "rolemem.body_check"
# where the guard leaves, in the request's scope state, the JSON body it parsed (a
# ParsedBody): the route takes it instead of parsing the body again (body_route.py)
PARSED_BODY = "rolemem.parsed_body"
# set when a body came with a Content-Type FastAPI does not read as JSON (body_route's 415)
NOT_JSON_BODY = "rolemem.not_json_body"


@dataclass(frozen=True)
class ParsedBody:
    """A JSON body as the guard parsed it; `lane`: where the route validates it (None: on
    the event loop, a small body)."""

    document: Any
    lane: BodyLane | None


class Invalid(ValueError):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field

    def response(self) -> Response:
        text = f"{self.field}: {self}" if self.field else str(self)
        return error_response(422, "ValidationError", text, self.field)


@dataclass(frozen=True)
class _NotANumber:
    """Where the JSON said NaN, Infinity or a number too large for a double: found by the walk,
    so the error can name the field."""

    text: str
    why: str = "is not a finite number (NaN and infinity are refused)"


def _finite(text: str) -> float | _NotANumber:
    value = float(text)
    if not math.isfinite(value):
        return _NotANumber(text)
    if value != 0 and abs(value) < sys.float_info.min:  # PostgreSQL's double refuses these
        return _NotANumber(text, "is too close to 0 for PostgreSQL's double: write 0")
    return value


def _path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# the prefilter's view of a body: every digit a 0, E an e, - a + (the rest as it is), so that
# digit runs and exponents are found by substring search, at C speed
_NUMBER_SHAPES = bytes.maketrans(b"123456789E-", b"000000000e+")
# a lone surrogate as an escape (a high one not followed by a low one, a low one not preceded
# by a high one), a NUL as an escape, a surrogate encoded as UTF-8 bytes (which the JSON
# decoder lets through as a lone one)
_UNSTORABLE_TEXT = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F]"
    rb"|\\u0000|\xed[\xa0-\xbf]"
)


def _may_be_unstorable(body: bytes) -> bool:
    """Whether the walk of check_json could refuse `body` (False: json.loads alone gives
    what the walk would), erring on the side of True: 19 digits in a row may pass 64 bits
    or a double's range, an exponent of 3 digits a double's range."""
    if b"\x00" in body or b"NaN" in body or b"Infinity" in body:
        return True
    if b"\\u" in body or b"\xed" in body:
        if _UNSTORABLE_TEXT.search(body):
            return True
    shapes = body.translate(_NUMBER_SHAPES)
    return b"0" * 19 in shapes or b"e000" in shapes or b"e+000" in shapes


# how deep a JSON body may nest: past it a body is refused (an answer that echoes a value
# nested some 250 deep cannot be serialized, and a write must not succeed with a 500)
MAX_DEPTH = 64


def check_json(body: bytes) -> Any:
    """The body as strict JSON rolemem can store, nested at most MAX_DEPTH deep, or Invalid
    naming the field; only a body the prefilter cannot clear is walked value by value (in
    Python: ~1 µs a value)."""
    quick = not _may_be_unstorable(body)
    try:
        if quick:  # decoded first: json.loads of bytes decodes them with a slower error handler
            document = json.loads(body.decode("utf-8-sig"))
        else:  # UTF-8 only (json.loads of bytes would take UTF-16 or 32 too); lone surrogates
            # kept to be named below
            text = body.decode("utf-8-sig", "surrogatepass")
            document = json.loads(text, parse_constant=_NotANumber, parse_float=_finite)
    except RecursionError:
        raise Invalid(None, "the JSON nests too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise Invalid(None, "the body is not valid JSON (UTF-8)") from None
    stack: list[tuple[str, Any]] = [] if quick else [("", document)]  # quick: no walk
    while stack:  # iterative: the depth json.loads accepted may exceed Python's recursion
        path, value = stack.pop()
        if isinstance(value, str):
            if not is_storable_text(value):
                raise Invalid(
                    path or None,
                    "is not text rolemem can store (a lone surrogate or a NUL character)",
                )
        elif isinstance(value, _NotANumber):
            raise Invalid(path or None, value.why)  # not the number: no value is echoed
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
    _check_depth(body, document)
    return document


def _check_depth(body: bytes, document: Any) -> None:
    """Invalid naming the first container of `document` (parsed from `body`) nested deeper
    than MAX_DEPTH. Only a body with more brackets than that may be (in any encoding JSON
    takes), and its containers counted level by level (~0.3 µs each) say whether one is,
    before a walk that names it."""
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return
    level = [document] if _nests(document) else []
    for _ in range(MAX_DEPTH):
        level = [item for value in level for item in _children(value) if _nests(item)]
        if not level:
            return
    stack: list[tuple[str, Any, int]] = [("", document, 1)]
    while stack:
        path, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Invalid(path or None, f"nests deeper than {MAX_DEPTH} levels")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend((_path(path, key), item, depth + 1) for key, item in items if _nests(item))


def _children(value: dict[str, Any] | list[Any]) -> Any:
    return value.values() if isinstance(value, dict) else value


def _nests(value: Any) -> bool:
    return isinstance(value, dict | list)


# headers a request gives once: a second Content-Type could make the guard and the route read
# one body two ways (Starlette reads the first value)
_SINGLE = {
    b"content-type": "Content-Type",
    b"content-length": "Content-Length",
    b"x-api-key": "X-API-Key",
    b"idempotency-key": "Idempotency-Key",
}


def first_values(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers, the first value of each, as Starlette reads them (read from
    the last, a first value is the one kept)."""
    return {name: value for name, value in reversed(scope.get("headers") or [])}


def _storable_bytes(value: bytes) -> bool:
    """Percent-decoded bytes that are text rolemem can store: UTF-8 (no lone surrogate) and no
    NUL, as the guard holds every string of a body."""
    try:
        return is_storable_text(value.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def unstorable_parameter(scope: Scope) -> str | None:
    """The first path or query parameter of the request that is not text rolemem can store,
    by name (a path segment outside the route's parameters: `path`), else None. Read from the
    raw bytes: the decoded path and query hold a byte that is not UTF-8 as U+FFFD."""
    raw_path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogatepass")
    segments = raw_path.split(b"/")
    for at, segment in enumerate(segments):
        if not _storable_bytes(unquote_to_bytes(segment)):
            template = route_of(scope).split("/")  # looked up only for a refusal
            named = template[at] if len(template) == len(segments) else ""
            return named.strip("{}").split(":")[0] if named.startswith("{") else "path"
    for pair in scope.get("query_string", b"").split(b"&"):
        name, _, value = (
            unquote_to_bytes(part.replace(b"+", b" ")) for part in pair.partition(b"=")
        )
        storable_name = _storable_bytes(name)
        if not (storable_name and _storable_bytes(value)):
            named = name.decode("utf-8") if storable_name else ""
            return named if named.isidentifier() else "query"  # no other name echoed
    return None


async def refused_repeat(scope: Scope, receive: Receive, send: Send) -> bool:
    """Whether a header a request gives once (_SINGLE) is given twice, refused (400 naming
    it; the gate asks first, before any key is judged): whatever reads the request before
    the route must read what the route reads."""
    seen: set[bytes] = set()
    for name, _ in scope.get("headers") or []:
        if name in _SINGLE:
            if name in seen:
                text = f"the {_SINGLE[name]} header is given more than once"
                headers = first_values(scope)
                await refuse(scope, receive, send, headers, 400, "BadRequest", text, _SINGLE[name])
                return True
            seen.add(name)
    return False


class RequestGuard:
    def __init__(self, app: ASGIApp, *, settings: ServiceSettings, lane: BodyLane) -> None:
        self.app = app
        size = settings.max_body_bytes
        too_large = f"the body is larger than the service accepts ({size} bytes)"
        self.limits = BodyLimits(settings.body_timeout, size, too_large)
        self.lane = lane

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = first_values(scope)
        body = await read_body(scope, receive, send, headers, self.limits)
        if body is None:
            return
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        # what FastAPI parses as JSON (its strict_content_type, the default): application/json
        # or application/*+json (the body route relies on it: a parsed body is a JSON one)
        main, _, sub = content_type.partition(b"/")
        json_like = main == b"application" and (sub == b"json" or sub.endswith(b"+json"))
        state = scope.setdefault("state", {})
        document: Any = None
        lane: BodyLane | None = None
        if body and json_like:
            lane = self.lane if len(body) > LANE_BYTES else None
            try:
                document = check_json(body) if lane is None else await lane.run(check_json, body)
            except Invalid as exc:
                await exc.response()(scope, receive, send)
                return
            state[PARSED_BODY] = ParsedBody(document, lane)
        elif body:
            # the route's 415, not the players check's 403 for a body that names none: a
            # route whose body names its player takes JSON, so it answers 415 without work
            state[NOT_JSON_BODY] = True
        # the players the body names (None: no JSON body), before validation and store work
        players: Callable[[Any], Response | None] | None = state.get(BODY_CHECK)
        refusal = None if players is None or NOT_JSON_BODY in state else players(document)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._serve(scope, receive, send, body)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, body: bytes) -> None:
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replaying(body, receive), watched)
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


@dataclass(frozen=True)
class BodyLimits:
    """How long a body may take to arrive after its headers and how large it may be, with
    what its 413 says (`max_lines`: newlines, for a body of lines)."""

    seconds: float
    max_bytes: int
    too_large: str
    max_lines: int | None = None
    too_many_lines: str = ""


async def read_body(
    scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes], limits: BodyLimits
) -> bytes | None:
    """The whole body, arrived within its time; else None, answered: 422 for a parameter
    rolemem cannot store, 400 for a Content-Length not a number, 413 as soon as the body passes
    a limit (before any of it is read where the Content-Length says so), 408 past its time, and
    nothing for a client that left before sending it."""
    seconds, max_bytes, max_lines = limits.seconds, limits.max_bytes, limits.max_lines
    field = unstorable_parameter(scope)
    if field is not None:  # before the body is read: no route, validator or store sees it
        text = f"{field}: is not text rolemem can store (a NUL character, or bytes not UTF-8)"
        await refuse(scope, receive, send, headers, 422, "ValidationError", text, field)
        return None
    declared = headers.get(b"content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            text = "a Content-Length is not a number"
            await refuse(scope, receive, send, headers, 400, "BadRequest", text)
            return None
        if size > max_bytes:
            await refuse(scope, receive, send, headers, 413, "PayloadTooLarge", limits.too_large)
            return None
    chunks: list[bytes] = []
    size = newlines = 0
    passed = None
    try:
        async with asyncio.timeout(seconds):  # a trickle too, not each read
            more = True
            while more and passed is None:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if max_lines is not None:
                    newlines += chunk.count(b"\n")
                if size > max_bytes or (max_lines is not None and newlines > max_lines):
                    passed = limits.too_large if size > max_bytes else limits.too_many_lines
                chunks.append(chunk)
                more = message.get("more_body", False)
    except TimeoutError:
        text = f"the body did not arrive within {seconds:g} s"
        # no drain: this client is slow by definition
        await refuse(scope, receive, send, {}, 408, "RequestTimeout", text, drain=False)
        return None
    if passed is not None:  # at once, the rest of the body discarded a moment
        await refuse(scope, receive, send, headers, 413, "PayloadTooLarge", passed)
        return None
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` whose first message is the whole `body`, read already; later calls see the
    client disconnect."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[bytes, bytes],
    status: int,
    kind: str,
    text: str,
    field: str | None = None,
    *,
    drain: bool = True,
) -> None:
    response = error_response(status, kind, text, field)
    await send_refusal(scope, receive, send, headers, response, drain=drain)


async def send_refusal(
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: dict[bytes, bytes],
    response: Response,
    *,
    drain: bool = True,
) -> None:
    """Send `response` before the body is read, then close the connection where a body may
    follow, first discarding it unread for at most _DRAIN_SECONDS: closing on unread bytes
    resets the connection, and the client might never read the answer (a client waiting for
    100-continue has sent none)."""
    status = response.status_code
    has_body = headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers
    if not has_body and drain:
        await response(scope, receive, send)
        return
    response.headers["Connection"] = "close"
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    # the whole answer (its Content-Length said), the end of the message held back
    await send({"type": "http.response.body", "body": response.body, "more_body": True})
    if drain and headers.get(b"expect", b"").lower() != b"100-continue":
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_SECONDS):
                more = True
                while more:
                    message = await receive()
                    more = message["type"] == "http.request" and message.get("more_body", False)
    await send({"type": "http.response.body", "body": b"", "more_body": False})
