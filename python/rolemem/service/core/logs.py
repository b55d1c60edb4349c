"""The service's log lines: time (UTC, ms), level, logger, message, the request id of the request
being served, and structured fields (`extra={"fields": {...}}`), as text or one JSON object
per line for log shippers. `rolemem serve` installs this configuration (`logging_config`);
the library itself configures nothing and stays quiet."""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

# the id of the request this code serves (request threads inherit it: Store.run carries the
# context), "-" outside a request
request_id: ContextVar[str] = ContextVar("rolemem_request_id", default="-")

# the modules that log them (getLogger(__name__)): names log shippers filter on
ACCESS_LOGGER = "rolemem.service.core.access"
SERVE_LOGGER = "rolemem.cli.serve"
KEYS_LOGGER = "rolemem.service.core.keys"


def _time(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


def _request_id(record: logging.LogRecord) -> str:
    # set by RequestIdFilter; a record formatted without it (another handler) reads the var
    return str(getattr(record, "request_id", None) or request_id.get())


class RequestIdFilter(logging.Filter):
    """Stamps each record with the request id of the context that logged it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


def _text_value(value: Any) -> str:
    if isinstance(value, str) and value and not any(c.isspace() or c in '"=' for c in value):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


class TextFormatter(logging.Formatter):
    """`<time> <LEVEL> <logger> <message> key=value… request_id=<id>`: one line per record (a
    traceback, when asked for, on the lines after: logging.Formatter.format adds it)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        fields = {**_fields(record), "request_id": _request_id(record)}
        return " ".join(
            [
                _time(record),
                record.levelname,
                record.name,
                record.message,
                *(f"{key}={_text_value(value)}" for key, value in fields.items()),
            ]
        )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, then the fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": _request_id(record),
            **_fields(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(
    log_format: Literal["text", "json"] = "text", *, access_log: bool = True, verbose: bool = False
) -> dict[str, Any]:
    """The `logging.config.dictConfig` of `rolemem serve` (uvicorn applies it again in each
    worker process): rolemem's warnings and errors, its start-up line, the access log unless
    turned off (`verbose`: rolemem's info lines too); uvicorn's own lines at warning and above,
    in the same format."""
    formatter = TextFormatter if log_format == "text" else JsonFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": f"{__name__}.RequestIdFilter"}},
        "formatters": {"rolemem": {"()": f"{formatter.__module__}.{formatter.__name__}"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "rolemem",
                "filters": ["request_id"],
            }
        },
        "loggers": {
            "rolemem": {
                "handlers": ["stderr"],
                "level": "INFO" if verbose else "WARNING",
                "propagate": False,
            },
            SERVE_LOGGER: {"level": "INFO"},
            KEYS_LOGGER: {"level": "INFO"},  # a key file reloaded: who may call changed
            ACCESS_LOGGER: {"level": "INFO" if access_log else "WARNING"},
            "uvicorn": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
            "uvicorn.error": {"level": "WARNING"},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }
