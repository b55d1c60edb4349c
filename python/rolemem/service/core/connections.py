"""Connections that cost nothing when they stall: uvicorn's h11 protocol with a header
deadline (`header_timeout`, from the connection's opening or the previous answer taken: 408
and closed; uvicorn itself waits forever), a send deadline (`send_timeout`: SEND_FLOOR of an
answer taken within it, else a reset) and a cap on open connections (`max_connections`: at
the cap the one waiting longest for its headers is closed, so stalled connections never lock
out a client that sends its request; when every one is serving, a 503). A request head past
MAX_HEADER_BYTES is a 431; why uvicorn's options fall short of these, and how the send
deadline counts: docs/decisions/service-machinery.md. The body's deadline is the guard's."""

from __future__ import annotations

import array
import contextlib
import fcntl
import functools
import resource
import struct
import termios
import time
from http import HTTPStatus
from socket import SO_LINGER, SOL_SOCKET
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import error_response
from .settings import ServiceSettings

# a request's head (request line and headers) at most: h11's default, said here on purpose
MAX_HEADER_BYTES = 16 * 1024
_HEAD_TOO_LARGE = f"the request's headers are larger than {MAX_HEADER_BYTES // 1024} KiB"
# what a client must take of an answer the service holds per send deadline: below a TCP
# segment on loopback (64 KiB), as the client's acknowledgements come a segment at a time
SEND_FLOOR = 32 * 1024
# the kernel's send queue (Linux); elsewhere what the client has not taken is the transport's
# buffer alone
_OUTQ = getattr(termios, "TIOCOUTQ", None)
# open files kept for the store, logs and the like when the cap is taken from the file limit
_SPARE_FILES = 64


def _close_with(transport: Any, status: int, kind: str, message: str) -> None:
    """Write a whole HTTP/1.1 answer in the one error shape and close the connection (before
    or instead of a request, where no ASGI cycle exists)."""
    body = bytes(error_response(status, kind, message).body)
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    transport.write(head.encode("ascii") + body)
    transport.close()


class GuardedProtocol(H11Protocol):
    """Built by uvicorn through `functools.partial` (server_options), so that its limits reach
    the workers of `serve --workers N` too."""

    def __init__(
        self,
        *args: Any,
        header_timeout: float,
        send_timeout: float,
        max_connections: int,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.send_timeout = send_timeout
        self.max_connections = max_connections
        # when this connection began waiting for a request's headers; None while serving one
        self.waiting_since: float | None = None
        # the header deadline while waiting for a request, the send deadline while an answer
        # waits for the client (never both)
        self.timer: Any = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._make_room():
            _close_with(transport, 503, "Busy", "too many open connections")
            return
        self._wait_for_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 refused, in the one error shape."""
        if len(self.conn.trailing_data[0]) > MAX_HEADER_BYTES:
            _close_with(self.transport, 431, "HeadersTooLarge", _HEAD_TOO_LARGE)
        else:
            _close_with(self.transport, 400, "BadRequest", "not a valid HTTP/1.1 request")

    def handle_events(self) -> None:
        super().handle_events()
        if self.waiting_since is not None and self.cycle is not None:
            if not self.cycle.response_complete:  # a request's headers arrived
                self._stop_waiting()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._wait_if_answered()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._expect_progress(self._untaken())

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stop_waiting()
        self._wait_if_answered()

    def _wait_if_answered(self) -> None:
        """The header deadline starts once the answer has left the transport's buffer."""
        answered = self.cycle is None or self.cycle.response_complete
        if answered and not self.flow.write_paused and not self.transport.is_closing():
            self._wait_for_headers()

    def _expect_progress(self, waiting: int) -> None:
        """The send deadline: `waiting` bytes not taken yet (the header deadline stopped)."""
        self._stop_waiting()
        self.timer = self.loop.call_later(self.send_timeout, self._sent_since, waiting)

    def _untaken(self) -> int:
        """What the client has not taken: the transport's buffer and the kernel's send queue
        (the socket takes more only once a third of that queue is free, so the buffer alone
        moves in lumps of MBs however steadily the client reads)."""
        queued = array.array("i", [0])
        if _OUTQ is not None:
            with contextlib.suppress(OSError):
                fcntl.ioctl(self.transport.get_extra_info("socket").fileno(), _OUTQ, queued)
        return self.transport.get_write_buffer_size() + queued[0]

    def _sent_since(self, waiting: int) -> None:
        left = self._untaken()
        if not left:  # taken whole (the kernel's queue past the header deadline): its next
            self._wait_if_answered()
        elif left <= waiting - SEND_FLOOR:
            self._expect_progress(left)
        else:  # a reset, not close (which waits for the client to take the buffer): the
            # kernel drops what it holds too and the client learns it at once
            linger = struct.pack("ii", 1, 0)
            self.transport.get_extra_info("socket").setsockopt(SOL_SOCKET, SO_LINGER, linger)
            self.transport.abort()

    def _wait_for_headers(self) -> None:
        self._stop_waiting()
        self.waiting_since = time.monotonic()
        self.timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _stop_waiting(self) -> None:
        self.waiting_since = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _headers_late(self) -> None:
        self.timer = None
        if self.transport.is_closing():
            return
        left = self._untaken()
        if left:  # the answer is still in the kernel's queue: the send deadline's, not a 408
            self._expect_progress(left)  # behind it, read as the next request's answer
            return
        message = f"the request's headers did not arrive within {self.header_timeout:g} s"
        _close_with(self.transport, 408, "RequestTimeout", message)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for its headers; False if none is
        waiting (every other one is serving a request)."""
        waiting = [
            other
            for other in self.connections
            if isinstance(other, GuardedProtocol)
            and other is not self
            and other.waiting_since is not None
            and not other.transport.is_closing()
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda other: other.waiting_since or 0.0)
        oldest._stop_waiting()
        oldest.transport.close()
        return True


def connection_cap(wanted: int) -> int:
    """`wanted`, or fewer where the process may not open that many files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - _SPARE_FILES))


def server_options(settings: ServiceSettings) -> dict[str, Any]:
    """uvicorn's Config arguments for these settings."""
    return {
        "http": functools.partial(
            GuardedProtocol,
            header_timeout=settings.header_timeout,
            send_timeout=settings.send_timeout,
            max_connections=connection_cap(settings.max_connections),
        ),
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
    }


def head_bytes(scope: Scope) -> int:
    """The size of a request's head as it came: its request line and header lines."""
    line = len(scope["method"]) + len(scope.get("raw_path") or b"") + len(scope["query_string"])
    return line + 12 + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


class HeaderLimit:
    """A request whose head is larger than MAX_HEADER_BYTES is a 431."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and head_bytes(scope) > MAX_HEADER_BYTES:
            await error_response(431, "HeadersTooLarge", _HEAD_TOO_LARGE)(scope, receive, send)
            return
        await self.app(scope, receive, send)
