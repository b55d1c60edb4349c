#!/usr/bin/env bash
# Every test: pytest, then dbt build (models, data tests, unit tests, singular tests) and docs,
# on a database of their own so a developer's rolemem.duckdb is left alone.
source "$(dirname "$0")/_venv.sh"
ruff check python tests bench
python -m pytest "$@"
mkdir -p target
export ROLEMEM_DB="$PWD/target/test.duckdb"
rm -f "$ROLEMEM_DB"
rolemem init-db --demo
dbt build
dbt docs generate --quiet
echo "dbt build and docs: ok"
