"""A type's schema as a named component of the OpenAPI document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import CoreSchema

# where OpenAPI keeps the named schemas (the MCP tools resolve the same references)
COMPONENT_REF = "#/components/schemas/"


@dataclass(frozen=True)
class Component:
    """`Annotated[T, Component(name, written)]`: T validates as before; its schema is the
    component `name` (pydantic names only models and enums), `written(generated)` when given
    (the schema T generates, for a type whose JSON Schema says more than its validation)."""

    name: str
    written: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        inner: CoreSchema = handler(source)

        def schema(_: CoreSchema, generate: GetJsonSchemaHandler) -> dict[str, Any]:
            generated = generate(inner)  # the components `inner` names, declared too
            if self.written is not None:
                generated = self.written(generated)
            return {"title": self.name, **generated}

        metadata = {**inner.get("metadata", {}), "pydantic_js_functions": [schema]}
        return {**inner, "ref": self.name, "metadata": metadata}
