"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests, benchmarks
and offline demos: a real HTTP server speaking the protocol, answering from a script.

    with ScriptedChatServer(['{"events": [], "entities": []}', Status(500)]) as server:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model="scripted")

A script item is the reply content (str), `Status(code)` (an HTTP error), `Delay(seconds,
then)` or `Trickle(seconds)` (a whole answer sent a byte every `seconds`: a server that is
never idle long enough for a per-read timeout). When the script runs out,
`responder(request_body)` answers (default: no memories).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

EMPTY_REPLY = '{"events": [], "entities": []}'


@dataclass(frozen=True)
class Status:
    """Answer with this HTTP status and an OpenAI-style error body."""

    code: int


@dataclass(frozen=True)
class Delay:
    """Wait `seconds`, then answer with `then`."""

    seconds: float
    then: ScriptItem = EMPTY_REPLY


@dataclass(frozen=True)
class Trickle:
    """Answer 200 with an empty reply, its body sent a byte every `seconds`."""

    seconds: float


ScriptItem = Union[str, Status, Delay, Trickle]  # noqa: UP007 - used at runtime in a dataclass default


class ScriptedChatServer:
    """POST /v1/chat/completions answered from a script; every request body is kept."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        responder: Callable[[dict[str, Any]], ScriptItem] | None = None,
    ) -> None:
        self.script: deque[ScriptItem] = deque(script)
        self.responder = responder or (lambda request: EMPTY_REPLY)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *items: ScriptItem) -> None:
        with self._lock:
            self.script.extend(items)

    def start(self) -> ScriptedChatServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, request: dict[str, Any]) -> ScriptItem:
        with self._lock:
            self.requests.append(request)
            if self.script:
                return self.script.popleft()
        return self.responder(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                item = server._next(request)
                while isinstance(item, Delay):
                    time.sleep(item.seconds)
                    item = item.then
                if isinstance(item, Trickle):
                    body = {"choices": [{"message": {"content": EMPTY_REPLY}}]}
                    self._send(200, body, every=item.seconds)
                    return
                if isinstance(item, Status):
                    self._send(
                        item.code, {"error": {"message": "scripted error", "type": "server_error"}}
                    )
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": item},
                            }
                        ],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    },
                )

            def _send(self, code: int, body: dict[str, Any], every: float = 0.0) -> None:
                """`body` as JSON; `every` > 0: a byte at a time, `every` seconds apart."""
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    for chunk in [bytes([byte]) for byte in data] if every else [data]:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        time.sleep(every)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout or deadline test)

        return Handler
