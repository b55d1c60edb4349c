"""The LLM behind extraction and consolidation: any OpenAI-compatible chat-completions server,
reached with the `openai` client. Timeouts and retries are explicit; failures become
`LLMError` naming the server, never an engine exception.

A call has a total deadline (`timeout`): the `openai` client's own timeout is httpx's, per
phase (a read waits at most that long for the next bytes), so a server that trickles a byte a
second would hold a call for ever. Every read and write of the call's sockets is bounded by the
time left (`_Deadlined`, under httpx's transport), so the call is abandoned at its deadline
whatever the server does (docs/decisions/service-machinery.md).
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..errors import RolememError


class LLMError(RolememError):
    """The LLM server could not be reached or answered with an error."""


# when the LLM call under way in this context must end (time.monotonic()); None: no deadline
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "rolemem_llm_deadline", default=None
)


class _Deadlined:
    """An HTTP core's network backend, or a stream it opened, whose every call that waits
    (connect, read, write, TLS) waits at most the call's time left, the streams it opens
    bounded too; past the deadline, the HTTP core's own ReadTimeout (`timed_out`: its client
    maps it to a timeout). Everything else is the wrapped object's own."""

    def __init__(self, inner: Any, timed_out: type[Exception]) -> None:
        self._inner = inner
        self._timed_out = timed_out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _left(self, timeout: float | None) -> float | None:
        deadline = _DEADLINE.get()
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out("the LLM call's deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return bytes(self._inner.read(max_bytes, self._left(timeout)))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout))

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        stream = self._inner.start_tls(ssl_context, server_hostname, self._left(timeout))
        return _Deadlined(stream, self._timed_out)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        stream = self._inner.connect_tcp(
            host, port, self._left(timeout), local_address, socket_options
        )
        return _Deadlined(stream, self._timed_out)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> Any:
        stream = self._inner.connect_unix_socket(path, self._left(timeout), socket_options)
        return _Deadlined(stream, self._timed_out)


def _deadline_client(timeout: float) -> Any:
    """The `openai` client's own HTTP client class (httpx, or the httpx2 fork newer clients
    use), its pool's sockets under _Deadlined. The client takes no network backend, so
    the pool's is wrapped before any connection is made."""
    import importlib

    import openai

    client_class = openai.DefaultHttpxClient
    http = importlib.import_module(client_class.__mro__[1].__module__.partition(".")[0])
    transport = http.HTTPTransport()
    pool = transport._pool
    assert hasattr(pool, "_network_backend"), "the HTTP core's pool changed: _deadline_client"
    core = importlib.import_module(type(pool).__module__.partition(".")[0])
    pool._network_backend = _Deadlined(pool._network_backend, core.ReadTimeout)
    return client_class(transport=transport, timeout=timeout)


class ChatModel(Protocol):
    """What extraction needs from an LLM: a model name and one chat completion as text."""

    model: str

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class OpenAICompatibleLLM:
    """Chat completions from an OpenAI-compatible server (`POST {base_url}/chat/completions`).

    `base_url`, `model` and `api_key` default to `ROLEMEM_LLM_BASE_URL`, `ROLEMEM_LLM_MODEL`
    and `ROLEMEM_LLM_API_KEY`. `max_retries` are the client's own retries of connection errors,
    429 and 5xx answers (with back-off) inside one `complete` call; `timeout` is the whole
    call's deadline (connecting, sending, every byte of the answer, the retries included).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float = 0.2,
    ) -> None:
        base_url = base_url or os.environ.get("ROLEMEM_LLM_BASE_URL")
        model = model or os.environ.get("ROLEMEM_LLM_MODEL")
        if not base_url:
            raise LLMError("no LLM server: pass base_url or set ROLEMEM_LLM_BASE_URL")
        if not model:
            raise LLMError("no LLM model: pass model or set ROLEMEM_LLM_MODEL")
        import openai

        self.base_url = base_url
        self.model = model
        self.temperature = temperature
        self.timeout = timeout
        # a local server needs no key, but the client insists on one
        key = api_key or os.environ.get("ROLEMEM_LLM_API_KEY") or "not-needed"
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=key,
            timeout=timeout,
            max_retries=max_retries,  # its own (429, 5xx, Retry-After): not rolemem.retry
            http_client=_deadline_client(timeout),
        )

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        import openai

        token = _DEADLINE.set(time.monotonic() + self.timeout)
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=self.temperature,
            )
        except openai.APIStatusError as exc:
            raise LLMError(f"{self.base_url}: HTTP {exc.status_code} from the LLM") from None
        except openai.APITimeoutError:
            raise LLMError(f"{self.base_url}: the LLM timed out") from None
        except openai.APIError as exc:
            raise LLMError(f"{self.base_url}: {type(exc).__name__}: {exc}") from None
        finally:
            _DEADLINE.reset(token)
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            content = None
        if content is None:
            raise LLMError(f"{self.base_url}: the LLM answered without message content")
        return content
