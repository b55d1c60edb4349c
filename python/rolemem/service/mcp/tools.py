"""The MCP tools: each one route of the service, its arguments the route's path and query
parameters and body fields, its input schema read off the service's OpenAPI document (so the
limits a route checks are the limits the tool declares: one source), its answer the route's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from ..schemas.component import COMPONENT_REF

Scope = Literal["game", "designer"]


@dataclass(frozen=True)
class Tool:
    name: str
    method: str
    path: str  # the route's template, e.g. /users/{user_id}/memories
    scope: Scope  # whose key the route takes


TOOLS = (
    Tool("recall", "POST", "/recall", "game"),
    Tool("turn_prompt", "POST", "/turn", "game"),
    Tool("list_memories", "GET", "/users/{user_id}/memories", "game"),
    Tool("search_memories", "POST", "/query", "game"),
    Tool("delete_memory", "DELETE", "/users/{user_id}/memories/{kind}/{memory_id}", "game"),
    Tool("memory_status", "GET", "/saves/{save_id}/memory_status", "game"),
    Tool("recall_preview", "POST", "/recall_preview", "designer"),
    Tool("unlock_matrix", "GET", "/config/{character_id}/unlock_matrix", "designer"),
)


def operation_of(openapi: dict[str, Any], tool: Tool) -> dict[str, Any]:
    return openapi["paths"][tool.path][tool.method.lower()]


def description_of(openapi: dict[str, Any], tool: Tool) -> str:
    """The route's own summary and description (one text for the route and its tool)."""
    operation = operation_of(openapi, tool)
    return f"{operation['summary']}: {tool.method} {tool.path}. {operation['description']}"


def _parameters(operation: dict[str, Any]) -> list[dict[str, Any]]:
    """The path and query parameters (headers, the key among them, are the transport's); an
    exploded object one (at most one of role_id, script_role_id) as its properties, which
    are its query parameters on the wire."""
    found: list[dict[str, Any]] = []
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        if parameter["in"] == "query" and parameter.get("explode") and "properties" in schema:
            found.extend(
                {"name": name, "in": "query", "schema": field}
                for name, field in schema["properties"].items()
            )
        elif parameter["in"] in ("path", "query"):
            found.append(parameter)
    return found


def _body(operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any] | None:
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema is None:
        return None
    if "$ref" in schema:
        schema = components[schema["$ref"].removeprefix(COMPONENT_REF)]
    return dict(schema)


def _fields(body: dict[str, Any]) -> dict[str, Any]:
    """The body's fields: its properties, or (a `oneOf` of whole objects, as the service's
    document writes "exactly one of") every branch's, each as the branch that does not
    null it says."""
    fields = dict(body.get("properties", {}))
    for branch in body.get("oneOf", []):
        for name, field in branch.get("properties", {}).items():
            if name not in fields or fields[name].get("type") == "null":
                fields[name] = field
    return fields


def input_schema(openapi: dict[str, Any], tool: Tool) -> dict[str, Any]:
    """The tool's arguments as one JSON Schema object: the route's parameters and its body's
    fields, the components they refer to under $defs."""
    components = openapi.get("components", {}).get("schemas", {})
    operation = operation_of(openapi, tool)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in _parameters(operation):
        schema = dict(parameter.get("schema", {}))
        if "description" in parameter:
            schema.setdefault("description", parameter["description"])
        properties[parameter["name"]] = schema
        if parameter.get("required"):
            required.append(parameter["name"])
    schema = {"type": "object"}
    body = _body(operation, components)
    if body is not None:
        properties.update(_fields(body))
        required.extend(body.get("required", []))
        # what else the body says of itself (e.g. "exactly one of" as oneOf)
        schema.update(
            (key, value)
            for key, value in body.items()
            if key not in {"properties", "required", "title", "description", "type"}
        )
    schema.update(properties=properties, required=required, additionalProperties=False)
    names = _referenced(json.dumps(schema), components)
    if names:
        schema["$defs"] = {name: components[name] for name in sorted(names)}
    return json.loads(json.dumps(schema).replace(f'"{COMPONENT_REF}', '"#/$defs/'))


def _referenced(text: str, components: dict[str, Any]) -> set[str]:
    """The components `text` refers to, and those they refer to."""
    found: set[str] = set()
    pending = [text]
    while pending:
        for part in pending.pop().split(f'"{COMPONENT_REF}')[1:]:
            name = part.split('"', 1)[0]
            if name not in found:
                found.add(name)
                pending.append(json.dumps(components[name]))
    return found


class BadArgument(ValueError):
    """An argument the route cannot even be addressed with (the route checks the rest)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class RouteCall:
    method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | None


def route_call(openapi: dict[str, Any], tool: Tool, arguments: dict[str, Any]) -> RouteCall:
    """The HTTP request a tool call is: path parameters into the path (quoted), query
    parameters into the query, the rest as the JSON body. Values are passed as given: the
    route validates them and names the field at fault."""
    operation = operation_of(openapi, tool)
    where = {p["name"]: p["in"] for p in _parameters(operation)}
    has_body = "requestBody" in operation
    path = tool.path
    query: dict[str, str] = {}
    body: dict[str, Any] = {}
    for name, value in arguments.items():
        if where.get(name) == "path":
            if value is None:
                continue
            text = _as_text(value)
            # "." too: a dot segment would move the call to another route
            path = path.replace("{" + name + "}", quote(text, safe="").replace(".", "%2E"))
        elif where.get(name) == "query":
            if value is not None:
                query[name] = _as_text(value)
        elif has_body:
            body[name] = value  # the body's model refuses fields it does not have
        else:
            raise BadArgument(name, "is not an argument of this tool")
    for name, part in where.items():
        if part == "path" and "{" + name + "}" in path:
            raise BadArgument(name, "is required")
    return RouteCall(tool.method, path, query, body if has_body else None)


def _as_text(value: Any) -> str:
    """A path or query argument as the route reads it: a whole number given as a JSON float
    (2.0: an integer to JSON Schema, and in a body) in digits."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, str) else json.dumps(value)
