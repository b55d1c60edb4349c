# Sourced by the other scripts: repo root, offline-safe dbt settings, and an up-to-date .venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export DBT_SEND_ANONYMOUS_USAGE_STATS=false DO_NOT_TRACK=1 DBT_PROFILES_DIR="$PWD"

python_bin="$(command -v python3.11 || command -v python3)"
if [ ! -x .venv/bin/python ]; then
    "$python_bin" -m venv .venv
fi
# Reinstall only when the dependency list changed since the last install.
if [ ! -f .venv/.rolemem-installed ] || [ pyproject.toml -nt .venv/.rolemem-installed ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[dev]'
    touch .venv/.rolemem-installed
fi
export PATH="$PWD/.venv/bin:$PATH"
