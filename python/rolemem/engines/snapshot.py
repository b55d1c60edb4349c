"""A consistent read-only copy of a rolemem database, for analysts and dbt while the game runs.

DuckDB lets one process open a file for writing (and then no other process at all), so the
process that owns the file writes a snapshot: every table of the main schema as of one moment,
copied in one transaction into a new file, which is moved into place only when complete.
"""

from __future__ import annotations

from pathlib import Path

import duckdb


def write_snapshot(con: duckdb.DuckDBPyConnection, target: str | Path) -> int:
    """Copy every table of `con`'s database into the DuckDB file `target` (replaced whole);
    returns its size in bytes. Tables only: keys and sequences are not needed to read."""
    target = Path(target)
    staging = target.with_name(target.name + ".tmp")
    staging.unlink(missing_ok=True)
    with con.cursor() as cur:
        escaped = str(staging).replace("'", "''")  # a path the operator chose, not player data
        cur.execute(f"attach '{escaped}' as rolemem_snapshot")
        try:
            tables = [
                row[0]
                for row in cur.execute(
                    "select table_name from duckdb_tables() "
                    "where database_name = current_database() and schema_name = 'main' "
                    "and not temporary order by table_name"
                ).fetchall()
            ]
            cur.execute("begin")  # every table as of the same moment
            for table in tables:
                name = '"' + table.replace('"', '""') + '"'  # a catalog name, quoted
                cur.execute(f"create table rolemem_snapshot.{name} as select * from main.{name}")
            cur.execute("commit")
        finally:
            cur.execute("detach rolemem_snapshot")
    staging.replace(target)  # readers never see a half-written snapshot
    return target.stat().st_size
