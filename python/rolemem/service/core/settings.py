"""Every option of `rolemem serve`, defined once: a field here is a flag (`max_body_bytes` is
`--max-body-bytes`), an environment variable (`ROLEMEM_MAX_BODY_BYTES`, pydantic-settings' own)
and a row of docs/service.md's option table, its description their help. A flag beats its
variable, a variable the default. Every request is bounded in size and time by these."""

from __future__ import annotations

import argparse
import os
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from ...errors import RolememError
from .quotas import Rate

_PREFIX = "ROLEMEM_"
_SECONDS: Any = {"metavar": "SECONDS"}
_RATE: Any = {"metavar": "N/s|N/min"}
_Positive = Annotated[int, Field(ge=1)]
_Count = Annotated[int, Field(ge=0)]


def _seconds(default: float, description: str) -> Any:
    """A positive number of seconds."""
    return Field(default, gt=0, description=description, json_schema_extra=_SECONDS)


class ServiceSettings(BaseSettings):
    """The keys and limits of one service (`create_app(settings=…)`); its variables are read
    as `serve` reads them, keywords beating them."""

    model_config = SettingsConfigDict(env_prefix=_PREFIX, env_ignore_empty=True, frozen=True)

    api_key: str | None = Field(
        None, description="the key X-API-Key must be on every route but the probes and the docs"
    )
    designer_key: str | None = Field(
        None, description="the key of the designer routes (/official, /config), else the API key"
    )
    keys_file: str | None = Field(
        None,
        description="a TOML key file: [[keys]] tables with name, secret (or sha256:<hex> of it), "
        "role (game, designer or admin) and optional players (a glob the request's user_id must "
        "match); read again within 2 s of a change (a file that fails keeps the keys in force); "
        "added to the API and designer keys",
        json_schema_extra={"flag": "--keys", "metavar": "FILE"},
    )
    player_rate: str | None = Field(
        None,
        description="at most N requests a second or a minute per player (the request's "
        "user_id), in each process; past it, 429 with Retry-After",
        json_schema_extra=_RATE,
    )
    key_rate: str | None = Field(
        None,
        description="at most N requests a second or a minute per key, in each process; past "
        "it, 429",
        json_schema_extra=_RATE,
    )
    max_body_bytes: _Positive = Field(
        1024 * 1024, description="larger bodies are refused with 413 before they are read"
    )
    header_timeout: float = _seconds(
        10.0,
        "a request's headers must arrive within this of the connection opening (or "
        "of the previous answer); else 408 and the connection is closed",
    )
    body_timeout: float = _seconds(
        15.0, "a request's body must arrive within this of its headers; else 408"
    )
    send_timeout: float = _seconds(
        30.0,
        "a client must take at least 32 KiB of an answer the service still holds every this "
        "many seconds; else its connection is reset and the answer dropped",
    )
    max_connections: _Positive = Field(
        1000,
        description="open connections per process (fewer if the open-file limit is lower); at "
        "the cap the one waiting longest for its headers is closed",
    )
    # past either limit a bulk import is refused as soon as the body says so, before any work
    import_max_bytes: _Positive = Field(
        20 * 1024 * 1024,
        description="a bulk import (POST /saves/{id}/import) larger than this is refused with 413",
    )
    import_max_lines: _Positive = Field(
        50_000, description="a bulk import of more lines is refused with 413"
    )
    request_timeout: float = _seconds(
        10.0,
        "time budget of reads and recalls (every GET that reads the store but the exports, "
        "/turn, /query, /recall, /expand_words); past it, 503",
    )
    request_threads: _Positive = Field(8, description="threads doing requests' engine work")
    # requests already run side by side on the request threads, and per-turn statements are
    # planning-bound, so splitting each one over the cores only adds task switching (1 gave
    # 4-31% more turns/s at 8 clients on 2 cores); maintenance and snapshots run on these too
    engine_threads: _Positive = Field(
        1, description="DuckDB threads per statement; requests already run side by side"
    )
    max_batch: _Positive = Field(
        8,
        description="recalls waiting while one runs are answered by the next statement, at most "
        "this many (1: one statement each)",
    )
    extraction_threads: _Positive = Field(
        2, description="extraction (LLM) workers, apart from requests"
    )
    extraction_queue: _Count = Field(
        64, description="batches that may wait for a worker; when full, the next append retries"
    )
    # the back-off is stored in memory_loop_state, so it holds in every process
    extraction_retry_seconds: float = _seconds(
        30.0,
        "back-off after an extraction's first failure, doubled for each next; no "
        "attempt before it ends, whatever the appends",
    )
    extraction_retries: _Count = Field(
        3,
        description="attempts in a row (each one LLM call) before a failing batch rests for its "
        "back-off; only an append after it tries again",
    )
    shutdown_grace: float = _seconds(5.0, "how long SIGTERM waits for requests in flight")
    idempotency_hours: float = Field(
        24.0,
        gt=0,
        description="an Idempotency-Key answers the same request again for at least this long",
        json_schema_extra={"metavar": "HOURS"},
    )
    open_ownerless_saves: bool = Field(
        False,
        description="saves without an owner are open to every player (only for a game that "
        "keeps ownership itself; by default they are refused)",
    )
    webhooks: tuple[str, ...] = Field(
        (),
        description="POST the service's events here, signed (repeatable): extraction.succeeded, "
        "extraction.failed, maintenance.finished, player.purged (the variable: a JSON list)",
        json_schema_extra={"flag": "--webhook", "metavar": "URL"},
    )
    webhook_secret: str | None = Field(
        None, validate_default=True, description="the secret webhooks are signed with"
    )
    webhook_retries: _Count = Field(
        5, description="times a failed delivery is tried again before it is kept to be replayed"
    )
    webhook_backoff: float = _seconds(
        1.0, "wait after a delivery's first failure, doubled for each next"
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:  # one line naming the field and what would be valid
            error = exc.errors()[0]
            field = str(error["loc"][0])
            context = error.get("ctx", {})
            problem = {
                "greater_than_equal": f"must be at least {context.get('ge')}",
                "greater_than": "must be a positive number",
                "value_error": str(context.get("error")),
                "extra_forbidden": "is not a setting",
            }.get(error["type"])
            if problem is None:  # a value of another type
                problem = error["msg"].replace("Input should be", "must be")
                problem += f", not {error['input']!r}"
            raise RolememError(f"{field} {problem}", field=field) from None

    @field_validator("keys_file")
    @classmethod
    def _absolute(cls, path: str | None) -> str | None:
        return path and os.path.abspath(path)  # --workers: each worker reads the same file

    @field_validator("player_rate", "key_rate")
    @classmethod
    def _rate(cls, text: str | None, info: ValidationInfo) -> str | None:
        if text is not None:
            Rate.parse(text, str(info.field_name))
        return text

    @field_validator("webhooks")
    @classmethod
    def _urls(cls, urls: tuple[str, ...]) -> tuple[str, ...]:
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"must be http(s)://… URLs: {url!r}")
        return urls

    @field_validator("webhook_secret")
    @classmethod
    def _signs(cls, secret: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("webhooks") and not secret:
            raise ValueError("must be given to sign the webhooks with")
        return secret


class ServeSettings(ServiceSettings):
    """The service's settings and the process's (store, address, workers, schedules, logs, LLM)."""

    db: str | None = Field(
        None, description="the DuckDB file (else ./rolemem.duckdb), or a postgresql:// URL"
    )
    host: str = Field("127.0.0.1", description="the address to listen on")
    port: int = Field(8000, description="the port to listen on")
    workers: _Positive = Field(
        1, description="service processes (PostgreSQL only: one process owns a DuckDB file)"
    )
    snapshot: str | None = Field(None, description="where POST /snapshot writes a read-only copy")
    snapshot_every: float | None = Field(
        None,
        description="also write the snapshot on this schedule (needs --snapshot)",
        json_schema_extra=_SECONDS,
    )
    maintain_every: float | None = Field(
        None,
        description="run maintenance (cleanup, consolidation) on this schedule, one run at a "
        "time across the store's processes (POST /admin/maintenance runs one now)",
        json_schema_extra=_SECONDS,
    )
    keyword_only: bool = Field(False, description="no embedder: recall by words and time")
    log_format: Literal["text", "json"] = Field(
        "text",
        description="log lines on stderr as text or as one JSON object each, for log shippers",
        json_schema_extra={"metavar": "text|json"},
    )
    access_log: bool = Field(
        True, description="the log line per request (method, route, status, duration, request id)"
    )
    llm_base_url: str | None = Field(
        None,
        description="the OpenAI-compatible server extraction calls (.../v1); none: lines are "
        "stored, not extracted",
    )
    llm_model: str | None = Field(None, description="the LLM's model name")
    llm_timeout: float = _seconds(
        30.0, "the whole of one LLM call, connecting to the answer's last byte"
    )

    def service(self) -> dict[str, Any]:
        """The service's settings (JSON-ready), as `ServiceSettings(**…)` takes them."""
        return self.model_dump(mode="json", include=set(ServiceSettings.model_fields))


def _extra(field: FieldInfo) -> dict[str, Any]:
    return field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}


