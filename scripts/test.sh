#!/usr/bin/env bash
# Every test: lint and types, the docs site, then pytest (dbt build with its data, unit and
# singular tests and dbt docs among them, on databases of their own: a developer's
# rolemem.duckdb is left alone).
source "$(dirname "$0")/_venv.sh"
# the page tests drive a real headless Chromium from the system packages; without one (no apt,
# no root) they are skipped with the reason
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    (apt-get install -y -qq chromium >/dev/null 2>&1 \
        || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) \
        || echo "chromium could not be installed: the page tests will be skipped"
fi
# numpy's OpenBLAS with one thread: rolemem's products are small (a player's vectors against a
# query), and on two busy cores its spinning threads took 2.7x the wall time and 4x the CPU
# of one thread
export OPENBLAS_NUM_THREADS=1
# rolemem's bytecode written once: where PYTHONDONTWRITEBYTECODE is set (as on CI machines) every
# process the tests start (CLI, serve workers, dbt's plugin) would compile the package again
python -m compileall -q python/rolemem
ruff check python tests bench
ruff format --check python tests bench
# mypy (a minute and a half without its cache, one core) beside the other checks
typed="$(mktemp)"
mypy > "$typed" 2>&1 &
typing=$!
vulture python/rolemem scripts/vulture_whitelist.py --min-confidence 80
sqlfluff lint models tests/dbt
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir "$site"  # the docs site, offline
rm -rf "$site"
wait "$typing" || { cat "$typed"; exit 1; }
cat "$typed" && rm "$typed"
# test files on two workers (a file's tests stay together: its module fixtures are built once);
# `dbt build` and `dbt docs generate` on the demo run among them (tests/python/test_postgres_dbt.py)
python -m pytest -n 2 "$@"
