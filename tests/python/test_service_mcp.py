"""MCP (issue 33 item 7), driven by the official SDK's own client: `rolemem mcp --db` over
stdio (spawned), /mcp on the service under uvicorn (streamable HTTP, with and without keys)
and `rolemem mcp --url` proxying a running service. Every tool's answer is its route's, to
the byte; a bad argument is a tool error naming the field; a player reaches nothing of
another's through any tool; the designer's tools take the designer key. The service tests run
on the embedded DuckDB file and on PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings
from rolemem.service.mcp.tools import TOOLS

from .conftest import demo_store, demo_store_on, error_of, scripted_game, serving

GAME = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}
PLAYER_TOOLS = [
    "recall",
    "turn_prompt",
    "list_memories",
    "search_memories",
    "delete_memory",
    "memory_status",
]
DESIGNER_TOOLS = ["recall_preview", "unlock_matrix"]
RECALL = {
    "character_id": "qiyu",
    "user_id": "mumu",
    "text": "今天画画时你好温柔",
    "context": {"intimacy": 3, "exploration": 2},
    "explain": True,
    "dry_run": True,
}
ROLEMEM = str(Path(sys.executable).with_name("rolemem"))


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    settings = ServiceSettings(api_key="game", designer_key="designer")
    with scripted_game(request, tmp_path_factory, "rolemem_mcp", settings=settings) as served:
        yield served


def run(session: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The answers of `calls` (tool, arguments) in one MCP session; `session` makes the
    client. The first answer is the list of tools' names."""

    async def main() -> list[Any]:
        async with session() as client:
            answers: list[Any] = [[tool.name for tool in (await client.list_tools()).tools]]
            for name, arguments in calls:
                answers.append(await client.call_tool(name, arguments))
            return answers

    return anyio.run(main)


def over_http(base_url: str, key: str | None) -> Any:
    """An MCP client of /mcp with `key` as X-API-Key."""
    import contextlib

    @contextlib.asynccontextmanager
    async def session() -> Any:
        headers = {"X-API-Key": key} if key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as c:
                yield c

    return session


def over_stdio(*args: str, **environment: str) -> Any:
    """An MCP client of a spawned `rolemem mcp ARGS` (the environment: only `environment`
    besides what the SDK passes on)."""
    from mcp.client.stdio import get_default_environment

    parameters = StdioServerParameters(
        command=ROLEMEM, args=["mcp", *args], env={**get_default_environment(), **environment}
    )
    return lambda: Client(parameters)


def untimed(found: dict[str, Any]) -> dict[str, Any]:
    """A /query answer without the times it took."""
    info = {
        key: value
        for key, value in found["additional_info"].items()
        if key not in ("检索耗时", "timings_ms")
    }
    return {**found, "additional_info": info}


def leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [group]


def answer(result: Any) -> dict[str, Any]:
    """A successful tool result's answer (structured, and the same as its text)."""
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def tool_error(result: Any) -> dict[str, Any]:
    """A tool error's error, in the service's one error shape."""
    assert result.is_error, result.structured_content
    body = result.structured_content
    assert set(body) == {"error"} and json.loads(result.content[0].text) == body, body
    return dict(body["error"])


