"""A dbt-duckdb plugin (profiles.yml names it): `dbt build` on a DuckDB file another process
owns (a running `rolemem serve`) stops with one line naming `rolemem snapshot`.

Without it dbt-duckdb prints two tracebacks: its error handler, rolling back after the failed
open, opens the file a second time. The plugin opens the file once before dbt-duckdb does and
turns DuckDB's lock error into the RuntimeError dbt-duckdb reports as a connection error."""

from __future__ import annotations

from typing import Any

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin


def owner_message(path: str, error: str) -> str:
    """The one line for a file `error` (DuckDB's lock error) says another process holds."""
    holder = error.split("Conflicting lock is held in", 1)[-1].split(". See", 1)[0].strip()
    return (
        f"{path} is open in another process ({holder}): dbt builds on a snapshot. "
        "`rolemem snapshot --url http://HOST:PORT` asks the service that owns the file to "
        "write its (serve --snapshot PATH); then `ROLEMEM_DB=PATH dbt build`"
    )


class Plugin(BasePlugin):
    def update_connection_config(self, creds: Any, config: dict[str, Any]) -> None:
        path = str(creds.path)
        if path == ":memory:" or ":" in path.split("/")[0]:  # in memory, or md:, s3:, …
            return
        try:
            duckdb.connect(path, config=config).close()
        except duckdb.IOException as exc:
            if "Could not set lock" not in str(exc):
                raise
            raise RuntimeError(owner_message(path, str(exc))) from None
