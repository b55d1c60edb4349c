"""The LLM behind extraction and consolidation: any OpenAI-compatible chat-completions server,
reached with the `openai` client. Timeouts and retries are explicit; failures become
`LLMError` naming the server, never an engine exception.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, Protocol

from ..errors import RolememError

log = logging.getLogger(__name__)


class LLMError(RolememError):
    """The LLM server could not be reached or answered with an error."""


class ChatModel(Protocol):
    """What extraction needs from an LLM: a model name and one chat completion as text."""

    model: str

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class OpenAICompatibleLLM:
    """Chat completions from an OpenAI-compatible server (`POST {base_url}/chat/completions`).

    `base_url`, `model` and `api_key` default to `ROLEMEM_LLM_BASE_URL`, `ROLEMEM_LLM_MODEL`
    and `ROLEMEM_LLM_API_KEY`. `max_retries` are the client's own retries of connection errors,
    429 and 5xx answers (with back-off) inside one `complete` call; `timeout` is per request.
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
        # a local server needs no key, but the client insists on one
        key = api_key or os.environ.get("ROLEMEM_LLM_API_KEY") or "not-needed"
        self._client = openai.OpenAI(
            base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries
        )

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        import openai

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
        content = _first_content(response)
        if content is None:
            raise LLMError(f"{self.base_url}: the LLM answered without message content")
        return content


def _first_content(response: Any) -> str | None:
    try:
        return response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None
