"""The MCP server: the tools listed with the input schemas of their routes, and each call
made as the route's own HTTP request (to the app in this process, or to a running service),
so the route validates, checks the key and the player, and answers; its answer is the tool's
result, an error answer (the one error shape, naming the field) a tool error."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from ..core.errors import error_body
from ..core.logs import request_id
from .tools import BadArgument, Tool, description_of, input_schema, route_call

# which key a call carries as X-API-Key (None: none)
KeyOf = Callable[[ServerRequestContext[Any], Tool], "str | None"]


@dataclass(frozen=True)
class Routes:
    """Where the tools' requests go: `client` is bound to the app in this process (an ASGI
    transport) or to a service's URL; `openapi` is that service's document."""

    client: httpx2.AsyncClient
    openapi: dict[str, Any]

    @classmethod
    @contextlib.asynccontextmanager
    async def in_process(cls, app: Any) -> AsyncIterator[Routes]:
        """The routes of `app`, called in this process (no port) through all its middleware."""
        transport = httpx2.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://rolemem.internal", timeout=None
        ) as client:
            yield cls(client, app.openapi())

    async def call(
        self, tool: Tool, arguments: dict[str, Any], key: str | None
    ) -> tuple[bool, dict[str, Any]]:
        """(whether the route answered 2xx, its JSON answer)."""
        try:
            request = route_call(self.openapi, tool, arguments)
        except BadArgument as bad:
            return False, error_body("ValidationError", str(bad), bad.field)
        headers = {"X-API-Key": key} if key else {}
        if request_id.get() != "-":  # called from /mcp: the route logs with its request id
            headers["X-Request-Id"] = request_id.get()
        try:
            answer = await self.client.request(
                request.method,
                request.path,
                params=request.query,
                json=request.body,
                headers=headers,
            )
        except httpx2.TransportError as exc:  # --url: the service is down or too slow
            return False, error_body("Busy", f"the service did not answer: {type(exc).__name__}")
        try:
            document = answer.json()
        except ValueError:
            document = None
        if not isinstance(document, dict):  # every route answers an object
            kind = "Unexpected" if answer.is_success else "HTTPError"
            return False, error_body(kind, f"the service answered {answer.status_code}")
        return answer.is_success, document


def build_server(
    routes: Routes, tools: Sequence[Tool], key_of: KeyOf, *, version: str
) -> Server[Any]:
    """A low-level MCP server offering `tools` (their input schemas read off the routes)."""
    by_name = {tool.name: tool for tool in tools}
    listed = [
        types.Tool(
            name=tool.name,
            description=description_of(routes.openapi, tool),
            input_schema=input_schema(routes.openapi, tool),
        )
        for tool in tools
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, "no tool of that name (tools/list names them)")
        ok, answer = await routes.call(tool, params.arguments or {}, key_of(ctx, tool))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(answer, ensure_ascii=False))],
            structured_content=answer,
            is_error=not ok,
        )

    server = Server(
        "rolemem",
        version=version,
        instructions="Memory of LLM role-play characters: recall a character's designer "
        "memory, build a reply prompt, list, search and delete a player's memories.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(_unechoed)
    return server


async def _unechoed(ctx: ServerRequestContext[Any], call_next: Any) -> Any:
    """The SDK's "Method not found" without the method it names (its `data`): no request
    value comes back."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        if exc.error.code != types.METHOD_NOT_FOUND:
            raise
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found") from None