def _options() -> dict[str, tuple[FieldInfo, str, str, str]]:
    """Each field's (field, flag, default shown, what): the process's first, then the service's."""
    service = ServiceSettings.model_fields
    own = {name: field for name, field in ServeSettings.model_fields.items() if name not in service}
    options = {}
    for name, field in {**own, **service}.items():
        negated = field.default is True
        flag = "--" + ("no-" if negated else "") + name.replace("_", "-")
        hidden = isinstance(field.default, bool) or field.default in (None, ())
        what = ("turns off " if negated else "") + str(field.description)
        flag = str(_extra(field).get("flag", flag))
        options[name] = (field, flag, "" if hidden else str(field.default), what)
    return options


def add_flags(parser: argparse.ArgumentParser) -> None:
    """`serve`'s flags, one per field, each with its variable and default in its help; a flag
    not given stays out of the namespace (its variable or default holds)."""
    for name, (field, flag, default, what) in _options().items():
        help_text = f"{what} (${_PREFIX}{name.upper()}"
        help_text += f"; default: {default})" if default else ")"
        options: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS}
        if field.annotation is bool:
            options["action"] = "store_false" if field.default else "store_true"
        else:
            options["metavar"] = _extra(field).get("metavar")
            options["action"] = "append" if field.annotation == tuple[str, ...] else "store"
        parser.add_argument(flag, help=help_text.replace("%", "%%"), **options)


def from_flags(args: argparse.Namespace) -> ServeSettings:
    """The settings `serve`'s flags give, over the variables; a refused value is one line
    naming its flag (or its variable)."""
    fields = ServeSettings.model_fields
    given = {name: value for name, value in vars(args).items() if name in fields}
    try:
        return ServeSettings(**given)
    except RolememError as exc:
        if exc.field not in fields:
            raise
        variable = _PREFIX + exc.field.upper()
        from_variable = exc.field not in given and os.environ.get(variable)
        where = f"${variable}" if from_variable else _options()[exc.field][1]
        raise RolememError(str(exc).replace(exc.field, where, 1), field=exc.field) from None


def options_table() -> str:
    """docs/service.md's table of `serve`'s options (a test keeps the page's equal to it)."""
    rows = ["| flag | variable | default | what |", "|---|---|---|---|"]
    for name, (_, flag, default, what) in _options().items():
        what = what.replace("|", "\\|").replace("<", "&lt;")
        rows.append(
            f"| `{flag}` | `{_PREFIX}{name.upper()}` | {default and f'`{default}`'} | {what} |"
        )
    return "\n".join(rows)
