#!/usr/bin/env bash
# The main job: demo data into the embedded DuckDB, dbt build, one character's memory as JSON.
source "$(dirname "$0")/_venv.sh"
export ROLEMEM_DB="${ROLEMEM_DB:-rolemem.duckdb}"
rolemem init-db --demo
dbt build --quiet
rolemem memory --save 2 --role 1
