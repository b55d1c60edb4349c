"""/mcp on `rolemem serve`: the tools over MCP's streamable HTTP transport, stateless (any
worker of a PostgreSQL service answers any call) with JSON answers, POST only (MCP lets a
stateless server answer GET and DELETE 405). The request guard checks /mcp like every keyed
route; each tool call then carries the caller's X-API-Key to its route, whose key decides."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ...errors import field_path
from ..core.errors import error_response
from ..core.guard import PARSED_BODY, first_values
from .tools import TOOLS, Tool

if TYPE_CHECKING:  # the SDK is imported when the app starts, not with the service
    from mcp.server import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

PATH = "/mcp"


def caller_key(ctx: ServerRequestContext[Any], tool: Tool) -> str | None:
    """The key the MCP request came with (the HTTP request the call arrived in)."""
    headers = getattr(ctx.request, "headers", None)
    return None if headers is None else headers.get("x-api-key")


class Endpoint:
    """The ASGI endpoint of /mcp; its session manager runs while the app does."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused: Response | None
        if self.manager is None:  # before start-up or after shut-down
            refused = error_response(503, "Busy", "the MCP endpoint is not running")
        elif scope["method"] != "POST":
            # stateless: no session to end (DELETE), and no stream of the server's own
            # messages (GET), which would hold its connection open without end
            refused = error_response(
                405, "MethodNotAllowed", f"{PATH} takes POST: the service keeps no MCP session"
            )
            refused.headers["Allow"] = "POST"
        else:
            refused = _malformed(scope)
        if refused is not None:
            await refused(scope, receive, send)
        elif self.manager is not None:
            await self.manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager, and the client that calls the routes in this process."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from .server import Routes, build_server

        async with Routes.in_process(self.app) as routes:
            server = build_server(routes, TOOLS, caller_key, version=self.app.version)
            manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
            async with manager.run():
                self.manager = manager
                try:
                    yield
                finally:
                    self.manager = None


def _malformed(scope: Scope) -> Response | None:
    """The JSON-RPC error of a request the SDK would answer quoting what it was sent (None:
    none): another Content-Type than JSON's, a protocol version it does not speak, no body,
    or a body that is no MCP message (named where, without a value; the SDK's answer quoted
    the values, with pydantic's version and links). A message with an id that is not a
    request is one: the SDK would take it as a notification, never answered."""
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, JSONRPCNotification
    from mcp_types import UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED
    from mcp_types import jsonrpc_message_adapter as messages
    from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS as VERSIONS
    from pydantic import ValidationError

    headers = first_values(scope)
    if headers.get(b"content-type", b"").split(b";")[0].strip() != b"application/json":
        # what the guard reads as JSON and the SDK too (the SDK answered others in plain
        # text, or took 'application/json, text/plain' unread by the guard)
        text = "Unsupported Media Type: /mcp takes Content-Type: application/json"
        return _error(INVALID_REQUEST, text, 415)
    version = headers.get(b"mcp-protocol-version")
    if version is not None and version.decode("latin-1") not in VERSIONS:
        # the SDK's answer named the version asked for, whole
        return _error(UNSUPPORTED, "Unsupported protocol version", data={"supported": VERSIONS})
    parsed = scope.get("state", {}).get(PARSED_BODY)
    if parsed is None:  # no body: the SDK's answer quoted it
        return _error(PARSE_ERROR, "Parse error: the body must be one JSON-RPC message")
    try:
        message = messages.validate_python(parsed.document, by_name=False)
    except ValidationError as exc:
        kinds: dict[Any, list[Any]] = {}  # a request, a notification, a response, an error
        for error in exc.errors():
            kinds.setdefault(error["loc"][0], []).append(error)
        closest = min(kinds.values(), key=len)[0]  # of the kind it comes closest to
        where = field_path(closest["loc"][1:])
        wrong = "is required" if closest["type"] == "missing" else "is not valid"
        text = f"{where} {wrong}" if where else "the body must be one JSON-RPC message (an object)"
    else:
        if isinstance(message, JSONRPCNotification) and "id" in parsed.document:
            text = "id must be a string or an integer"
        elif _too_long(parsed.document.get("id")):
            # every answer echoes the id: one as long as the body would come back whole
            text = f"id must be at most {REQUEST_ID_LENGTH} characters"
        else:
            return None
    return _error(INVALID_REQUEST, f"Invalid Request: {text}")


REQUEST_ID_LENGTH = 200


def _too_long(request_id: Any) -> bool:
    # (an integer past 64 bits never gets here: the guard's strict JSON refuses it, 422)
    return isinstance(request_id, str) and len(request_id) > REQUEST_ID_LENGTH


def _error(code: int, message: str, status: int = 400, **data: Any) -> Response:
    detail = {"code": code, "message": message, **data}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": detail}, status_code=status)


def install(app: FastAPI) -> Endpoint:
    """Route /mcp on `app` (outside the OpenAPI document: it is not a REST route), keyed
    like the routes; the endpoint, whose `running()` the app's lifespan enters."""
    endpoint = Endpoint(app)
    route = Route(PATH, endpoint, include_in_schema=False)
    route.keyed = True  # type: ignore[attr-defined]  # read by api.main.route_groups
    app.router.routes.append(route)
    return endpoint