def test_over_http_the_tools_answer_as_their_routes(game):
    client, _, _ = game
    base = str(client.base_url)
    tools, recall, matrix_refused, status = run(
        over_http(base, "game"),
        ("recall", RECALL),
        ("unlock_matrix", {"character_id": "qiyu"}),
        ("memory_status", {"save_id": 2, "user_id": "mumu", "role_id": 1}),
    )
    assert tools == PLAYER_TOOLS + DESIGNER_TOOLS
    assert answer(recall) == client.post("/recall", headers=GAME, json=RECALL).json()
    assert answer(recall)["explain"], "explain answered"
    # the designer's tools take the designer key, as their routes do
    assert tool_error(matrix_refused) == {
        "type": "Unauthorized",
        "message": "missing or wrong X-API-Key header",
        "field": "X-API-Key",
    }
    params = {"user_id": "mumu", "role_id": 1}
    assert (
        answer(status) == client.get("/saves/2/memory_status", headers=GAME, params=params).json()
    )

    turn = {"save_id": 2, "user_id": "mumu", "role_id": 1, "message": "你好", "dry_run": True}
    turn["now"] = "2026-05-01T03:00:00"  # the trace's times: the same clock both ways
    search = {"user_id": "mumu", "agent_id": "qiyu", "query": "画画", "dry_run": True}
    search["now"] = turn["now"]
    listing = {"user_id": "mumu", "kind": "event", "limit": 3, "offset": 1}
    _, prompt, found, listed, listed_by_floats = run(
        over_http(base, "game"),
        ("turn_prompt", turn),
        ("search_memories", search),
        ("list_memories", listing),
        # a whole number as a JSON float is an integer to JSON Schema, in a query as in a body
        ("list_memories", {**listing, "limit": 3.0, "offset": 1.0}),
    )
    assert answer(prompt) == client.post("/turn", headers=GAME, json=turn).json()
    assert untimed(answer(found)) == untimed(
        client.post("/query", headers=GAME, json=search).json()
    )
    assert answer(found)["memory_events"], "memories found"
    query = {key: value for key, value in listing.items() if key != "user_id"}
    assert answer(listed) == client.get("/users/mumu/memories", headers=GAME, params=query).json()
    assert answer(listed_by_floats) == answer(listed)

    preview = {key: value for key, value in RECALL.items() if key not in ("explain", "dry_run")}
    _, matrix, previewed = run(
        over_http(base, "designer"),
        ("unlock_matrix", {"character_id": "qiyu"}),
        ("recall_preview", preview),
    )
    assert answer(matrix) == client.get("/config/qiyu/unlock_matrix", headers=DESIGNER).json()
    assert answer(previewed) == client.post("/recall", headers=GAME, json=RECALL).json()
    assert client.post("/recall_preview", headers=DESIGNER, json=preview).json() == answer(
        previewed
    )
    assert client.post("/recall_preview", headers=GAME, json=preview).status_code == 401


def test_over_http_a_request_without_the_key_is_refused_before_its_body(game):
    client, _, _ = game
    for headers in ({}, {"X-API-Key": "wrong"}):
        refused = httpx.post(
            f"{client.base_url}/mcp",
            headers={**headers, "Content-Type": "application/json"},
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"',  # never read
        )
        assert refused.status_code == 401
        assert error_of(refused)["field"] == "X-API-Key"
    with pytest.raises(ExceptionGroup) as failed:  # the SDK's client cannot even start
        run(over_http(str(client.base_url), "wrong"))
    assert [type(error) for error in leaves(failed.value)] == [MCPError]
    assert "/mcp" not in client.get("/openapi.json").json()["paths"]


def test_over_http_mcp_takes_post_only_no_stream_held_open(game):
    """A stateless server offers no stream of its own messages: GET (which would hold a
    connection open without end) and DELETE are a 405 at once, in the one error shape."""
    client, _, _ = game
    for method in ("GET", "DELETE"):
        refused = client.request(
            method, "/mcp", headers={**GAME, "Accept": "text/event-stream"}, timeout=10
        )
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
        assert error_of(refused) == {
            "type": "MethodNotAllowed",
            "message": "/mcp takes POST: the service keeps no MCP session",
        }


