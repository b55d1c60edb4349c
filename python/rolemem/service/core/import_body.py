"""The body of a bulk import (`POST /saves/{id}/import`, NDJSON), read before the request
guard, which holds every other body to `max_body_bytes`: an import has limits of its own, in
bytes and in lines (413 as soon as the body passes one, before any work). Its lines, each
strict JSON as every JSON body (`guard.check_json`), are parsed off the event loop and handed
to the route in the request's state; the guard behind sees an empty body."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from .guard import (
    BodyLimits,
    Invalid,
    check_json,
    first_values,
    read_body,
    refuse,
    replaying,
)
from .settings import ServiceSettings

# where the route finds the parsed lines (request.state.import_rows)
ROWS = "import_rows"
NDJSON = (b"application/x-ndjson", b"application/jsonl", b"application/x-jsonlines")
_PATH = re.compile(r"^/saves/[^/]+/import$")


def parse_lines(body: bytes) -> list[Any]:
    """The body's non-blank lines, each strict JSON (Invalid naming `lines[i]...`)."""
    rows: list[Any] = []
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        at = f"lines[{len(rows)}]"
        try:
            rows.append(check_json(line))
        except Invalid as exc:
            raise Invalid(f"{at}.{exc.field}" if exc.field else at, str(exc)) from None
    return rows


class ImportBodies:
    def __init__(self, app: ASGIApp, *, settings: ServiceSettings) -> None:
        self.app = app
        self.max_lines = max_lines = settings.import_max_lines
        self.too_many_lines = f"the import holds more lines than the service accepts ({max_lines})"
        max_bytes = settings.import_max_bytes
        too_large = f"the import is larger than the service accepts ({max_bytes} bytes)"
        # as the request guard: the whole body within the body deadline of the headers (the
        # key, the player and the rates were the gate's, before any of the body was read)
        self.limits = BodyLimits(
            settings.body_timeout, max_bytes, too_large, max_lines, self.too_many_lines
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and _PATH.match(scope["path"])
            and _content_type(scope) in NDJSON
        ):
            await self.app(scope, receive, send)  # the route refuses other content types
            return
        body = await read_body(scope, receive, send, first_values(scope), self.limits)
        if body is None:
            return
        try:  # parsing megabytes takes a while: never on the event loop
            rows = await asyncio.to_thread(parse_lines, body)
        except Invalid as exc:
            await exc.response()(scope, receive, send)
            return
        if len(rows) > self.max_lines:  # the whole body is read: nothing to discard
            await refuse(scope, receive, send, {}, 413, "PayloadTooLarge", self.too_many_lines)
            return
        headers = [
            (name, value)
            for name, value in scope.get("headers") or []
            if name not in (b"content-length", b"content-type", b"transfer-encoding")
        ]
        inner = {
            **scope,
            "headers": [*headers, (b"content-length", b"0")],
            "state": {**scope.get("state", {}), ROWS: rows},
        }
        await self.app(inner, replaying(b"", receive), send)


def _content_type(scope: Scope) -> bytes:
    return bytes(first_values(scope).get(b"content-type", b"").split(b";")[0].strip().lower())
