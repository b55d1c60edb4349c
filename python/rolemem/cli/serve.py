"""What `rolemem serve` says when it starts: the logging it installs (the service's format, in
every worker) and one start-up line with the version, engine, store, workers, address and
settings, secrets redacted."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import logging.config
import os
import tempfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..engines.postgres_setup import is_postgres_url

REDACTED = "***"
_SECRET_PARAMETERS = {"password", "passfile", "sslpassword", "api_key", "apikey", "token"}


@contextlib.contextmanager
def metrics_directory(workers: int) -> Iterator[None]:
    """Several workers: prometheus-client's multiprocess mode, its files in a fresh directory
    removed at exit (unless PROMETHEUS_MULTIPROC_DIR names one already). Entered before
    prometheus-client is imported, which reads the variable once."""
    variable = "PROMETHEUS_MULTIPROC_DIR"
    if workers < 2 or os.environ.get(variable):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="rolemem-metrics-") as folder:
        os.environ[variable] = folder  # the workers inherit it
        try:
            yield
        finally:
            del os.environ[variable]


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name) is reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: any interface it resolves to


def open_service(host: str, keyed: bool) -> str | None:
    """What to say of a service without any key: None with a key; on loopback, the warning
    `serve` prints before it starts; elsewhere, a RolememError (serve refuses to start)."""
    if keyed:
        return None
    if not is_loopback(host):
        from ..errors import RolememError

        raise RolememError(
            f"refusing to serve without a key on {host}, which other machines may reach: "
            "give --api-key (or $ROLEMEM_API_KEY) or --keys FILE, or --host 127.0.0.1"
        )
    return (
        f"rolemem: WARNING: no key: every route is OPEN to anything that reaches {host} "
        "(--api-key or --keys to close it)"
    )


def redact_url(url: str) -> str:
    """`url` with its password (in the authority or the query) replaced by ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:{REDACTED}@{host}"
    query = urlencode(
        [
            (name, REDACTED if name.lower() in _SECRET_PARAMETERS else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="*/:",
    )
    # by hand: urlunsplit drops the empty authority of postgresql:///db
    text = f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
    return text + (f"#{parts.fragment}" if parts.fragment else "")


def announce(settings: Any, verbose: bool) -> dict[str, Any]:
    """Install the service's logging and log the start-up line (every key and password
    redacted); the logging config, which uvicorn installs in each worker too."""
    from importlib.metadata import version

    from ..service.core.logs import SERVE_LOGGER, logging_config

    config = logging_config(settings.log_format, access_log=settings.access_log, verbose=verbose)
    db, llm_url = settings.db, settings.llm_base_url
    postgres = is_postgres_url(db)
    llm = {"model": settings.llm_model, "timeout": settings.llm_timeout}
    fields = {
        "version": version("rolemem"),
        "engine": "postgres" if postgres else "duckdb",
        "store": redact_url(db) if postgres else db,
        "workers": settings.workers,
        "address": f"{settings.host}:{settings.port}",
        "embedder": None if settings.keyword_only else "default",
        "llm": {"base_url": redact_url(llm_url), **llm} if llm_url else None,
        "snapshot": settings.snapshot,
        "snapshot_every": settings.snapshot_every,
        "maintain_every": settings.maintain_every,
        "settings": {
            name: REDACTED
            if name.endswith(("_key", "_secret")) and value is not None
            else [redact_url(url) for url in value]
            if name == "webhooks"
            else value
            for name, value in settings.service().items()
        },
    }
    logging.config.dictConfig(config)
    logging.getLogger(SERVE_LOGGER).info(
        "rolemem %s starting", fields["version"], extra={"fields": fields}
    )
    return config