def test_over_http_a_malformed_message_is_named_never_quoted(game):
    """The SDK answered a body that is no JSON-RPC message with pydantic's text (each value
    quoted, its version and links), the unknown method or tool by name, and a request whose
    id is no id as a notification (202, never answered): now an Invalid Request naming where,
    "Method not found" alone, and the SDK's client still works (the tests above)."""
    client, _, _ = game
    headers = {**GAME, "Accept": "application/json, text/event-stream"}
    invalid = {
        "jsonrpc": ({"jsonrpc": "1.0", "id": 1, "method": "tools/list", "x": "SECRET"}, 400),
        "params": ({"jsonrpc": "2.0", "method": "notifications/x", "params": "SECRET"}, 400),
        "method": ({"jsonrpc": "2.0", "id": 1, "method": {"SECRET": 1}}, 400),
        "batch": (["SECRET"], 400),
        "id": ({"jsonrpc": "2.0", "id": {"SECRET": 1}, "method": "tools/list"}, 400),
        # every answer echoes the id: a long one would come back whole
        "long id": ({"jsonrpc": "2.0", "id": "SECRET" * 34, "method": "tools/list"}, 400),
        "longest id": ({"jsonrpc": "2.0", "id": "x" * 200, "method": "tools/list"}, 200),
        "unknown method": ({"jsonrpc": "2.0", "id": 7, "method": "SECRET/x"}, 200),
        "unknown tool": (
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "SECRET"}},
            200,
        ),
    }
    answers = {
        name: client.post("/mcp", headers=headers, json=body) for name, (body, _) in invalid.items()
    }
    assert {name: answer.status_code for name, answer in answers.items()} == {
        name: status for name, (_, status) in invalid.items()
    }
    assert not [name for name, answer in answers.items() if "SECRET" in answer.text]

    def rejected(message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}

    too_long = "Invalid Request: id must be at most 200 characters"

    # another Content-Type than JSON's (the SDK answered in plain text, or read a body the
    # guard had not checked), no body, a protocol version the SDK does not speak: never quoted
    def sent(content_type: str | None, body: bytes, **more: str) -> Any:
        given = {**headers, **more}
        given.pop("Content-Type", None)
        if content_type is not None:
            given["Content-Type"] = content_type
        answer = client.post("/mcp", headers=given, content=body)
        assert "SECRET" not in answer.text
        return answer.status_code, answer.json()["error"]

    message = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "x": "SECRET"}'
    unsupported = {
        "code": -32600,
        "message": "Unsupported Media Type: /mcp takes Content-Type: application/json",
    }
    for content_type in (
        "application/json, text/plain",
        "text/plain",
        None,
        "application/vnd.api+json",
        "APPLICATION/JSON",
    ):
        assert sent(content_type, message) == (415, unsupported)
    assert sent("application/json", b"") == (
        400,
        {"code": -32700, "message": "Parse error: the body must be one JSON-RPC message"},
    )
    assert sent("application/json", message, **{"MCP-Protocol-Version": "SECRET"}) == (
        400,
        {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": list(SUPPORTED_PROTOCOL_VERSIONS)},
        },
    )
    assert {name: answer.json() for name, answer in answers.items()} == {
        "jsonrpc": rejected("Invalid Request: jsonrpc is not valid"),
        "params": rejected("Invalid Request: params is not valid"),
        "method": rejected("Invalid Request: method is not valid"),
        "batch": rejected("Invalid Request: the body must be one JSON-RPC message (an object)"),
        "id": rejected("Invalid Request: id must be a string or an integer"),
        "long id": rejected(too_long),
        "longest id": {
            "jsonrpc": "2.0",
            "id": "x" * 200,
            "result": answers["longest id"].json()["result"],
        },
        "unknown method": {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32601, "message": "Method not found"},
        },
        "unknown tool": {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32602, "message": "no tool of that name (tools/list names them)"},
        },
    }


def test_a_player_reaches_nothing_of_another_players_through_any_tool(game):
    client, _, _ = game
    base = str(client.base_url)
    mumus = client.get("/users/mumu/memories", headers=GAME, params={"kind": "event"}).json()
    event = mumus["items"][0]["memory_id"]
    (
        _,
        listed,
        searched,
        on_mumus_save,
        deleted,
        status,
        turn,
    ) = run(
        over_http(base, "game"),
        ("list_memories", {"user_id": "alice"}),
        ("search_memories", {"user_id": "alice", "agent_id": "qiyu", "query": "画画"}),
        (
            "search_memories",
            {"user_id": "alice", "agent_id": "qiyu", "query": "画画", "save_id": 2},
        ),
        ("delete_memory", {"user_id": "alice", "kind": "event", "memory_id": event}),
        ("memory_status", {"save_id": 2, "user_id": "alice", "role_id": 1}),
        ("turn_prompt", {"save_id": 2, "user_id": "alice", "role_id": 1, "message": "你好"}),
    )
    assert answer(listed)["items"] == []
    found = answer(searched)  # the agent's official memories, shared by every player
    assert found["memory_events"], "official memories found"
    for memory in found["memory_events"] + found["memory_entities"]:
        assert memory["scope"] == "official", memory
    for refused in (on_mumus_save, status, turn):
        assert tool_error(refused) == {
            "type": "SaveNotFoundError",
            "message": "no save with id 2",
            "field": "save_id",
        }
    assert tool_error(deleted)["type"] == "NotFoundError"
    after = client.get("/users/mumu/memories", headers=GAME, params={"kind": "event"}).json()
    assert after == mumus, "nothing of mumu's changed"

    _, deleted = run(
        over_http(base, "game"),
        ("delete_memory", {"user_id": "mumu", "kind": "event", "memory_id": event}),
    )
    assert answer(deleted) == {"memory_type": "event", "memory_id": event, "status": "archived"}
    after = client.get("/users/mumu/memories", headers=GAME, params={"kind": "event"}).json()
    assert [item["memory_id"] for item in after["items"]] == [
        item["memory_id"] for item in mumus["items"] if item["memory_id"] != event
    ]


