#!/usr/bin/env bash
# The main job: demo data into the embedded DuckDB, dbt build, one character's memory as JSON.
# ROLEMEM_DB=postgresql://… runs the same on a PostgreSQL database (dbt's postgres target).
source "$(dirname "$0")/_venv.sh"
export ROLEMEM_DB="${ROLEMEM_DB:-rolemem.duckdb}"
target=()
if [[ "$ROLEMEM_DB" == postgres*://* ]]; then
    eval "$(python -m rolemem.engines.postgres_setup "$ROLEMEM_DB")"  # ROLEMEM_PG_* for dbt
    target=(--target postgres)
fi
rolemem init-db --demo
dbt build --quiet ${target[@]+"${target[@]}"}
rolemem memory --save 2 --role 1