def test_a_bad_argument_is_a_tool_error_naming_the_field(game):
    client, _, _ = game
    results = run(
        over_http(str(client.base_url), "game"),
        ("recall", {**RECALL, "text": ""}),
        ("recall", {**RECALL, "dry_run": "yes"}),
        ("recall", {**RECALL, "colour": "blue"}),
        ("list_memories", {"user_id": "mumu", "limit": 0}),
        ("list_memories", {"limit": 2}),
        ("list_memories", {"user_id": "mumu", "colour": "blue"}),
        ("memory_status", {"save_id": "two", "user_id": "mumu"}),
        ("delete_memory", {"user_id": "mumu", "kind": "dream", "memory_id": 1}),
        ("turn_prompt", {"save_id": 2, "user_id": "mumu", "message": "你好"}),
    )[1:]
    fields = [tool_error(result).get("field") for result in results]
    assert fields == [
        "text",
        "dry_run",
        "colour",
        "limit",
        "user_id",
        "colour",
        "save_id",
        "kind",
        "role_id",
    ]
    assert [tool_error(result)["type"] for result in results] == ["ValidationError"] * 9


def test_mcp_url_proxies_a_running_service_with_the_key_from_the_environment(game):
    client, _, _ = game
    url = str(client.base_url)
    tools, recall, status = run(
        over_stdio("--url", url, ROLEMEM_API_KEY="game"),
        ("recall", RECALL),
        ("memory_status", {"save_id": 2, "user_id": "alice", "role_id": 1}),
    )
    assert tools == PLAYER_TOOLS, "the designer's tools only with --designer"
    assert answer(recall) == client.post("/recall", headers=GAME, json=RECALL).json()
    assert tool_error(status)["type"] == "SaveNotFoundError"

    _, unkeyed = run(over_stdio("--url", url), ("recall", RECALL))
    assert tool_error(unkeyed)["type"] == "Unauthorized"
    tools, matrix = run(
        over_stdio("--url", url, "--designer", ROLEMEM_API_KEY="game"),
        ("unlock_matrix", {"character_id": "qiyu"}),
    )
    assert tools == PLAYER_TOOLS + DESIGNER_TOOLS
    assert tool_error(matrix)["type"] == "Unauthorized", "the game key is not the designer's"
    _, matrix = run(
        over_stdio(
            "--url", url, "--designer", ROLEMEM_API_KEY="game", ROLEMEM_DESIGNER_KEY="designer"
        ),
        ("unlock_matrix", {"character_id": "qiyu"}),
    )
    assert answer(matrix) == client.get("/config/qiyu/unlock_matrix", headers=DESIGNER).json()


@pytest.fixture(params=["duckdb", "postgres"])
def two_stores(request, tmp_path_factory):
    """Two identical demo stores: one for the service, one `rolemem mcp --db` opens itself
    (a DuckDB file has one owner)."""
    return [demo_store_on(request, tmp_path_factory, f"rolemem_mcp_{n}") for n in "ab"]


def test_mcp_db_serves_the_store_itself_over_stdio(two_stores):
    served, opened = two_stores
    counted = {**RECALL, "dry_run": False}  # the sticky queue moves: state is the store's
    with serving(create_app(served, embedder=None)) as client:
        expected = [client.post("/recall", json=counted).json() for _ in range(2)]
        matrix = client.get("/config/qiyu/unlock_matrix").json()
    tools, *recalls, bad, designer = run(
        over_stdio("--db", opened, "--keyword-only", "--designer"),
        ("recall", counted),
        ("recall", counted),
        ("list_memories", {"user_id": "mumu", "limit": 1001}),
        ("unlock_matrix", {"character_id": "qiyu"}),
    )
    assert tools == PLAYER_TOOLS + DESIGNER_TOOLS
    assert [answer(recall) for recall in recalls] == expected
    assert expected[0] != expected[1], "the second recall saw the first one's queue"
    assert tool_error(bad) == {
        "type": "ValidationError",
        "message": "limit: Input should be less than or equal to 1000",
        "field": "limit",
    }
    assert answer(designer) == matrix


def test_the_sdk_is_imported_only_when_mcp_is_served():
    code = (
        "import sys, rolemem, rolemem.service.app, rolemem.cli.main; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_turn_prompt_lists_its_fields_and_exactly_one_character(tmp_path):
    """The document writes "exactly one of" as a oneOf of whole objects; the tool's schema
    lists every field and keeps the rule."""
    import jsonschema

    from rolemem.service.app import create_app
    from rolemem.service.mcp.tools import TOOLS, input_schema

    document = create_app(str(tmp_path / "unused.duckdb"), embedder=None).openapi()
    (tool,) = [tool for tool in TOOLS if tool.name == "turn_prompt"]
    schema = input_schema(document, tool)
    assert {"save_id", "user_id", "message", "role_id", "script_role_id"} <= set(
        schema["properties"]
    )
    said = {"save_id": 2, "user_id": "mumu", "message": "你好"}
    jsonschema.validate({**said, "role_id": 1}, schema)
    jsonschema.validate({**said, "script_role_id": "7", "character_id": "qiyu"}, schema)
    for refused in (said, {**said, "role_id": 1, "script_role_id": "7"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(refused, schema)


def test_a_tool_is_described_by_its_route(game):
    """One text for a route and its tool: the operation's summary and description."""
    client, _, _ = game

    async def listed() -> dict[str, str]:
        async with over_http(str(client.base_url), "game")() as session:
            tools = (await session.list_tools()).tools
            return {tool.name: tool.description for tool in tools}

    described = anyio.run(listed)
    assert described["delete_memory"] == (
        "Delete a player's memory: DELETE /users/{user_id}/memories/{kind}/{memory_id}. Moved "
        "to the archive (reason deleted), never destroyed; `forget` with purge destroys."
    )
    paths = client.get("/openapi.json").json()["paths"]
    for tool in TOOLS:  # every tool's route has a summary and a description to give
        operation = paths[tool.path][tool.method.lower()]
        assert described[tool.name] == (
            f"{operation['summary']}: {tool.method} {tool.path}. {operation['description']}"
        )


def test_a_tool_call_takes_one_key_token(tmp_path):
    """--key-rate: a tool call is one request of the key's (the /mcp request's token; the
    route it calls inside takes none), as its answer's RateLimit-Remaining says."""
    settings = ServiceSettings(api_key="game", key_rate="60/min")
    app = create_app(demo_store(str(tmp_path / "mcp.duckdb")), embedder=None, settings=settings)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_memories", "arguments": {"user_id": "mumu"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with serving(app) as client:
        before = client.get("/status", headers=GAME)
        called = client.post("/mcp", headers={**GAME, **accept}, json=call)
        after = client.get("/status", headers=GAME)
        assert called.status_code == 200, called.text
        result = called.json()["result"]
        assert not result["isError"] and result["structuredContent"]["items"]
        assert [a.headers["RateLimit-Remaining"] for a in (before, called, after)] == [
            "59",
            "58",
            "57",
        ]
        # through the SDK's client too: a session with one call more spends one token more
        spent = []
        for calls in ([], [("list_memories", {"user_id": "mumu"})]):
            left = int(client.get("/status", headers=GAME).headers["RateLimit-Remaining"])
            run(over_http(str(client.base_url), "game"), *calls)
            now = int(client.get("/status", headers=GAME).headers["RateLimit-Remaining"])
            spent.append(left - now - 1)  # the /status before `now` took one
        assert spent[1] - spent[0] == 1, spent
